import fc from 'fast-check';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfigText } from '../../config/load.js';
import { withSettings } from '../../config/settings.js';
import { allocPageable, freePageable } from '../../cuda/host.js';
import type { UsageError } from '../../errors.js';
import { HostStageFailure } from './workers/failure.js';
import { type Handover, HandoverRun } from './handover.js';
import { type Fill, LoaderRing, LoaderRun, loaderSlots } from './loader.js';
import type { Bound } from '../../measure/bound.js';
import { cpuStageFloor, cpuStageMs, withCpuStage } from './cpu-stage.js';
import { cpuStageSummary } from './section.js';
import { workerRows } from '../../report/timeline-common.js';
import { cpuStageText } from './report.js';
import type { TracedRep } from '../../result/timeline.js';
import type { TaskResult } from './workers/timing.js';
import { WorkerPool } from './workers/pool.js';
import type { WorkerTask } from './workers/types.js';
import { runCli } from '../../../test/helpers/cli.js';
import { usageRejection } from '../../../test/helpers/rejection.js';

const fixtures = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'workers');

const BASE = `name: t
buffers:
  x: { type: float32, count: 1000, role: in }
  y: { type: float32, size: 4000B, role: out }
kernels:
  - source: scale.cu
    entry: scale
    args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }]
pipeline: { chunks: 4, streams: 2 }
`;

const load = (host: string, overrides = {}) =>
  parseConfigText(`${BASE}host: ${host}\n`, '/cfg/test.yaml', overrides).config;

const rejected = (host: string): UsageError => usageRejection(() => load(host));

