import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { planConfig } from '../../src/api/run.js';
import { configHash } from '../../src/config/hash.js';
import { loadConfigFile } from '../../src/config/load.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { measureSchedules, verifySchedules } from '../../src/measure/repeat.js';
import { buildRunResult } from '../../src/measure/result.js';
import { tableExporter } from '../../src/report/exporters/table.js';
import { markdownExporter } from '../../src/report/exporters/markdown.js';
import { renderHtml } from '../../src/report/html.js';
import { makeStyle } from '../../src/report/style.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan } from '../../src/plan/build.js';
import { runCli } from '../helpers/cli.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { H100 } from '../helpers/results.js';

// Every shipped toolbox config small enough for the CPU goes through the real planner, rep loop, Result builder
// and renderers with a fake runner: what the GPU run will print, minus the GPU.
async function fakeRun(name: string, overrides = {}) {
  const loaded = loadConfigFile(join('configs', `${name}.yaml`), overrides);
  const { plan } = planConfig(loaded, { gate: false });
  const runner = new FakeRunner(plan.schedules, plan.buffers, {
    gpuMs: (s) =>
      s.role.kind === 'serial'
        ? 10
        : s.role.kind === 'overlapped'
          ? s.issue === 'graph'
            ? 1
            : s.role.layout.legacyOp
              ? 8
              : 5
          : s.role.kind === 'latency'
            ? s.role.priorities
              ? 5.5
              : 5.2
            : 3,
    probeMs: (s, i) => (s.role.kind === 'latency' && s.role.priorities ? 0.01 : 0.1 + i / 1000),
    // Writing hundreds of MiB of outputs per fake rep would only slow the suite: what is checked here is the plan,
    // the Result and the report, and the fake's outputs say nothing about overlap.
    write: () => {},
  });
  const verification = await verifySchedules(runner, false);
  const measured = await measureSchedules(runner, { ...DEFAULT_POLICY, warmup: 0, fixedReps: 3 });
  const result = buildRunResult({
    toolVersion: '0.1.0',
    run: { hostname: 'h', rank: null, localRank: null, size: null, jobId: null, launcher: null },
    config: loaded.config,
    configHash: configHash(loaded.config),
    rawConfig: loaded.raw,
    plan,
    devices: [H100],
    traced: [],
    software: {
      driver: '13.0',
      runtime: '13.0',
      nvrtc: '13.0',
      nvrtcArchitectures: [],
      cudartPath: 'x',
      nvrtcPath: null,
    },
    compiles: [],
    policy: DEFAULT_POLICY,
    gate: false,
    clockUnavailable: null,
    measured,
    verification,
    deviceMemory: { askedBytes: plan.device.elements * 8, measuredBytes: plan.device.elements * 8 },
  });
  RunResultSchema.parse(JSON.parse(JSON.stringify(result)));
  const style = makeStyle({ isTTY: false } as NodeJS.WriteStream);
  return {
    result,
    table: tableExporter.render([result], style, 1000),
    md: markdownExporter.render([result], style),
    html: renderHtml(result),
  };
}

