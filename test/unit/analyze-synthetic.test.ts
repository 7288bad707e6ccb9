import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { AnalysisDocument } from '../../src/analysis/document.js';
import { parseTraceDocument } from '../../src/traces/parse.js';
import { analyzeRep } from '../../src/analysis/timeline.js';
import { buildTrace } from '../../src/report/trace.js';
import { loadResults } from '../../src/result/load.js';
import { packageRoot } from '../../src/paths.js';

// Patterns built in code, each a few events whose expected values are worked out in the comments (µs in the
// events, ms in the assertions), and run's own trace read back and checked against run's own analysis.

type Args = Record<string, number | string>;
const event = (cat: string, name: string, ts: number, dur: number, args: Args = {}) => ({
  ph: 'X',
  cat,
  name,
  pid: 0,
  tid: 1,
  ts,
  dur,
  args,
});
const kernel = (stream: number, ts: number, dur: number, correlation: number, name = 'k') =>
  event('kernel', name, ts, dur, { device: 0, stream, correlation });
const h2d = (stream: number, ts: number, dur: number, correlation: number, bytes: number) =>
  event('gpu_memcpy', 'Memcpy HtoD (Pinned -> Device)', ts, dur, { device: 0, stream, correlation, bytes });
const launch = (ts: number, dur: number, correlation: number, name = 'cudaLaunchKernel') =>
  event('cuda_runtime', name, ts, dur, { correlation });

function analyse(events: readonly unknown[]): AnalysisDocument {
  return analyzeTraces([parseTraceDocument('synthetic.json', { schemaVersion: 1, traceEvents: events })], {
    rates: null,
    toolVersion: 'test',
  });
}

function near(actual: number | null | undefined, expected: number, what: string, within = 1e-9): void {
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < within,
    `${what}: ${actual} is not ${expected}`,
  );
}

