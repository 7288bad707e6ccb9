import assert from 'node:assert/strict';
import { cpuStageMs } from '../../src/kinds/host/cpu-stage.js';
import { cpuStageOf } from '../../src/kinds/host/section.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { type RunResult, RunResultSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/gpu-cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// The stream toolbox on a real device: each shipped config runs, verifies, and reports what it is there to show.
// Each test skips on its own, with the reason, so a machine without a GPU still counts them.
const gpu = { skip: gpuSkipReason() ?? false };
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-toolbox-'));

const CONFIGS = join(packageRoot(), 'configs');

function run(name: string, args: readonly string[] = []): { result: RunResult; stdout: string; stderr: string } {
  return runFile(join('configs', `${name}.yaml`), args, name);
}

function runFile(
  config: string,
  args: readonly string[] = [],
  name = 'config',
): { result: RunResult; stdout: string; stderr: string } {
  const json = join(out, `${name}-${args.join('_').replace(/[^\w-]/g, '')}.json`);
  const { code, stdout, stderr } = runCli(['run', config, '--json', json, ...args]);
  assert.equal(code, 0, `${name}: ${stderr}`);
  return { result: RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8'))), stdout, stderr };
}

const overlapped = (
  result: RunResult,
  match: (layout: Extract<RunResult['modes'][number]['role'], { kind: 'overlapped' }>['layout']) => boolean,
) => {
  const mode = result.modes.find((m) => m.role.kind === 'overlapped' && match(m.role.layout));
  assert.ok(mode, `no such overlapped mode among ${result.modes.map((m) => m.id).join(', ')}`);
  return mode;
};

describe('the stream toolbox on a real device', () => {
  it(
    'graph-launches: a graph replay of 1,024 tiny launches is at least 5× faster than issuing them, with setup timed apart',
    gpu,
    () => {
      const { result, stdout } = run('graph-launches', ['--max-time', '1']);
      const stream = overlapped(result, (l) => l.issue === undefined);
      const graph = overlapped(result, (l) => l.issue === 'graph');
      // 1,024 launches: capture 1.3 to 2.1 ms and instantiate 3.5 to 4.3 ms in cuda-pipe on the H200, 2 to 3 and 5 to
      // 6.5
      // ms
      // natively (GPU-FACTS.md): each well under a microsecond a node would be a capture that recorded nothing.
      assert.ok(graph.graph && graph.graph.captureMs > 0.3 && graph.graph.captureMs < 30, JSON.stringify(graph.graph));
      assert.ok(graph.graph.instantiateMs > 0.5 && graph.graph.instantiateMs < 60, JSON.stringify(graph.graph));
      assert.equal(stream.graph, undefined);
      const gain = stream.stats.median / graph.stats.median;
      assert.ok(
        gain >= 5,
        `graph replay only ${gain.toFixed(2)}× faster (${stream.stats.median} → ${graph.stats.median} ms)`,
      );
      assert.match(stdout, /graph replay: .* host issue limited it, and the graph removes that/);
      const rep = result.timeline?.reps.find((r) => r.mode === graph.id);
      if (rep) assert.equal(rep.ops.filter((o) => o.kind === 'kernel').length, 1024);
      else
        assert.ok(
          result.notes.some((n) => n.startsWith('No timeline for')),
          'a graph timeline, or a note why not',
        );
    },
  );

  it(
    'graph-copies: copies dominate, the replay verifies and barely helps, and the report says the GPU side limited it',
    gpu,
    () => {
      const { result, stdout } = run('graph-copies', ['--max-time', '1']);
      assert.equal(result.verification.status, 'passed');
      const stream = overlapped(result, (l) => l.issue === undefined);
      const graph = overlapped(result, (l) => l.issue === 'graph');
      assert.ok(stream.stats.median / graph.stats.median < 1.5, `${stream.stats.median} → ${graph.stats.median} ms`);
      assert.match(stdout, /graph replay: .* the GPU side limited it/);
    },
  );

  it(
    "host-stage: a checksum after each D2H on worker threads, handed over by events: verified, a task per chunk on the traced rep's worker rows, with either wait",
    gpu,
    () => {
      for (const wait of ['poll', 'thread']) {
        const { result, stdout } = run('host-stage', ['--max-time', '1', '--wait', wait]);
        assert.equal(result.verification.status, 'passed', wait);
        const mode = overlapped(result, (l) => l.host === 'checksum');
        const without = overlapped(result, (l) => l.host === undefined);
        const stage = cpuStageOf(mode);
        assert.ok(stage && stage.tasksPerRep === 16 && stage.busyMs.length === stage.workers, JSON.stringify(stage));
        assert.ok(
          stage.busyMs.every((ms) => ms > 0),
          `every worker ran tasks: ${stage.busyMs.join(', ')}`,
        );
        const rep = result.timeline?.reps.find((r) => r.mode === mode.id);
        assert.deepEqual(
          rep?.workerTasks?.map((t) => t.chunk).sort((a, b) => (a ?? 0) - (b ?? 0)),
          Array.from({ length: 16 }, (_, i) => i),
        );
        // The JS thread's host functions took this pipeline from 1.5 to 22 ms on the H200: one checksum at a time. On
        // workers the tasks run side by side: the rep takes well under the tasks one after another, and no more than
        // the
        // slower side (the GPU pipeline, or the CPU stage spread over the workers) allows, within a third.
        const oneAtATime = stage.tasksPerRep * stage.taskMedianMs;
        assert.ok(
          mode.stats.median < 0.5 * oneAtATime + without.stats.median,
          `${mode.stats.median} ms a rep against ${oneAtATime} ms of tasks one at a time`,
        );
        const cpu = cpuStageMs(stage.tasksPerRep, stage);
        const slower = Math.max(without.stats.median, cpu.steadyMs + cpu.fillMs);
        assert.ok(
          mode.stats.median < 1.33 * slower,
          `${without.stats.median} → ${mode.stats.median} ms; the CPU stage alone ${cpu.steadyMs + cpu.fillMs} ms`,
        );
        assert.match(stdout, /host stage checksum on \d+ workers: 16 tasks a rep/);
      }
    },
  );

  it(
    'loader: a decode stage on the workers fills each chunk in pinned memory before its ops are issued, and the run verifies',
    gpu,
    () => {
      const { result, stdout } = run('loader', ['--max-time', '1']);
      assert.equal(result.verification.status, 'passed');
      const mode = overlapped(result, (l) => l.host === 'decode');
      const stage = cpuStageOf(mode);
      assert.ok(stage && stage.tasksPerRep === 16 && stage.busyMs.every((ms) => ms > 0), JSON.stringify(stage));
      // The fills are on the rep's timeline: every chunk's fill ended before its H2D started (host and GPU clocks meet
      // at
      // the start event).
      const rep = result.timeline?.reps.find((r) => r.mode === mode.id);
      for (const op of rep?.ops.filter((o) => o.kind === 'h2d') ?? []) {
        const fill = rep?.workerTasks?.find((t) => t.chunk === op.chunk);
        assert.ok(
          fill && fill.endMs <= op.startMs + 0.5,
          `chunk ${op.chunk}: fill ${JSON.stringify(fill)}, H2D from ${op.startMs} ms`,
        );
      }
      assert.match(stdout, /host stage decode on \d+ workers: 16 tasks a rep/);
    },
  );

  it(
    'host-stage on thread: js: the old host functions, on the JS thread, captured into a graph and run on every replay',
    gpu,
    () => {
      const config = join(mkdtempSync(join(tmpdir(), 'cuda-pipe-js-host-')), 'host-js.yaml');
      writeFileSync(
        config,
        readFileSync(join(CONFIGS, 'host-stage.yaml'), 'utf8').replace(
          'after: checksum',
          'thread: js\n  function: checksum',
        ),
      );
      const { result } = runFile(config, ['--mode', 'graph', '--reps', '5', '--warmup', '1']);
      assert.equal(result.verification.status, 'passed');
      // CUDA runs host functions one at a time: 16 checksums of 4 MiB (1.3 ms each on the H200, 22 ms a rep
      // stream-issued)
      // cannot all fit in 3 ms, so a replay far under that skipped them.
      const replay = overlapped(result, (l) => l.issue === 'graph' && l.host === 'checksum').stats.median;
      assert.ok(replay > 3 && replay < 200, `${replay} ms a replay`);
    },
  );

  it(
    'stage-per-stream: one stream per stage through a 64 MiB ring verifies, overlaps, and measures the device memory it took',
    gpu,
    () => {
      const { result, stdout } = run('stage-per-stream', ['--max-time', '1', '--mode', 'graph']);
      assert.equal(result.verification.status, 'passed');
      const mode = overlapped(result, (l) => l.topology === 'stage-per-stream' && l.issue === undefined);
      assert.ok(mode.analysis && mode.analysis.speedup > 1.3, `speedup ${mode.analysis?.speedup}`);
      const memory = result.deviceMemory;
      assert.ok(memory && memory.askedBytes === 64 * 2 ** 20, JSON.stringify(memory));
      assert.ok(
        memory.measuredBytes >= memory.askedBytes && memory.measuredBytes <= memory.askedBytes + 64 * 2 ** 20,
        JSON.stringify(memory),
      );
      assert.deepEqual(
        result.timeline?.reps.find((r) => r.mode === mode.id)?.streams.map((s) => s.id),
        ['load', 'compute', 'store'],
      );
      assert.match(stdout, /device memory: budget 64 MiB; allocated 64 MiB/);
    },
  );

  it('ring-8gib: an 8 GiB input runs, verifies and reports through 1 GiB of device memory', gpu, () => {
    const { result, stdout } = run('ring-8gib', ['--no-tracing']);
    assert.equal(result.verification.status, 'passed');
    assert.ok(
      result.deviceMemory && result.deviceMemory.measuredBytes <= 2 ** 30 + 64 * 2 ** 20,
      JSON.stringify(result.deviceMemory),
    );
    assert.ok(result.summary.speedup > 1, `speedup ${result.summary.speedup}`);
    assert.match(stdout, /streaming 16 GiB of host buffers/);
  });

  it('legacy-default: one kernel on the legacy default stream costs overlap, and the report names it', gpu, () => {
    const { result, stdout } = run('legacy-default', ['--max-time', '1']);
    assert.equal(result.verification.status, 'passed');
    const plain = overlapped(result, (l) => l.legacyOp === undefined);
    const legacy = overlapped(result, (l) => l.legacyOp !== undefined);
    // One kernel on cudaStreamLegacy waits for all earlier work on the blocking streams and holds back all later
    // work: one drain and fill of the pipeline, about 0.3 ms (4 to 5%) of balanced on the H200.
    assert.ok(legacy.stats.median > plain.stats.median * 1.02, `${plain.stats.median} → ${legacy.stats.median} ms`);
    assert.match(
      stdout,
      /legacy default stream: chunk 3's kernel on cudaStreamLegacy made the depth-first layout .* of overlap lost/,
    );
    assert.deepEqual(result.timeline?.reps.find((r) => r.mode === legacy.id)?.streams.at(-1), {
      id: 'legacy',
      flags: 'legacy-default',
      priority: null,
    });
  });

  it(
    "default-streams: chunk 1's load on cudaStreamPerThread keeps the overlap of blocking streams, on cudaStreamLegacy it runs as serial",
    gpu,
    () => {
      const { result, stdout } = run('default-streams', ['--max-time', '1']);
      assert.equal(result.verification.status, 'passed');
      const plain = overlapped(result, (l) => l.legacyOp === undefined && l.perThreadOp === undefined);
      const perThread = overlapped(result, (l) => l.perThreadOp !== undefined);
      const legacy = overlapped(result, (l) => l.legacyOp !== undefined);
      const speedup = (m: typeof plain) => m.analysis?.speedup ?? 0;
      // Two chunks of balanced over two streams: about 1.4× on the H200 (H2D, then H2D || kernel, kernel || D2H, D2H).
      assert.ok(speedup(perThread) > 1.25, `per-thread: ${speedup(perThread).toFixed(2)}×`);
      assert.ok(
        Math.abs(perThread.stats.median / plain.stats.median - 1) < 0.05,
        `${plain.stats.median} → ${perThread.stats.median} ms`,
      );
      // On the legacy stream the load waits for all of chunk 0 and chunk 1 waits for it: the two chunks run one after
      // the other, as serial runs the whole buffers.
      assert.ok(speedup(legacy) > 0.9 && speedup(legacy) < 1.08, `legacy: ${speedup(legacy).toFixed(2)}×`);
      assert.match(
        stdout,
        /per-thread default stream: chunk 1's H2D on cudaStreamPerThread made the depth-first layout /,
      );
      assert.match(
        stdout,
        /legacy default stream: chunk 1's H2D on cudaStreamLegacy made the depth-first layout .* of overlap lost/,
      );
      const streams = (id: string) => result.timeline?.reps.find((r) => r.mode === id)?.streams.at(-1);
      assert.deepEqual(streams(perThread.id), { id: 'per-thread', flags: 'per-thread-default', priority: null });
      assert.deepEqual(streams(legacy.id), { id: 'legacy', flags: 'legacy-default', priority: null });
    },
  );

  it('host-memory: four kinds side by side in one table, pageable copies slower than pinned', gpu, () => {
    const json = join(out, 'host-memory.json');
    const { code, stdout, stderr } = runCli([
      'run',
      join('configs', 'host-memory.yaml'),
      '--host-memory',
      'pinned,pageable,write-combined,registered',
      '--reps',
      '5',
      '--warmup',
      '1',
      '--no-tracing',
      '--json',
      json,
    ]);
    assert.equal(code, 0, stderr);
    const results = (JSON.parse(readFileSync(json, 'utf8')) as unknown[]).map((r) => RunResultSchema.parse(r));
    assert.deepEqual(
      results.map((r) => r.buffers[0]?.hostMemory),
      ['pinned', 'pageable', 'write-combined', 'registered'],
    );
    assert.ok(results.every((r) => r.verification.status === 'passed'));
    assert.match(stdout, /host-memory by host memory kind/);
    const h2d = (r: RunResult) =>
      r.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'h2d')?.stats.median ?? 0;
    assert.ok(h2d(results[1] as RunResult) > h2d(results[0] as RunResult), 'pageable H2D slower than pinned');
  });

  it(
    "priorities: a high-priority stream's small kernels wait less in the tail beside a low-priority pipeline than at equal priority",
    gpu,
    () => {
      const { result, stdout } = run('priorities', ['--max-time', '1']);
      assert.equal(result.verification.status, 'passed');
      const latency = (priorities: boolean) =>
        result.modes.find((m) => m.role.kind === 'latency' && m.role.priorities === priorities)?.latency;
      const high = latency(true);
      const equal = latency(false);
      assert.ok(high && equal && high.n >= 32 && equal.n >= 32, JSON.stringify({ high, equal }));
      // On the H200 the medians are alike (13 to 14 µs); what priority buys is the tail (p99 25 µs against 47 to 49
      // µs).
      assert.ok(high.p99Ms < equal.p99Ms, `p99 latency ${high.p99Ms} ms with priorities, ${equal.p99Ms} ms without`);
      assert.match(
        stdout,
        /latency of small on the urgent stream over \d+ launches: median [\d.]+ µs, p99 [\d.]+ µs with priorities/,
      );
      const rep = result.timeline?.reps.find((r) => r.mode === 'latency:small:priorities');
      assert.ok(
        rep?.streams.some((s) => s.id === 'urgent' && s.priority === result.devices[0]?.streamPriority.greatest),
        JSON.stringify(rep?.streams),
      );
    },
  );

  it("priorities: a number outside the device's range is a usage error naming the range", gpu, () => {
    const { code, stderr } = runCli(['run', join('configs', 'priorities.yaml'), '--dry-run']);
    assert.equal(code, 0, stderr);
    const bad = join(out, 'bad-priority.yaml');
    writeFileSync(
      bad,
      readFileSync(join(packageRoot(), 'configs', 'priorities.yaml'), 'utf8').replace('priority: low', 'priority: -99'),
    );
    const failed = runCli(['run', bad]);
    assert.equal(failed.code, 2, failed.stderr);
    assert.match(
      failed.stderr,
      /bad-priority\.yaml:\d+:\d+: stream priority -99 is outside device 0's range, -?\d+ \(highest\) to -?\d+ \(lowest\)/,
    );
  });

  it('overhead: measures event records with and without timing and cross-stream waits', gpu, () => {
    const { code, stdout, stderr } = runCli(['overhead', '--ops', '2000', '--json', '-']);
    assert.equal(code, 0, stderr);
    const rows = (JSON.parse(stdout) as { rows: Array<{ op: string; hostUsPerOp: { median: number } }> }).rows;
    assert.deepEqual(
      rows.map((r) => r.op),
      ['launch', 'copy', 'record-timing', 'record-untimed', 'wait'],
    );
    // On the H200 (GPU-FACTS.md, docs/measurements/2026-11-22-event-costs): launch 3.4 to 4.6 µs, copy 1.5 to 2.6 µs,
    // a timed record 1.1 µs, an untimed record and a wait 0.25 µs; each range allows about 4× either way.
    const limits: Record<string, [number, number]> = {
      launch: [1, 18],
      copy: [0.4, 10],
      'record-timing': [0.25, 5],
      'record-untimed': [0.05, 1.2],
      wait: [0.05, 1.2],
    };
    for (const r of rows) {
      const [low, high] = limits[r.op] ?? [0, 0];
      assert.ok(
        r.hostUsPerOp.median > low && r.hostUsPerOp.median < high,
        `${r.op}: ${r.hostUsPerOp.median} µs, outside ${low} to ${high}`,
      );
    }
    const us = (op: string) => rows.find((r) => r.op === op)?.hostUsPerOp.median ?? Number.NaN;
    assert.ok(us('record-untimed') < us('record-timing') && us('record-timing') < us('launch'), JSON.stringify(rows));
  });
});