describe('the shipped toolbox configs, run on a fake device', () => {
  it('graph-launches: 1,024 launches a rep, replayed as a graph, and a line comparing the two', async () => {
    const { result, table } = await fakeRun('graph-launches');
    const graph = result.modes.find((m) => m.role.kind === 'overlapped' && m.role.layout.issue === 'graph');
    assert.ok(graph);
    assert.match(table, /graph replay: 1\.000 ms vs 5\.000 ms stream-issued \(5\.00×\)/);
    assert.match(table, /overlapped 1024×4 depth-first, graph replay/);
  });

  it('host-stage: the layout with the host stage and the same without it, and a line for the stage', async () => {
    const { result, md } = await fakeRun('host-stage');
    assert.deepEqual(
      result.modes.filter((m) => m.role.kind === 'overlapped').map((m) => m.id),
      ['overlapped:16x4:depth-first:chunk-per-stream:host-checksum', 'overlapped:16x4:depth-first:chunk-per-stream'],
    );
    assert.match(
      md,
      /- host stage checksum; no traced rep to time the calls; the pipeline 5\.000 ms without it → 5\.000 ms with it \(0\.0%\)/,
    );
  });

  it('stage-per-stream: through a ring of 4 slots, with the device memory it took', async () => {
    const { result, table } = await fakeRun('stage-per-stream');
    assert.deepEqual(result.deviceMemory?.ring, { slots: 4, slotElements: 2097152 });
    assert.match(
      table,
      /device memory: budget 64 MiB; allocated 64 MiB \(cudaMemGetInfo saw 64 MiB go\) for a ring of 4 slots of 2097152 elements, streaming 512 MiB of host buffers/,
    );
  });

  it('default-streams: the load on the per-thread stream keeps the overlap, the same load on the legacy stream loses it, side by side', async () => {
    const { result, table, html } = await fakeRun('default-streams');
    assert.deepEqual(
      result.modes.filter((m) => m.role.kind === 'overlapped').map((m) => m.id),
      [
        'overlapped:2x2:depth-first:chunk-per-stream',
        'overlapped:2x2:depth-first:chunk-per-stream:per-thread-h2d1',
        'overlapped:2x2:depth-first:chunk-per-stream:legacy-h2d1',
      ],
    );
    const lines = table.split('\n').filter((l) => / default stream: /.test(l));
    assert.deepEqual(lines, [
      "per-thread default stream: chunk 1's H2D on cudaStreamPerThread made the depth-first layout 5.000 ms → 5.000 ms: " +
        'no overlap lost; speedup over serial 2.00× → 2.00×',
      "legacy default stream: chunk 1's H2D on cudaStreamLegacy made the depth-first layout 5.000 ms → 8.000 ms: " +
        '3.000 ms of overlap lost (60% of what overlap saved); speedup over serial 2.00× → 1.25×',
    ]);
    assert.match(table, /overlapped 2×2 depth-first, chunk 1 H2D on per-thread default/);
    assert.match(
      html,
      /<section id="toolbox">[\s\S]*<p>per-thread default stream: chunk 1&#39;s H2D on cudaStreamPerThread [^<]*<\/p>\n<p>legacy default stream: chunk 1&#39;s H2D/,
    );
  });

  it('legacy-default: names the op and the overlap it cost', async () => {
    const { table } = await fakeRun('legacy-default');
    assert.match(
      table,
      /legacy default stream: chunk 3's kernel on cudaStreamLegacy made the depth-first layout 5\.000 ms → 8\.000 ms: 3\.000 ms of overlap lost \(60% of what overlap saved\)/,
    );
  });

  it('host-memory: each kind is its own config run, named by the flag that set it', () => {
    const loaded = loadConfigFile(join('configs', 'host-memory.yaml'), { hostMemory: 'write-combined' });
    assert.deepEqual(
      loaded.config.buffers.map((b) => b.hostMemory),
      ['write-combined', 'write-combined'],
    );
  });

  it("priorities: the urgent kernels' latency with and without priorities, and the pipeline beside them", async () => {
    const { result, table } = await fakeRun('priorities');
    assert.deepEqual(result.modes.find((m) => m.id === 'latency:small:equal')?.latency, {
      n: 96,
      medianMs: 0.1155,
      p99Ms: 0.131,
      maxMs: 0.131,
    });
    assert.match(
      table,
      /latency of small on the urgent stream over 96 launches: median 10\.0 µs, p99 10\.0 µs with priorities, median 115\.5 µs, p99 131\.0 µs without; the pipeline 5\.000 ms alone, 5\.500 ms beside them with priorities \(10\.0%\), 5\.200 ms without/,
    );
  });

  it('ring-8gib: plans an 8 GiB input through 1 GiB of device memory', () => {
    // buildPlan, not planConfig: the host-memory check would refuse 16 GiB of buffers on a small CI machine.
    const { config, locate } = loadConfigFile(join('configs', 'ring-8gib.yaml'));
    const plan = buildPlan(config, resolveKernels(config, locate));
    assert.deepEqual(plan.device, {
      elements: 4 * 33554432,
      ring: { slots: 4, slotElements: 33554432 },
      budgetBytes: 2 ** 30,
    });
    assert.ok(plan.device.elements * 8 <= 2 ** 30);
  });

  it("default-streams: --dry-run plans chunk 1's load on each default stream without a GPU", () => {
    const { code, stdout, stderr } = runCli(['run', join('configs', 'default-streams.yaml'), '--dry-run']);
    assert.equal(code, 0, stderr);
    assert.match(
      stdout,
      /^mode overlapped:2x2:depth-first:chunk-per-stream:per-thread-h2d1: 2 chunks over 2 streams, depth-first, chunk 1's loads on the per-thread default stream;/m,
    );
    assert.match(
      stdout,
      /^ {2}stream per-thread \(per-thread-default\): chunk 1; H2D 128 MiB, 0 kernel launches, D2H 0 B$/m,
    );
    assert.match(
      stdout,
      /^mode overlapped:2x2:depth-first:chunk-per-stream:legacy-h2d1: 2 chunks over 2 streams, depth-first, chunk 1's loads on the legacy default stream;/m,
    );
    assert.match(stdout, /^ {2}stream legacy \(legacy-default\): chunk 1; H2D 128 MiB, 0 kernel launches, D2H 0 B$/m);
    assert.match(stdout, /^ {2}stream s1 \(blocking\): chunk 1; H2D 0 B, 1 kernel launch, D2H 128 MiB$/m);
  });

  it('--mode graph adds graph replays to any config, and --host-memory names a bad kind (exit 2)', () => {
    const graph = runCli(['run', '--mode', 'graph', '--dry-run']);
    assert.equal(graph.code, 0, graph.stderr);
    assert.match(
      graph.stdout,
      /^mode overlapped:16x4:depth-first:chunk-per-stream:graph: 16 chunks over 4 streams, depth-first, replayed as a CUDA graph;/m,
    );
    const bad = runCli(['run', '--host-memory', 'pinned,bogus', '--dry-run']);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /--host-memory <kinds>' argument 'pinned,bogus' is invalid\. expected host memory kinds from pinned, pageable, write-combined, registered, comma-separated; got "bogus"/,
    );
  });
});