describe('analyze: patterns built in code', () => {
  it('host-bound: five 0.1 ms kernels, each launched 5 µs before it starts, 0.1 ms apart: 0.4 ms of a 0.9 ms step waits on launches', () => {
    const events = [0, 1, 2, 3, 4].flatMap((i) => [launch(i * 200 - 15, 10, i), kernel(13, i * 200, 100, i)]);
    const document = analyse(events);
    const step = document.devices[0]!.steps[0]!;
    assert.equal(step.name, 'whole trace');
    near(step.ms, 0.9, 'step');
    near(step.idleMs, 0.4, 'idle');
    near(step.hostWaitMs, 0.4, 'host wait');
    // Every gap was the host's, so none gives a per-op cost: the floor is the kernels' 0.5 ms.
    near(step.floor.opCostMs, 0, 'op cost');
    near(step.floor.ms, 0.5, 'floor');
    assert.deepEqual(
      document.findings.map((f) => [f.code, Math.round(f.ms * 1e6) / 1e6]),
      [['host-bound', 0.4]],
    );
  });

  it('serialised-copies stays silent where the first copy ran at the link rate: overlapping cannot beat the link', () => {
    // 8 MB in 1 ms and 4 MB in 0.5 ms: both at 8 GB/s, the trace's fastest, so the link was full.
    const document = analyse([
      launch(-100, 10, 1, 'cudaMemcpyAsync'),
      h2d(14, 0, 1000, 1, 8e6),
      launch(190, 10, 2, 'cudaMemcpyAsync'),
      h2d(15, 1000, 500, 2, 4e6),
    ]);
    assert.deepEqual(document.findings, []);
  });

  it("serialised-copies on a device that runs one copy of a direction at a time: stream 15's copy saves only the wait's 15 µs", () => {
    // No two H2D copies of the trace ran at once, so the device is taken to run them one after another (as an H200
    // does): without the event wait, stream 15's copy starts as stream 14's ends (0.5 ms), not 15 µs later.
    const parsed = parseTraceDocument('turnaround.json', {
      schemaVersion: 1,
      traceEvents: [
        launch(-15, 10, 1, 'cudaMemcpyAsync'),
        h2d(14, 0, 500, 1, 1e6),
        launch(90, 10, 2, 'cudaMemcpyAsync'),
        h2d(15, 515, 500, 2, 1e6),
      ],
    });
    const document = analyzeTraces([parsed], {
      rates: { source: 'probe', file: 'probe.json', byDevice: new Map([[0, { h2d: 20, d2h: 20 }]]) },
      toolVersion: 'test',
    });
    assert.deepEqual(
      document.findings.map((f) => [f.code, Math.round(f.ms * 1e6) / 1e6]),
      [['serialised-copies', 0.015]],
    );
  });

  it('copies of one stream one after the other are not serialised-copies', () => {
    const document = analyse([
      launch(-100, 10, 1, 'cudaMemcpyAsync'),
      h2d(14, 0, 1000, 1, 8e6),
      launch(190, 10, 2, 'cudaMemcpyAsync'),
      h2d(14, 1000, 500, 2, 4e6),
    ]);
    assert.deepEqual(document.findings, []);
  });

  it('a gpu_user_annotation step is taken as the GPU span it marks, whatever its launches', () => {
    const annotation = { ...event('gpu_user_annotation', 'ProfilerStep#3', 500, 1000), args: { device: 0 } };
    const document = analyse([annotation, kernel(13, 0, 2000, 1)]);
    const step = document.devices[0]!.steps[0]!;
    assert.equal(step.name, 'ProfilerStep#3');
    near(step.ms, 1.0, 'step');
    near(step.busy.kernels, 1, 'kernel busy, clipped to the step');
    near(step.floor.kernelMs, 1.0, 'kernel time, clipped to the step');
  });

  it('a GPU with work in no step still gets the whole trace as its one step', () => {
    const document = analyse([event('user_annotation', 'ProfilerStep#1', 0, 10), kernel(13, 100, 50, 9)]);
    near(document.devices[0]!.stepMs, 0.05, 'step');
  });

  it('given rates win over the trace: 8 MB at 32 GB/s is a 0.25 ms H2D term', () => {
    const parsed = parseTraceDocument('r.json', { schemaVersion: 1, traceEvents: [h2d(14, 0, 1000, 1, 8e6)] });
    const document = analyzeTraces([parsed], {
      rates: { source: 'probe', file: 'probe.json', byDevice: new Map([[0, { h2d: 32, d2h: 25 }]]) },
      toolVersion: 'test',
    });
    const device = document.devices[0]!;
    near(device.steps[0]!.floor.h2dMs, 0.25, 'h2d term');
    assert.equal(device.steps[0]!.floor.bound, 'h2d');
    assert.deepEqual(device.rates, { h2dGbPerSecond: 32, d2hGbPerSecond: 25, source: 'probe', file: 'probe.json' });
  });

  it('a million kernels are analysed in linear time, not quadratic', () => {
    const events = Array.from({ length: 1_000_000 }, (_, i) => kernel(13 + (i % 4), i * 2, 3, i));
    const began = performance.now();
    const document = analyse(events);
    const tookMs = performance.now() - began;
    near(document.devices[0]!.steps[0]!.ms, (2 * 999_999) / 1000 + 0.003, 'span', 1e-6);
    // About 6 s alone and 20 s beside the rest of the suite; anything quadratic would take hours, so a wide bound
    // catches it without failing on a busy machine.
    assert.ok(tookMs < 120_000, `took ${tookMs.toFixed(0)} ms`);
  });
});

describe("analyze: cuda-pipe's own trace", () => {
  it("reads run --trace's file back: one step per traced rep, busy shares as run's own analysis gives them", () => {
    const [result] = loadResults(join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json'));
    const reps = result!.timeline!.reps;
    const parsed = parseTraceDocument('own.json', JSON.parse(JSON.stringify(buildTrace(result!))));
    assert.equal(parsed.format, 'cuda-pipe');
    const document = analyzeTraces([parsed], { rates: null, toolVersion: 'test' });
    const device = document.devices[0]!;
    assert.equal(device.steps.length, reps.length);
    device.steps.forEach((step, i) => {
      const run = analyzeRep(reps[i]!);
      // The trace keeps times to the ns: shares agree to within a few ns over a rep of milliseconds.
      near(step.busy.h2d, run.busy.h2d, `rep ${i} h2d`, 1e-5);
      near(step.busy.d2h, run.busy.d2h, `rep ${i} d2h`, 1e-5);
      near(step.busy.kernels, run.busy.sm, `rep ${i} kernels`, 1e-5);
      near(step.ms, reps[i]!.totalMs, `rep ${i} ms`, 1e-5);
    });
    assert.ok(document.notes.some((n) => /has no host calls/.test(n)));
  });
});
