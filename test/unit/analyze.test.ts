import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { AnalysisDocument, DeviceAnalysis, Finding } from '../../src/analysis/document.js';
import { AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { copyKind } from '../../src/traces/formats/kineto/parse.js';
import { parseTraceDocument, parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';

// Each fixture under test/fixtures/analyze is a hand-written Kineto trace with one pattern; every expected value
// below is worked out by hand from its events (times in the fixture are µs, here ms).

const fixture = (name: string) => join(packageRoot(), 'test', 'fixtures', 'analyze', name);

// parseTraceFile streams, so is async: each fixture is read once, up front.
const FIXTURES = ['copy-overlapped.json', 'pageable-compute-stream.json', 'ddp-nccl.json', 'host-sync.json'];
const parsed = new Map(await Promise.all(FIXTURES.map(async (n) => [n, await parseTraceFile(fixture(n))] as const)));

function analyse(...names: string[]): AnalysisDocument {
  return analyzeTraces(
    names.map((n) => parsed.get(n)!),
    { rates: null, toolVersion: 'test' },
  );
}

/** Equal to within float rounding: 1.3 − 1.1 is not 0.2 in binary. */
function near(actual: number | null | undefined, expected: number, what: string): void {
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what}: ${actual} is not ${expected}`,
  );
}

const codes = (findings: readonly Finding[]) => findings.map((f) => f.code);

describe('analyze: a step whose copies partly overlap its kernels (copy-overlapped.json)', () => {
  // GPU 0, one step from 1.1 to 2.1 ms (1.0 ms):
  //   H2D 1.1–1.3 and 1.3–1.5 (stream 14, 4 MB each), kernels 1.3–1.7 and 1.7–2.0 (stream 13),
  //   D2H 1.7–1.8 and 2.0–2.1 (stream 15, 2 MB each).
  // H2D ∪ = 0.4, D2H ∪ = 0.2, compute ∪ = 1.3–2.0 = 0.7, copies ∪ = 0.6.
  const document = analyse('copy-overlapped.json');
  const device = document.devices[0]!;
  const step = device.steps[0]!;

  it('names rank 0 from distributedInfo and finds the one profiler step', () => {
    assert.equal(device.rank, 0);
    assert.equal(device.device, 0);
    assert.deepEqual(
      device.steps.map((s) => s.name),
      ['ProfilerStep#1'],
    );
    near(step.ms, 1.0, 'step');
    near(device.stepMs, 1.0, 'median step');
  });

  it('gives each engine its busy share of the step: kernels 0.7, H2D 0.4, D2H 0.2, no memsets', () => {
    near(step.busy.kernels, 0.7, 'kernels');
    near(step.busy.h2d, 0.4, 'h2d');
    near(step.busy.d2h, 0.2, 'd2h');
    near(step.busy.memsets, 0, 'memsets');
  });

  it('overlaps: H2D with kernels 0.2 of 0.4, D2H 0.1 of 0.2, copies 0.3 of 0.6, the two directions never together', () => {
    near(step.overlap.h2dWithKernel, 0.5, 'h2d with kernel');
    near(step.overlap.d2hWithKernel, 0.5, 'd2h with kernel');
    near(step.overlap.copyWithKernel, 0.5, 'copy with kernel');
    near(step.overlap.h2dWithD2h, 0, 'h2d with d2h');
    assert.equal(step.overlap.commWithCompute, null);
    assert.equal('commWithCompute' in device.overlap, false);
    near(device.overlap.copyWithKernel, 0.5, 'device copy with kernel');
  });

  it('exposed copy time is 1.1–1.3 and 2.0–2.1 (0.3 ms) and nothing idles', () => {
    near(step.exposedCopyMs, 0.3, 'exposed copy');
    near(step.idleMs, 0, 'idle');
  });

  it("takes 20 GB/s from the trace's copies (4 MB in 0.2 ms, 2 MB in 0.1 ms): the floor is the kernels' 0.7 ms, 70% efficient", () => {
    near(device.rates.h2dGbPerSecond, 20, 'h2d rate');
    near(device.rates.d2hGbPerSecond, 20, 'd2h rate');
    assert.equal(device.rates.source, 'trace');
    // H2D 8 MB / 20 GB/s = 0.4 ms, D2H 4 MB / 20 GB/s = 0.2 ms, kernels 0.4 + 0.3 = 0.7 ms; ops back to back, no per-op
    // cost.
    near(step.floor.h2dMs, 0.4, 'h2d term');
    near(step.floor.d2hMs, 0.2, 'd2h term');
    near(step.floor.kernelMs, 0.7, 'kernel term');
    assert.equal(step.floor.bound, 'kernels');
    near(step.floor.opCostMs, 0, 'op cost');
    near(device.efficiency, 0.7, 'efficiency');
  });

  it('finds nothing: the closing cudaDeviceSynchronize is not a host-sync', () => {
    assert.deepEqual(document.findings, []);
  });

  it('measures the same with its events shuffled', () => {
    const raw = {
      schemaVersion: 1,
      traceEvents: [...(parseJson('copy-overlapped.json').traceEvents as unknown[])].reverse(),
    };
    const shuffled = analyzeTraces([parseTraceDocument('reversed.json', raw)], { rates: null, toolVersion: 'test' });
    assert.deepEqual(shuffled.devices[0]!.steps, device.steps);
  });

  it('is a valid analysis document', () => {
    assert.doesNotThrow(() => AnalysisDocumentSchema.parse(document));
  });
});

describe('analyze: a pageable copy on the compute stream, which is the default stream (pageable-compute-stream.json)', () => {
  // Stream 7 only: pageable H2D 2.0–2.5 (5 MB), kernels 2.51–2.91 and 2.92–3.07, pinned D2H 3.08–3.18 (1 MB).
  // Step 2.0–3.18 = 1.18 ms; busy 0.5 + 0.4 + 0.15 + 0.1 = 1.15, so 0.03 idle in three 10 µs gaps.
  const document = analyse('pageable-compute-stream.json');
  const device = document.devices[0]!;
  const step = device.steps[0]!;

  it('nothing overlaps: all 0.6 ms of copies are exposed, 0.03 ms idle, and no gap is the host', () => {
    near(step.ms, 1.18, 'step');
    near(step.overlap.copyWithKernel, 0, 'copy with kernel');
    near(step.exposedCopyMs, 0.6, 'exposed copy');
    near(step.idleMs, 0.03, 'idle');
    near(step.hostWaitMs, 0, 'host wait');
    assert.equal(device.rank, null);
  });

  it("floors at the kernels' 0.55 ms (above H2D's 5 MB / 10 GB/s = 0.5) plus 2 kernels × the 10 µs least gap", () => {
    near(step.floor.kernelMs, 0.55, 'kernels');
    near(step.floor.h2dMs, 0.5, 'h2d');
    near(step.floor.opCostMs, 0.02, 'op cost');
    near(step.floor.ms, 0.57, 'floor');
    near(step.efficiency, 0.57 / 1.18, 'efficiency');
  });

  it('finds nothing that would save time: no other stream, nothing before the H2D or after the D2H, no faster pinned link', () => {
    // Everything runs on the default stream, so no other stream waited on it; the H2D comes first and the D2H last, so
    // on streams of their own they would hold nothing; and the pageable H2D ran at 10 GB/s, as fast as the pinned D2H.
    assert.deepEqual(document.findings, []);
    assert.ok(document.notes.some((n) => /stream 7 is taken for the legacy default stream/.test(n)));
  });
});

describe('analyze: a DDP rank whose all-reduce is partly hidden (ddp-nccl.json)', () => {
  // Rank 1, device 1. Step 0: compute 1.0–2.0, NCCL 1.4–2.2 → 0.6 of 0.8 hidden, 0.2 exposed, step 1.2 ms.
  // Step 1: compute 3.0–3.5, NCCL 3.5–3.9 → nothing hidden, 0.4 exposed, step 0.9 ms.
  const document = analyse('ddp-nccl.json');
  const device: DeviceAnalysis = document.devices[0]!;

  it('maps each ProfilerStep to the GPU through its launches, the NCCL launch from another thread included', () => {
    assert.equal(device.rank, 1);
    assert.equal(device.device, 1);
    assert.deepEqual(
      device.steps.map((s) => [s.name, Math.round(s.ms * 1e6) / 1e6]),
      [
        ['ProfilerStep#0', 1.2],
        ['ProfilerStep#1', 0.9],
      ],
    );
    near(device.stepMs, 1.05, 'median step');
  });

  it("counts nccl kernels as communication: HTA's overlap 0.75 then 0, and (0.6 + 0) / (0.8 + 0.4) = 0.5 over both", () => {
    near(device.steps[0]!.overlap.commWithCompute, 0.75, 'step 0');
    near(device.steps[1]!.overlap.commWithCompute, 0, 'step 1');
    near(device.overlap.commWithCompute, 0.5, 'pooled');
    near(device.steps[0]!.busy.communication, 0.8 / 1.2, 'communication busy');
    near(device.steps[0]!.busy.kernels, 1, 'kernels busy, NCCL included');
  });

  it('exposed communication 0.2 and 0.4 ms, median 0.3, and no finding: each all-reduce already starts as early as its data allows', () => {
    // Step 0's all-reduce starts while the compute runs; step 1's is the whole of the communication after the whole of
    // the compute, as one call: moved earlier it would reduce gradients not yet computed.
    near(device.exposedCommMs, 0.3, 'median exposed');
    assert.deepEqual(codes(document.findings), []);
  });

  it('floors each step at its compute alone (NCCL kernels wait, they do not compute): 1.0 and 0.5, median 0.75', () => {
    near(device.steps[0]!.floor.ms, 1.0, 'step 0');
    near(device.steps[1]!.floor.ms, 0.5, 'step 1');
    near(device.floorMs, 0.75, 'median floor');
    near(device.efficiency, 0.75 / 1.05, 'efficiency');
  });
});

describe('analyze: a synchronize in the middle of a step (host-sync.json)', () => {
  // Kernel 0.2–0.7; cudaStreamSynchronize 0.12–0.71, then 1 ms of host work; kernels launched at 1.70 and 1.72 run
  // 1.72–2.22 and 2.22–2.72; the closing cudaDeviceSynchronize (1.74–2.73) launches nothing after it.
  const document = analyse('host-sync.json');
  const step = document.devices[0]!.steps[0]!;

  it('the GPU idles 0.7–1.72 (1.02 ms) of a 2.52 ms step, and that gap waited on a launch', () => {
    near(step.ms, 2.52, 'step');
    near(step.idleMs, 1.02, 'idle');
    near(step.hostWaitMs, 1.02, 'host wait');
  });

  it('finds host-sync saving 0.59 ms, the time the host sat in the synchronize, not the 1.02 ms the GPU idled', () => {
    // Without the synchronize the host does its 1 ms of work from 0.12 ms, not from 0.71: the launches come 0.59 ms
    // sooner. Host-bound is what a CUDA graph would save on top: the launches issued at once, the kernels back to back.
    assert.deepEqual(codes(document.findings), ['host-sync', 'host-bound']);
    assert.equal(Math.round(document.findings[0]!.ms * 1e6) / 1e6, 0.59, 'host sync');
    assert.equal(Math.round(document.findings[1]!.ms * 1e6) / 1e6, 0.43, 'host bound');
  });
});

describe('analyze: several traces', () => {
  it('lists the traces by rank whatever the order given; with NCCL kernels on one rank alone there is no skew to give', () => {
    const document = analyse('ddp-nccl.json', 'copy-overlapped.json');
    assert.deepEqual(
      document.devices.map((d) => [d.rank, d.device]),
      [
        [0, 0],
        [1, 1],
      ],
    );
    assert.equal(document.collectives, undefined);
    assert.ok(!document.notes.some((n) => /not computed/.test(n)));
  });
});

describe("Kineto's copy names", () => {
  it('give the direction and the host side: HtoD from pageable, DtoH to pinned, DtoD with no host side', () => {
    assert.deepEqual(copyKind('Memcpy HtoD (Pageable -> Device)'), { direction: 'h2d', hostMemory: 'pageable' });
    assert.deepEqual(copyKind('Memcpy DtoH (Device -> Pinned)'), { direction: 'd2h', hostMemory: 'pinned' });
    assert.deepEqual(copyKind('Memcpy DtoD (Device -> Device)'), { direction: 'd2d', hostMemory: null });
    assert.deepEqual(copyKind('Memcpy PtoP (Device -> Device)'), { direction: 'p2p', hostMemory: null });
  });
});

function parseJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(fixture(name), 'utf8')) as Record<string, unknown>;
}