describe('the host stage config', () => {
  it('reads the old form function: checksum as after: checksum on the default pool, and says so', () => {
    const config = load('{ function: checksum }');
    assert.deepEqual(config.host, {
      name: 'checksum',
      thread: 'workers',
      workers: null,
      before: null,
      slots: null,
      after: { kind: 'checksum' },
    });
    assert.ok(
      config.notes.some((n) => /old form; it now runs on worker threads as after: checksum/.test(n)),
      config.notes.join('\n'),
    );
  });

  it('keeps function: empty (the bare callback) on the JS thread, and thread: js with either function', () => {
    assert.deepEqual(load('{ function: empty }').host, { name: 'empty', thread: 'js', function: 'empty' });
    assert.deepEqual(load('{ thread: js, function: checksum, name: sum }').host, {
      name: 'sum',
      thread: 'js',
      function: 'checksum',
    });
  });

  it("resolves a module against the config file's folder, the export 'default' unless named, and takes workers and costs", () => {
    assert.deepEqual(load('{ after: { module: ./post.mjs }, workers: 3 }').host, {
      name: 'default',
      thread: 'workers',
      workers: 3,
      before: null,
      slots: null,
      after: { kind: 'module', path: '/cfg/post.mjs', export: 'default' },
    });
    assert.deepEqual(load('{ after: { cost: { msPerMiB: 2 } } }').host, {
      name: 'cost',
      thread: 'workers',
      workers: null,
      before: null,
      slots: null,
      after: { kind: 'cost', msPerMiB: 2 },
    });
  });

  it('overrides host.workers with --workers and with a sweep setting', () => {
    const host = load('{ after: checksum, workers: 2 }', { workers: 6 }).host;
    assert.ok(host?.thread === 'workers' && host.workers === 6, JSON.stringify(host));
    const loaded = parseConfigText(`${BASE}host: { after: checksum, workers: 1 }\n`, '/cfg/test.yaml');
    const set = withSettings(loaded, [{ path: 'host.workers', value: 8 }]).config.host;
    assert.ok(set?.thread === 'workers' && set.workers === 8, JSON.stringify(set));
  });

  it('reads a loader: decode before each H2D, its slots, alone or with a stage after', () => {
    assert.deepEqual(load('{ before: { decode: { msPerMiB: 0.5 } }, slots: 3 }').host, {
      name: 'decode',
      thread: 'workers',
      workers: null,
      before: { kind: 'decode', msPerMiB: 0.5 },
      slots: 3,
      after: null,
    });
    const both = load('{ before: { module: ./load.mjs, export: load }, after: checksum, workers: 2 }').host;
    assert.ok(
      both?.thread === 'workers' &&
        both.before?.kind === 'module' &&
        both.after?.kind === 'checksum' &&
        both.name === 'checksum',
      JSON.stringify(both),
    );
    assert.match(rejected('{ after: checksum, slots: 2 }').message, /slots are the loader's: give before as well/);
    assert.match(
      rejected('{ thread: js, function: checksum, before: checksum }').message,
      /before, after, workers and slots belong to thread: workers/,
    );
  });

  it('refuses a stage on workers without a function, and workers or after on the JS thread', () => {
    assert.match(rejected('{ workers: 2 }').message, /needs before \(a loader\) or after: checksum/);
    assert.match(
      rejected('{ thread: js, function: checksum, workers: 2 }').message,
      /thread: js runs `function` on the JS thread/,
    );
    assert.match(rejected('{ thread: js }').message, /thread: js needs function/);
    assert.match(rejected('{ function: checksum, after: checksum }').message, /not both/);
  });
});

/** A fake pool: answers each task at once, recording the tasks it was handed. */
function recordingPool(fail: number | null = null) {
  const tasks: WorkerTask[] = [];
  const cancelled: number[] = [];
  const submit = (task: WorkerTask): Promise<TaskResult> => {
    tasks.push(task);
    if (task.chunk === fail) return Promise.reject(new HostStageFailure(`chunk ${task.chunk} failed`));
    const at = 10 * (task.chunk ?? 0);
    return Promise.resolve({
      value: null,
      timing: { worker: (task.chunk ?? 0) % 2, queuedMs: at, startedMs: at + 1, endedMs: at + 3 },
    });
  };
  return { tasks, cancelled, submit, cancel: (generation: number) => cancelled.push(generation) };
}

const handovers = (chunks: number): Handover[] =>
  Array.from({ length: chunks }, (_, chunk) => ({ chunk, task: { fn: 'f', chunk, regions: [] } }));

const NOT_READY = 600;

/** A hand-over on the recording pool; `query` answers for each handover's event, and `raised` records the wake-ups. */
function handoverRun(
  pool: ReturnType<typeof recordingPool>,
  chunks: number,
  generation = 7,
  query: (index: number) => number = () => 0,
) {
  const raised: Array<[number, number]> = [];
  let turn = 0;
  const run = new HandoverRun(handovers(chunks), {
    submit: pool.submit,
    waitFor: (index, g) => ({ kind: 'flag', flag: index, generation: g }),
    generation,
    cancel: pool.cancel,
    query,
    notReady: NOT_READY,
    raise: (index, g) => raised.push([index, g]),
    yieldTurn: async () => {
      turn += 1;
    },
  });
  return { run, raised, turns: () => turn };
}

describe('handing chunks to the workers', () => {
  it("submits a chunk's task when its event is issued, waiting in the worker for that event in this rep's generation, and resolves once every task finished", async () => {
    const pool = recordingPool();
    const { run } = handoverRun(pool, 4);
    assert.equal(pool.tasks.length, 0, 'nothing before its event is issued');
    for (const index of [2, 0, 1, 3]) run.issued(index);
    assert.deepEqual(
      pool.tasks.map((t) => [t.chunk, t.waitFor]),
      [2, 0, 1, 3].map((chunk) => [chunk, { kind: 'flag', flag: chunk, generation: 7 }]),
    );
    const outcome = await run.finish();
    assert.deepEqual(
      outcome.tasks.map((t) => t.chunk),
      [2, 0, 1, 3],
    );
    assert.equal(outcome.lastEndedMs, 33);
    assert.deepEqual(pool.cancelled, []);
  });

  it("a rep that failed cancels its generation's waiting tasks before awaiting them; a task's failure comes after every other settled", async () => {
    const pool = recordingPool();
    const { run } = handoverRun(pool, 2, 3);
    run.issued(0);
    await run.finish(true);
    assert.deepEqual(pool.cancelled, [3]);
    const failing = recordingPool(1);
    const { run: rejecting } = handoverRun(failing, 3);
    for (const index of [0, 1, 2]) rejecting.issued(index);
    await assert.rejects(
      rejecting.finish(),
      (error: unknown) => error instanceof HostStageFailure && error.message === 'chunk 1 failed',
    );
    assert.deepEqual(
      failing.tasks.map((t) => t.chunk),
      [0, 1, 2],
    );
  });

  it('wakes each task once the JS thread sees its event complete, in the order they complete, until every one was woken or the rep finished', async () => {
    // Turn by turn: chunk 2's event completes first (another stream), then 0, then 1 and 3; chunk 1's event failed.
    const doneAt = [1, 2, 0, 2];
    const pool = recordingPool();
    const turn: { at: () => number } = { at: () => 0 };
    const { run, raised, turns } = handoverRun(pool, 4, 5, (i) =>
      (doneAt[i] as number) <= turn.at() ? (i === 1 ? 700 : 0) : NOT_READY,
    );
    turn.at = turns;
    for (const index of [0, 1, 2, 3]) run.issued(index);
    await run.watch();
    assert.equal(turns(), 2);
    assert.deepEqual(raised, [
      [2, 5],
      [0, 5],
      [3, 5],
    ]);
    // A rep that finished (its end event failed) stops the watch at once.
    const idle = handoverRun(recordingPool(), 2, 6, () => NOT_READY);
    idle.run.issued(0);
    const stopped = idle.run.watch();
    await idle.run.finish(true);
    await stopped;
    assert.deepEqual(idle.raised, []);
  });

  it('a task waits in its worker until its flag is raised in its generation, and a cancelled generation fails the tasks still waiting', async () => {
    const pool = await WorkerPool.open({ workers: 2, functions: { cost: { kind: 'cost', msPerMiB: 0 } }, flags: 2 });
    try {
      const generation = pool.nextGeneration();
      let ran = false;
      const waiting = pool
        .submit({ fn: 'cost', chunk: 0, regions: [], waitFor: { kind: 'flag', flag: 0, generation } })
        .then((result) => {
          ran = true;
          return result;
        });
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(ran, false, 'the task ran before its flag was raised');
      const raisedAt = performance.now();
      pool.raise(0, generation);
      const { timing } = await waiting;
      assert.ok(timing.startedMs >= raisedAt, `started ${timing.startedMs - raisedAt} ms after the flag`);
      const next = pool.nextGeneration();
      assert.equal(next, generation + 1);
      const abandoned = pool.submit({
        fn: 'cost',
        chunk: 1,
        regions: [],
        waitFor: { kind: 'flag', flag: 1, generation: next },
      });
      pool.cancel(next);
      await assert.rejects(
        abandoned,
        (error: unknown) =>
          error instanceof HostStageFailure &&
          /chunk 1 in worker \d: cancelled: the rep it belonged to failed/.test(error.message),
      );
      // The flag of the earlier generation does not let a later task through.
      const later = pool.nextGeneration();
      const held = pool.submit({
        fn: 'cost',
        chunk: 2,
        regions: [],
        waitFor: { kind: 'flag', flag: 0, generation: later },
      });
      let settled = false;
      void held.finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(settled, false);
      pool.raise(0, later);
      await held;
      assert.throws(() => pool.raise(2, later), /the pool has no flag 2/);
    } finally {
      await pool.close();
    }
    assert.equal(pool.running, 0);
  });

  it('a function that throws in a worker fails the rep with exit 4, naming the chunk, the worker and the message', async () => {
    const pointer = allocPageable(64);
    after(() => freePageable(pointer));
    const pool = await WorkerPool.open({
      workers: 1,
      functions: { reject: { kind: 'module', path: join(fixtures, 'stage.mjs'), export: 'reject' } },
      flags: 1,
    });
    try {
      const run = new HandoverRun(
        [
          {
            chunk: 5,
            task: { fn: 'reject', chunk: 5, regions: [{ address: pointer, bytes: 64, buffer: 'y', offset: 0 }] },
          },
        ],
        {
          submit: (task) => pool.submit(task),
          waitFor: (flag, generation) => ({ kind: 'flag', flag, generation }),
          generation: pool.nextGeneration(),
          cancel: (generation) => pool.cancel(generation),
          query: () => 0,
          notReady: NOT_READY,
          raise: (index, generation) => pool.raise(index, generation),
        },
      );
      run.issued(0);
      await run.watch();
      await assert.rejects(
        run.finish(),
        (error: unknown) =>
          error instanceof HostStageFailure &&
          error.exitCode === 4 &&
          error.message === "host stage function 'reject' failed on chunk 5 in worker 0: corrupt record in chunk 5",
      );
    } finally {
      await pool.close();
    }
    assert.equal(pool.running, 0);
  });
});

const fills = (chunks: number): Fill[] =>
  Array.from({ length: chunks }, (_, chunk) => ({ chunk, task: { fn: 'before', chunk, regions: [] } }));

/** A fake pool whose tasks finish when the test says: finish(chunk) or fail(chunk). */
function manualPool() {
  const order: (number | null)[] = [];
  const settle = new Map<number | null, { resolve: (r: TaskResult) => void; reject: (e: unknown) => void }>();
  return {
    order,
    submit: (task: WorkerTask) =>
      new Promise<TaskResult>((resolve, reject) => {
        order.push(task.chunk);
        settle.set(task.chunk, { resolve, reject });
      }),
    finish: (chunk: number) =>
      settle
        .get(chunk)
        ?.resolve({ value: null, timing: { worker: 0, queuedMs: chunk, startedMs: chunk, endedMs: chunk + 1 } }),
    fail: (chunk: number, error: unknown) => settle.get(chunk)?.reject(error),
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the loader', () => {
  it("fills the first slots at once, and a chunk's slot for the chunk slots later only once its H2D completed", async () => {
    const pool = manualPool();
    const released = new Set<number>();
    const loader = new LoaderRun(fills(5), { slots: 2, submit: pool.submit, released: (fill) => released.has(fill) });
    assert.deepEqual(pool.order, [0, 1]);
    pool.finish(0);
    await loader.ready(0);
    // Chunk 0's H2D issued but not completed: its slot is still held.
    loader.recorded(0);
    loader.poll();
    assert.deepEqual(pool.order, [0, 1]);
    released.add(0);
    loader.poll();
    assert.deepEqual(pool.order, [0, 1, 2]);
    // A completion is counted once: polling again frees no second slot.
    loader.poll();
    assert.deepEqual(pool.order, [0, 1, 2]);
    // An H2D not yet issued in this rep is never asked about, even where its event reads complete from the rep before.
    released.add(1);
    loader.poll();
    assert.deepEqual(pool.order, [0, 1, 2]);
  });

  it('makes the issue loop wait for a fill, polling for freed slots meanwhile, and hands back every fill in order', async () => {
    const pool = manualPool();
    const released = new Set<number>();
    const loader = new LoaderRun(fills(3), { slots: 1, submit: pool.submit, released: (fill) => released.has(fill) });
    pool.finish(0);
    await loader.ready(0);
    loader.recorded(0);
    let ready1 = false;
    const waiting = loader.ready(1).then(() => {
      ready1 = true;
    });
    await turn();
    assert.deepEqual([pool.order, ready1], [[0], false]);
    released.add(0);
    await turn();
    assert.deepEqual(pool.order, [0, 1]);
    pool.finish(1);
    await waiting;
    loader.recorded(1);
    released.add(1);
    loader.poll();
    pool.finish(2);
    await loader.ready(2);
    assert.deepEqual(
      (await loader.finish()).map((f) => [f.chunk, f.timing.startedMs]),
      [
        [0, 0],
        [1, 1],
        [2, 2],
      ],
    );
  });

  it("rejects the wait for a chunk whose fill failed with the fill's error, and a fill failing unwaited-for rejects nothing else", async () => {
    const pool = manualPool();
    const loader = new LoaderRun(fills(2), { slots: 2, submit: pool.submit, released: () => true });
    const failure = new HostStageFailure("host stage function 'before' failed on chunk 1 in worker 2: bad record");
    pool.fail(1, failure);
    pool.finish(0);
    await loader.ready(0);
    await assert.rejects(loader.ready(1), (error: unknown) => error === failure);
    await assert.rejects(loader.finish(), (error: unknown) => error === failure);
  });
});

describe("the loader's ring of pinned slots", () => {
  // Three chunks of two inputs: a 40-byte and a 24-byte last chunk of x, y's chunks 16 bytes.
  const regions = [
    [
      { buffer: 'x', offset: 0, bytes: 40 },
      { buffer: 'y', offset: 0, bytes: 16 },
    ],
    [
      { buffer: 'x', offset: 40, bytes: 40 },
      { buffer: 'y', offset: 16, bytes: 16 },
    ],
    [
      { buffer: 'x', offset: 80, bytes: 24 },
      { buffer: 'y', offset: 32, bytes: 16 },
    ],
  ];

  it("holds slots × each buffer's largest chunk, not the input, and puts fill i in slot i mod slots", () => {
    const ring = new LoaderRing(2, regions);
    assert.deepEqual([ring.bytes('x'), ring.bytes('y')], [80, 32]);
    assert.deepEqual(
      [0, 1, 2].map((fill) => ring.offset(fill, 'x', regions[fill]![0]!.offset)),
      [0, 40, 0],
    );
    // A byte inside a chunk keeps its distance from the chunk's first byte; the H2D of part of a chunk finds its fill.
    assert.equal(ring.offset(1, 'y', 20), 16 + 4);
    assert.equal(ring.fillAt('x', 48, 8), 1);
    assert.equal(ring.fillAt('x', 76, 8), null, 'a copy across two chunks is no fill of the ring');
    assert.throws(() => ring.offset(2, 'x', 10), /fill 2 has no byte 10 of buffer 'x'/);
    assert.throws(() => new LoaderRing(0, regions), /at least one slot/);
  });

  it('has host.slots slots, else two a worker, and never more than its fills', () => {
    assert.equal(loaderSlots(3, 8, 16), 3);
    assert.equal(loaderSlots(null, 4, 16), 8);
    assert.equal(loaderSlots(null, 8, 5), 5);
    assert.equal(loaderSlots(10, 2, 4), 4);
  });
});

describe('the CPU stage measured and modelled', () => {
  const GPU: Bound = { term: 'link', steadyMs: 4, perOpMs: 0.5, fillDrainMs: 1, ms: 5, terms: [] };

  it('is chunks × the median task ÷ workers plus one task to fill, and bounds the pipeline where it is the larger side', () => {
    assert.deepEqual(cpuStageMs(16, { workers: 4, taskMedianMs: 2 }), { steadyMs: 8, fillMs: 2, tailMs: 2 });
    const limited = withCpuStage(GPU, cpuStageMs(16, { workers: 4, taskMedianMs: 2 }));
    assert.deepEqual([limited.term, limited.ms, limited.terms.map((t) => t.term)], ['CPU stage', 10, ['CPU stage']]);
    assert.equal(withCpuStage(GPU, null), GPU);
  });

  it('has no fill or tail for a loader alone, whose fills run ahead of their chunks; a file from before the split counts every task as after', () => {
    assert.deepEqual(cpuStageMs(16, { workers: 8, taskMedianMs: 4, afterTasksPerRep: 0 }), {
      steadyMs: 8,
      fillMs: 0,
      tailMs: 0,
    });
    assert.deepEqual(cpuStageMs(16, { workers: 8, taskMedianMs: 4, afterTasksPerRep: 16 }), {
      steadyMs: 8,
      fillMs: 4,
      tailMs: 4,
    });
    assert.deepEqual(cpuStageMs(16, { workers: 8, taskMedianMs: 4 }), { steadyMs: 8, fillMs: 4, tailMs: 4 });
    const loader = withCpuStage(GPU, cpuStageMs(16, { workers: 8, taskMedianMs: 4, afterTasksPerRep: 0 }));
    assert.deepEqual([loader.term, loader.ms], ['CPU stage', 8]);
  });

  it("bounds from below with the least work of a rep over the workers that share it and the fastest task as the tail (H200 host-stage.yaml: the median's 6.65 ms bound was above a 5.53 ms rep)", () => {
    // 16 checksum tasks on 8 workers, a median 2.216 ms under contention but 1.11 ms alone; the least rep's work 32 ms.
    const stage = {
      workers: 8,
      tasksPerRep: 16,
      afterTasksPerRep: 16,
      taskMedianMs: 2.216,
      taskMinMs: 1.11,
      workMinMs: 32,
    };
    assert.deepEqual(cpuStageFloor(16, stage), { steadyMs: 4, fillMs: 0, tailMs: 1.11 });
    const bound = withCpuStage({ ...GPU, steadyMs: 1, fillDrainMs: 0.4, ms: 1.52 }, cpuStageFloor(16, stage));
    assert.deepEqual([bound.term, bound.ms], ['CPU stage', 4]);
    assert.ok(bound.ms < 5.53);
    // Fewer tasks than workers: each runs on its own, so the work spreads over the tasks, not the workers.
    assert.equal(cpuStageFloor(2, { ...stage, tasksPerRep: 2, workMinMs: 6 }).steadyMs, 3);
    // A loader alone: nothing after the GPU.
    assert.equal(cpuStageFloor(16, { ...stage, afterTasksPerRep: 0 }).tailMs, 0);
    // A file from before the two figures keeps the median's estimate.
    assert.deepEqual(
      cpuStageFloor(16, { workers: 4, tasksPerRep: 16, taskMedianMs: 2 }),
      cpuStageMs(16, { workers: 4, taskMedianMs: 2 }),
    );
  });

  it("is never above the makespan of any assignment of a rep's tasks to the workers", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 10, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        (tasks, workers, picks) => {
          const finish = Array.from({ length: workers }, () => 0);
          tasks.forEach((t, i) => {
            const w = (picks[i] ?? 0) % workers;
            finish[w] = (finish[w] ?? 0) + t;
          });
          const makespan = Math.max(...finish);
          const floor = cpuStageFloor(tasks.length, {
            workers,
            tasksPerRep: tasks.length,
            taskMedianMs: 0,
            taskMinMs: Math.min(...tasks),
            workMinMs: tasks.reduce((a, b) => a + b, 0),
          });
          return floor.steadyMs <= makespan + 1e-9;
        },
      ),
    );
  });

  it("adds the last chunk's task after the GPU's last D2H to the GPU's side where that is the slower one", () => {
    const hidden = withCpuStage(GPU, cpuStageMs(16, { workers: 16, taskMedianMs: 1 }));
    assert.deepEqual(
      [hidden.term, hidden.ms, hidden.fillDrainMs, hidden.steadyMs, hidden.terms.map((t) => [t.term, t.ms])],
      ['link', 6, 2, 4, [['CPU stage', 2]]],
    );
    // The CPU side limits once it outlasts the GPU with its tail, not the GPU alone.
    const close = withCpuStage(GPU, { steadyMs: 3.5, fillMs: 2, tailMs: 1 });
    assert.deepEqual([close.term, close.ms], ['link', 6]);
    const over = withCpuStage(GPU, { steadyMs: 4.5, fillMs: 2, tailMs: 1 });
    assert.deepEqual([over.term, over.ms], ['CPU stage', 6.5]);
  });

  it("sums each worker's busy time over the reps and takes the medians of the tasks, the GPU's side and the CPU's, the fastest task and the least work of a rep", () => {
    const rep = (gpuMs: number, endMs: number, taskMs: number[], busyMs: number[]) => ({
      gpuMs,
      endMs,
      taskMs,
      busyMs,
      afterTasks: 2,
      bytes: 64,
      tasks: [],
    });
    assert.deepEqual(
      cpuStageSummary([rep(5, 6, [1, 2], [1, 2]), rep(4, 9, [3, 4], [3, 4]), rep(6, 7, [5, 6], [5, 0])]),
      {
        workers: 2,
        tasksPerRep: 2,
        afterTasksPerRep: 2,
        bytesPerRep: 64,
        taskMedianMs: 3.5,
        taskMinMs: 1,
        workMinMs: 3,
        busyMs: [9, 6],
        gpuMedianMs: 5,
        cpuMedianMs: 7,
      },
    );
  });

  it('reports the tasks, the CPU stage against the GPU pipeline, which side limits and each worker busy share', () => {
    const stage = {
      workers: 2,
      tasksPerRep: 16,
      bytesPerRep: 64e6,
      taskMedianMs: 1,
      busyMs: [50, 25],
      gpuMedianMs: 4,
      cpuMedianMs: 9.5,
    };
    assert.equal(
      cpuStageText({ elapsedMs: 100 }, stage),
      'on 2 workers: 16 tasks a rep, a median 1.000 ms each; CPU stage 7.1 GB/s (16 × 1.000 ms ÷ 2 + 1.000 ms = 9.000 ms a rep) ' +
        "against the GPU pipeline's 16.0 GB/s (4.000 ms): the CPU stage limits; the last task ended a median 9.500 ms after the GPU started; " +
        'workers busy 50% 25% of the timed reps',
    );
    assert.match(cpuStageText({ elapsedMs: 100 }, { ...stage, workers: 8 }), /: the GPU pipeline limits;/);
    // A loader's GPU waits for its fills (its own time is the CPU's pace): the twin without the stage is the GPU's.
    const loader = { ...stage, workers: 8, taskMedianMs: 5.558, afterTasksPerRep: 0, gpuMedianMs: 15.24 };
    assert.match(cpuStageText({ elapsedMs: 100 }, loader), /\(15\.24 ms\): the GPU pipeline limits;/);
    assert.match(
      cpuStageText({ elapsedMs: 100 }, loader, 5.907),
      /\(5\.907 ms without the stage\): the CPU stage limits;/,
    );
  });

  it('draws a row per worker after the streams, each task a host op of its chunk', () => {
    const rep = {
      mode: 'm',
      device: 0,
      workerTasks: [
        { worker: 1, chunk: 1, startMs: 2, endMs: 3 },
        { worker: 0, chunk: 2, startMs: 4, endMs: 5 },
        { worker: 0, chunk: 0, startMs: 1, endMs: 2 },
      ],
    } as unknown as TracedRep;
    const rows = workerRows(rep);
    assert.deepEqual([...rows.keys()], ['worker 0', 'worker 1']);
    assert.deepEqual(
      rows.get('worker 0')?.map((op) => [op.kind, op.chunk, op.startMs, op.endMs]),
      [
        ['host', 0, 1, 2],
        ['host', 2, 4, 5],
      ],
    );
  });
});

describe('the CLI with a host stage on workers', () => {
  it('exits 2 naming the module when a worker cannot load it, before touching the GPU', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-workers-'));
    const config = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'configs', 'host-stage.yaml'), 'utf8')
      .replace('after: checksum', `after: { module: ${join(fixtures, 'broken.mjs')} }`)
      .replace(
        'source: scale.cu',
        `source: ${join(import.meta.dirname, '..', '..', '..', '..', 'kernels', 'scale.cu')}`,
      );
    writeFileSync(join(dir, 'bad.yaml'), config);
    const run = runCli(['run', join(dir, 'bad.yaml')], {}, { timeoutMs: 60_000 });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /host stage function 'after': module .*broken\.mjs did not load in worker \d+: decoder table not found/,
    );
  });
});
