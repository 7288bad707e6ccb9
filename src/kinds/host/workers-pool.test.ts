import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { allocPageable, freePageable, hostBytes } from '../../cuda/host.js';
import { offsetPointer } from '../../cuda/types.js';
import { fillPattern } from '../../data/patterns.js';
import { Interrupted, UsageError } from '../../errors.js';
import { HostStageFailure } from './workers/failure.js';
import { RepGuard } from '../../measure/guard.js';
import { checksum } from './workers/functions.js';
import { defaultWorkers } from './workers/options.js';
import { WorkerPool } from './workers/pool.js';
import { onClock } from './workers/timing.js';
import type { Region } from './workers/types.js';

const fixtures = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'workers');
const stage = join(fixtures, 'stage.mjs');

/** Native memory as pinned memory would be, freed after the file's tests. */
function native(bytes: number) {
  const pointer = allocPageable(bytes);
  after(() => freePageable(pointer));
  const region = (offset: number, length: number, buffer = 'b'): Region => ({
    address: offsetPointer(pointer, offset),
    bytes: length,
    buffer,
    offset,
  });
  return { pointer, view: hostBytes(pointer, bytes), region };
}

describe('worker pool', () => {
  it("runs tasks submitted together on distinct workers at the same time, and counts each worker's busy time", async () => {
    const pool = await WorkerPool.open({ workers: 4, functions: { cost: { kind: 'cost', msPerMiB: 200 } } });
    try {
      const memory = native(2 ** 20);
      const results = await Promise.all(
        [0, 1, 2, 3].map((chunk) => pool.submit({ fn: 'cost', chunk, regions: [memory.region(0, 2 ** 20)] })),
      );
      const timings = results.map((result) => result.timing);
      assert.deepEqual(timings.map((t) => t.worker).sort(), [0, 1, 2, 3]);
      // Every task had started before any ended: all four ran at one instant.
      assert.ok(
        Math.max(...timings.map((t) => t.startedMs)) < Math.min(...timings.map((t) => t.endedMs)),
        JSON.stringify(timings),
      );
      for (const t of timings) assert.ok(t.queuedMs <= t.startedMs && t.startedMs < t.endedMs, JSON.stringify(t));
      const busy = pool.busyMs();
      for (const t of timings)
        assert.ok(Math.abs((busy[t.worker] ?? 0) - (t.endedMs - t.startedMs)) < 1e-3, `worker ${t.worker}`);
      const shifted = onClock(timings[0]!, timings[0]!.queuedMs);
      assert.deepEqual(shifted, {
        worker: timings[0]!.worker,
        queuedMs: 0,
        startedMs: timings[0]!.startedMs - timings[0]!.queuedMs,
        endedMs: timings[0]!.endedMs - timings[0]!.queuedMs,
      });
    } finally {
      await pool.close();
    }
  });

  it("reads and writes the main thread's native memory in place: checksum, decode and copy, a chunk at an odd address included", async () => {
    const memory = native(4096);
    memory.view.forEach((_, i, view) => {
      view[i] = (i * 37) & 0xff;
    });
    const init = { kind: 'random', seed: 9 } as const;
    const pool = await WorkerPool.open({
      workers: 1,
      functions: {
        sum: { kind: 'checksum' },
        copy: { kind: 'copy' },
        load: { kind: 'decode', msPerMiB: 0, buffers: { input: { type: 'float32', init } } },
      },
    });
    try {
      const sum = await pool.submit({
        fn: 'sum',
        chunk: 3,
        regions: [memory.region(3, 1001), memory.region(1004, 500)],
      });
      assert.equal(
        sum.value,
        checksum([
          hostBytes(offsetPointer(memory.pointer, 3), 1001),
          hostBytes(offsetPointer(memory.pointer, 1004), 500),
        ]),
      );
      // A loader fills the slot at 2048 with elements 64.. of the buffer 'input'.
      await pool.submit({ fn: 'load', chunk: 1, regions: [{ ...memory.region(2048, 256, 'input'), offset: 256 }] });
      const expected = new Uint8Array(512);
      fillPattern(expected, 'float32', init);
      assert.deepEqual(memory.view.subarray(2048, 2304), expected.subarray(256));
      // And copies it on, as a stage handing a chunk to a second region does.
      await pool.submit({
        fn: 'copy',
        chunk: 1,
        regions: [memory.region(2048, 256)],
        targets: [memory.region(3000, 100), memory.region(3100, 156)],
      });
      assert.deepEqual(memory.view.subarray(3000, 3256), expected.subarray(256));
    } finally {
      await pool.close();
    }
  });

  it("runs a user's function from its module in every worker, over the chunk in place", async () => {
    const memory = native(8);
    memory.view.set([1, 2, 3, 4, 5, 6, 7, 255]);
    const pool = await WorkerPool.open({
      workers: 2,
      functions: { inc: { kind: 'module', path: stage, export: 'increment' } },
    });
    try {
      const [a, b] = await Promise.all([
        pool.submit({ fn: 'inc', chunk: 0, regions: [memory.region(0, 4)] }),
        pool.submit({ fn: 'inc', chunk: 1, regions: [memory.region(4, 4)] }),
      ]);
      assert.deepEqual(a?.value, { chunk: 0, worker: a?.timing.worker, bytes: 4 });
      assert.deepEqual(b?.value, { chunk: 1, worker: b?.timing.worker, bytes: 4 });
      assert.deepEqual([...memory.view], [2, 3, 4, 5, 6, 7, 8, 0]);
    } finally {
      await pool.close();
    }
  });

  it("runs a worker's tasks one at a time in the order submitted, also an async function's", async () => {
    const pool = await WorkerPool.open({
      workers: 1,
      functions: { later: { kind: 'module', path: stage, export: 'later' } },
    });
    try {
      const results = await Promise.all([0, 1, 2].map((chunk) => pool.submit({ fn: 'later', chunk, regions: [] })));
      assert.deepEqual(
        results.map((r) => r.value),
        [0, 1, 2],
      );
      for (let i = 1; i < results.length; i++)
        assert.ok(
          results[i]!.timing.startedMs >= results[i - 1]!.timing.endedMs,
          JSON.stringify(results.map((r) => r.timing)),
        );
    } finally {
      await pool.close();
    }
  });

  it('fails a task whose function throws with exit 4, naming function, chunk, worker and message, and stays usable', async () => {
    const pool = await WorkerPool.open({
      workers: 1,
      functions: { bad: { kind: 'module', path: stage, export: 'reject' }, sum: { kind: 'checksum' } },
    });
    try {
      await assert.rejects(pool.submit({ fn: 'bad', chunk: 7, regions: [] }), (error: unknown) => {
        assert.ok(error instanceof HostStageFailure);
        assert.equal(error.exitCode, 4);
        assert.equal(
          error.message,
          "host stage function 'bad' failed on chunk 7 in worker 0: corrupt record in chunk 7",
        );
        return true;
      });
      const memory = native(4);
      memory.view.set([1, 0, 0, 0]);
      assert.equal((await pool.submit({ fn: 'sum', chunk: 8, regions: [memory.region(0, 4)] })).value, 1);
    } finally {
      await pool.close();
    }
  });

  it('closes when a worker dies, failing its task with exit 4 and refusing more', async () => {
    const pool = await WorkerPool.open({
      workers: 2,
      functions: { quit: { kind: 'module', path: stage, export: 'quit' } },
    });
    await assert.rejects(pool.submit({ fn: 'quit', chunk: 2, regions: [] }), (error: unknown) => {
      assert.ok(error instanceof HostStageFailure);
      assert.match(error.message, /^host stage worker 0 exited with code 3, running function 'quit' on chunk 2$/);
      return true;
    });
    await pool.close();
    assert.equal(pool.running, 0);
    await assert.rejects(pool.submit({ fn: 'quit', chunk: 3, regions: [] }), /host stage worker 0 exited with code 3/);
  });

  it("refuses a module that does not load with exit 2, naming the file and the loader's message", async () => {
    const cases = [
      {
        path: join(fixtures, 'broken.mjs'),
        export: 'decode',
        message: /module .*broken\.mjs did not load in worker \d: decoder table not found/,
      },
      {
        path: join(fixtures, 'missing.mjs'),
        export: 'decode',
        message: /Cannot read module .*missing\.mjs: no such file\./,
      },
      {
        path: stage,
        export: 'decode',
        message:
          /stage\.mjs did not load in worker \d: it has no exported function 'decode' \(its exported functions: increment, later, never, quit, reject, spin\)/,
      },
    ];
    for (const c of cases) {
      await assert.rejects(
        WorkerPool.open({ workers: 1, functions: { user: { kind: 'module', path: c.path, export: c.export } } }),
        (error: unknown) => {
          assert.ok(error instanceof UsageError, String(error));
          assert.equal(error.exitCode, 2);
          assert.match(error.message, /^host stage function 'user': /);
          assert.match(error.message, c.message);
          return true;
        },
      );
    }
  });

  it("lets the rep's tasks finish on Ctrl-C, so the guard stops at the rep boundary, then close ends every worker", async () => {
    const controller = new AbortController();
    const guard = new RepGuard({ signal: controller.signal });
    const pool = await WorkerPool.open({
      workers: 2,
      functions: { cost: { kind: 'cost', msPerMiB: 0 } },
      signal: controller.signal,
      flags: 2,
    });
    const generation = pool.nextGeneration();
    // The rep's tasks wait for their chunks (the flags stand for the events after the D2Hs): one has not left the GPU
    // when the signal arrives.
    const tasks = [0, 1].map((flag) =>
      pool.submit({ fn: 'cost', chunk: flag, regions: [], waitFor: { kind: 'flag', flag, generation } }),
    );
    pool.raise(0, generation);
    await tasks[0];
    controller.abort('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(pool.running, 2, 'the signal ended no worker');
    pool.raise(1, generation);
    const done = await Promise.all(tasks);
    assert.deepEqual(
      done.map((d) => d.value),
      [undefined, undefined],
    );
    assert.throws(
      () => guard.checkpoint('a rep of the overlapped mode'),
      (error: unknown) => error instanceof Interrupted && error.exitCode === 130,
    );
    await pool.close(new Interrupted('interrupted'));
    assert.equal(pool.running, 0);
    await assert.rejects(pool.submit({ fn: 'cost', chunk: 1, regions: [] }), Interrupted);
    await assert.rejects(WorkerPool.open({ workers: 1, functions: {}, signal: AbortSignal.abort() }), Interrupted);
  });

  for (const [name, how] of [
    ['spin', 'a function that never returns'],
    ['never', 'a function whose promise never settles'],
  ] as const) {
    it(`ends the worker of ${how} at its task's bound and fails it with exit 4, naming stage, function and chunk`, {
      timeout: 20_000,
    }, async () => {
      const pool = await WorkerPool.open({
        workers: 2,
        stage: 'unpack',
        functions: { after: { kind: 'module', path: stage, export: name }, sum: { kind: 'checksum' } },
      });
      const started = performance.now();
      const stuck = pool.submit({ fn: 'after', chunk: 5, regions: [] }, { timeoutMs: 300 });
      // One running on the other worker (within its own 60 s bound) and one queued behind the stuck one (two in flight
      // a worker): both stop with it.
      const behind = [
        pool.submit({ fn: 'after', chunk: 6, regions: [] }),
        pool.submit({ fn: 'sum', chunk: 7, regions: [] }),
      ];
      const failure = await stuck.then(
        () => assert.fail('a function that never ends cannot succeed'),
        (error: unknown) => error,
      );
      const afterMs = performance.now() - started;
      assert.ok(failure instanceof HostStageFailure, String(failure));
      assert.equal(failure.exitCode, 4);
      assert.equal(
        failure.message,
        `host stage unpack: function 'after' (export '${name}' of ${stage}) did not return within 0.3 s on chunk 5 in worker 0 ` +
          '(a loop that never ends, or a promise that never settles): its worker was ended and every task of the stage stopped.',
      );
      assert.ok(afterMs >= 300 && afterMs < 3_000, `failed ${afterMs.toFixed(0)} ms after submission`);
      for (const task of behind) await assert.rejects(task, (error: unknown) => error === failure);
      // Every worker ended: nothing still runs over memory the run's clean-up frees next.
      await pool.close();
      assert.equal(pool.running, 0);
    });
  }

  it("does not count a task's wait for its chunk's event or flag against its bound: the rep's deadline bounds the GPU", {
    timeout: 20_000,
  }, async () => {
    const pool = await WorkerPool.open({ workers: 1, functions: { cost: { kind: 'cost', msPerMiB: 0 } }, flags: 1 });
    try {
      const generation = pool.nextGeneration();
      const task = pool.submit(
        { fn: 'cost', chunk: 0, regions: [], waitFor: { kind: 'flag', flag: 0, generation } },
        { timeoutMs: 100 },
      );
      await new Promise((resolve) => setTimeout(resolve, 400));
      pool.raise(0, generation);
      assert.equal((await task).timing.worker, 0);
      assert.equal(pool.running, 1);
    } finally {
      await pool.close();
    }
  });

  it('close ends every worker, even one in the middle of a function, and rejects its task with the reason', async () => {
    const pool = await WorkerPool.open({ workers: 2, functions: { cost: { kind: 'cost', msPerMiB: 600_000 } } });
    const memory = native(2 ** 20);
    const task = pool.submit({ fn: 'cost', chunk: 0, regions: [memory.region(0, 2 ** 20)] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const rejected = assert.rejects(
      task,
      (error: unknown) => error instanceof Interrupted && error.message === 'interrupted: closed',
    );
    await pool.close(new Interrupted('interrupted: closed'));
    await rejected;
    assert.equal(pool.running, 0);
  });

  it('keeps the process alive for no pool: closed, idle, or one whose module did not load', () => {
    const child = spawnSync(process.execPath, [join(fixtures, 'exit-check.mjs')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.signal, null, 'the process did not exit by itself');
    assert.equal(child.stderr, '');
    assert.equal(child.status, 0);
    assert.equal(child.stdout, 'UsageError\nclosed pool: 0 running; idle pool: 2 running\n');
  });

  it('bounds its queue, and sizes itself from the cores', async () => {
    const pool = await WorkerPool.open({
      workers: 1,
      queueLimit: 1,
      functions: { cost: { kind: 'cost', msPerMiB: 0 } },
    });
    try {
      // Two are sent to the worker (the one it runs and the next), one waits in the queue, and the queue is full.
      const accepted = [0, 1, 2].map((chunk) => pool.submit({ fn: 'cost', chunk, regions: [] }));
      await assert.rejects(pool.submit({ fn: 'cost', chunk: 3, regions: [] }), /queue is full \(1 tasks wait\)/);
      await Promise.all(accepted);
    } finally {
      await pool.close();
    }
    assert.deepEqual(
      [1, 2, 3, 4, 10, 16, 64].map((cores) => defaultWorkers(cores)),
      [1, 1, 1, 2, 8, 8, 8],
    );
    await assert.rejects(
      WorkerPool.open({ workers: 0, functions: {} }),
      /workers: 0 is not a whole number of at least 1/,
    );
  });
});
