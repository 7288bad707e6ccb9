import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DeviceParts, idealMs, layoutBound, type LayoutShape } from '../../src/measure/bound.js';
import { workloadFloor } from '../../src/measure/floor.js';
import { explainGap, topCause } from '../../src/measure/gap.js';

const MiB = 2 ** 20;
const close = (actual: number, expected: number, tolerance = 1e-9) => assert.ok(Math.abs(actual - expected) < tolerance, `${actual} vs ${expected}`);

// Measured on the H100 host (balanced config, 256 MiB each way): copies 4.863 and 4.869 ms, FMA kernel 3.695 ms,
// both directions at once 5.387 ms. With no per-op or host costs the model is the plain pipeline bound.
const h100: DeviceParts = {
  h2dMs: 4.863, d2hMs: 4.869, kernelWholeMs: 3.695, h2dBytes: 256 * MiB, d2hBytes: 256 * MiB,
  h2dCopiesPerChunk: 1, d2hCopiesPerChunk: 1, kernelsPerChunk: 1, linkMs: 5.387, linkPieces: 32, copyEngines: 3,
  h2dOpMs: 0, d2hOpMs: 0, launchOpMs: 0, hostCopyMs: 0, hostLaunchMs: 0, gated: true,
};
const layout = (chunks: number, streams = 4, extra: Partial<LayoutShape> = {}): LayoutShape => ({ chunks, streams, issue: 'stream', kernelsChunkedMs: null, ...extra });

describe('the overlap bound of a layout', () => {
  it('is set by the shared link, with one direction alone while the pipeline fills and drains', () => {
    const b = layoutBound(h100, layout(32, 32));
    assert.equal(b.term, 'link');
    const fill = (4.863 + 3.695) / 32;
    const drain = (3.695 + 4.869) / 32;
    const movedAlone = (fill / 4.863 + drain / 4.869) / 2;
    close(b.fillDrainMs, fill + drain);
    close(b.steadyMs, 5.387 * (1 - movedAlone));
    close(b.ms, 5.387 * (1 - movedAlone) + fill + drain);
  });

  it('falls back to the slowest stage alone, plus the other stages of one chunk, without a link figure', () => {
    const b = layoutBound({ ...h100, linkMs: null }, layout(32, 32));
    assert.equal(b.term, 'D2H');
    close(b.ms, 4.869 + (4.863 + 3.695) / 32);
  });

  it('takes the kernels chunked over the layout\'s streams when they were measured, not the whole-buffer kernel', () => {
    const b = layoutBound({ ...h100, kernelWholeMs: 30.58 }, layout(16, 4, { kernelsChunkedMs: 29.47 }));
    assert.equal(b.term, 'kernels');
    close(b.ms, 29.47 + (4.863 + 4.869) / 16);
  });

  it('makes H2D and D2H take turns with one copy engine, and is the serial sum without one', () => {
    close(layoutBound({ ...h100, copyEngines: 1 }, layout(16, 16)).ms, 4.863 + 4.869 + 3.695 / 16);
    close(layoutBound({ ...h100, copyEngines: 0 }, layout(16, 16)).ms, 4.863 + 3.695 + 4.869);
  });

  it('charges every chunk\'s copies their fixed cost on the device', () => {
    const parts = { ...h100, linkMs: null, h2dOpMs: 0.0025, d2hOpMs: 0.003 };
    const b = layoutBound(parts, layout(64, 64));
    assert.equal(b.term, 'D2H');
    close(b.perOpMs, 63 * 0.003);
    close(b.steadyMs, 4.869 + 63 * 0.003);
  });

  it('needs a stream\'s chunks one after another when there are fewer streams than chunks', () => {
    const b = layoutBound(h100, layout(16, 1));
    assert.equal(b.term, 'streams');
    close(b.ms, 4.863 + 3.695 + 4.869);
  });

  it('cannot end before the host has issued the rep (the op counts times each op\'s host cost), unless the gate excludes issue', () => {
    const b = layoutBound({ ...h100, gated: false, hostCopyMs: 0.1, hostLaunchMs: 0.2, hostSyncMs: 0.05 }, layout(32, 4));
    assert.equal(b.term, 'host issue');
    close(b.steadyMs, 64 * 0.1 + 32 * 0.2 + (2 + 9) * 0.05);
    close(b.ms, b.steadyMs + 4.869 / 32);
    assert.ok(!layoutBound({ ...h100, gated: true, hostCopyMs: 0.1, hostLaunchMs: 0.2 }, layout(32, 4)).terms.some((t) => t.term === 'host issue'));
  });

  it('has no host term for a graph replay, which issues one launch a rep, and charges it no per-launch cost it did not measure', () => {
    const parts = { ...h100, gated: false, hostCopyMs: 0.1, hostLaunchMs: 0.2, launchOpMs: 0.002 };
    const graph = layoutBound(parts, layout(32, 4, { issue: 'graph' }));
    assert.ok(!graph.terms.some((t) => t.term === 'host issue'));
    close(graph.terms.find((t) => t.term === 'kernels')?.steadyMs ?? 0, 3.695);
    close(layoutBound(parts, layout(32, 4)).terms.find((t) => t.term === 'kernels')?.steadyMs ?? 0, 3.695 + 31 * 0.002);
  });
});

// The 16 MiB pipeline of GPU-FACTS.md on the H200 (FMA-like kernel 0.19 ms alone, serial 0.80 ms): single-direction
// copies at 55 GB/s, both ways 96.5 GB/s in 4 MiB pieces, small copies 2.6 µs (H2D) and 1.8 µs (D2H) on the device,
// host cost 2 µs a copy and 3.7 µs a launch in a tight loop. cuda-pipe measured 0.476, 0.432, 0.455, 0.527 and
// 0.689 ms at 4, 8, 16, 32 and 64 chunks over 4 streams; at 64 chunks the host took about 0.67 ms to issue a rep's
// 192 ops (3.5 µs each). An event record or a wait costs the host about 1 µs.
const small: DeviceParts = {
  h2dMs: 16 * MiB / 55e6 + 0.0026, d2hMs: 16 * MiB / 55e6 + 0.0018, kernelWholeMs: 0.19, h2dBytes: 16 * MiB, d2hBytes: 16 * MiB,
  h2dCopiesPerChunk: 1, d2hCopiesPerChunk: 1, kernelsPerChunk: 1, linkMs: 32 * MiB / 96.5e6 + 2 * 0.0026, linkPieces: 2, copyEngines: 3,
  h2dOpMs: 0.0026, d2hOpMs: 0.0018, launchOpMs: 0.002, hostCopyMs: 0.002, hostLaunchMs: 0.0037, hostSyncMs: 0.001, gated: false,
};
/** The same with the host's 3.4 µs a launch that `cuda-pipe overhead` measured at best (GPU-FACTS.md). */
const slowHost: DeviceParts = { ...small, hostCopyMs: 0.0034, hostLaunchMs: 0.0034 };
const measuredSmall: Record<number, number> = { 4: 0.476, 8: 0.432, 16: 0.455, 32: 0.527, 64: 0.689 };

describe('the model on the 16 MiB pipeline measured on the H200', () => {
  it('stays a bound: at or under what was measured at every chunk count', () => {
    for (const [chunks, measured] of Object.entries(measuredSmall)) {
      const b = layoutBound(small, layout(Number(chunks), 4));
      assert.ok(b.ms <= measured * 1.01, `${chunks} chunks: bound ${b.ms.toFixed(3)} ms above the measured ${measured} ms`);
    }
  });

  it('names the link as the limit at 8 chunks, and host issue at 64 once the host pays 3.4 µs an op', () => {
    assert.equal(layoutBound(small, layout(8)).term, 'link');
    const b = layoutBound(slowHost, layout(64, 4));
    assert.equal(b.term, 'host issue');
    close(b.steadyMs, 192 * 0.0034 + 11 * 0.001);
    assert.ok(b.ms <= 0.689, `bound ${b.ms} above the measured 0.689 ms`);
  });

  it('predicts the workload\'s floor at a chunk count within a factor of 2 of the measured best, and its time within 5%', () => {
    const floor = workloadFloor(small, layout(64), 4096);
    assert.ok(floor.chunks >= 4 && floor.chunks <= 16, `floor at ${floor.chunks} chunks`);
    assert.ok(Math.abs(floor.bound.ms - 0.432) / 0.432 < 0.05, `floor ${floor.bound.ms.toFixed(3)} ms vs the best measured 0.432 ms`);
  });
});

describe('the causes of the gap', () => {
  it('add up to the time lost against the workload\'s ideal, exactly', () => {
    for (const chunks of [4, 8, 64]) {
      const b = layoutBound(small, layout(chunks, 4));
      const ideal = idealMs(small);
      const measured = measuredSmall[chunks] as number;
      const parts = explainGap(measured, b, ideal);
      close(parts.reduce((sum, p) => sum + p.ms, 0), measured - ideal, 1e-12);
    }
  });

  it('names host issue as the top cause at 64 chunks', () => {
    const parts = explainGap(0.689, layoutBound(slowHost, layout(64, 4)), idealMs(slowHost));
    assert.equal(topCause(parts)?.cause, 'host issue');
    assert.ok((topCause(parts)?.ms ?? 0) > 0.3);
  });
});

describe('the model in a Result', () => {
  it('records its parts, the workload\'s floor and a gap that adds up, and the table says them', async () => {
    const { makeResult } = await import('../helpers/results.js');
    const { modelLines } = await import('../../src/report/labels.js');
    const result = makeResult({ noise: 0.001 });
    const mode = result.modes.find((m) => m.role.kind === 'overlapped');
    const model = mode?.analysis?.model;
    assert.ok(mode && model);
    close(model.gap.reduce((s, p) => s + p.ms, 0), mode.stats.median - model.idealMs, 1e-9);
    const opCost = result.modes.find((m) => m.role.kind === 'op-cost' && m.role.op === 'h2d');
    close(model.parts.h2dOpMs, Math.min(...(opCost?.samplesMs ?? [])) / 200, 1e-12);
    assert.equal(model.statistic, 'min');
    assert.ok(model.floor.ms <= (mode.analysis?.bound.ms ?? 0) + 1e-9, 'the workload\'s floor is no worse than this layout\'s');
    const [floorLine, lossLine] = modelLines(mode);
    assert.match(floorLine ?? '', /^floor: this layout 5\.9\d\d ms, its floor \d\.\d{3} ms; the workload's floor \d\.\d{3} ms at about \d+ chunks × \d+ streams/);
    assert.match(lossLine ?? '', /^lost against the ideal at 32 chunks × 4 streams: .* most from [a-z ]+: /);
  });
});

describe('the model on results recorded on the H200', () => {
  it('splits every overlapped layout\'s lost time into causes that add up to it, and stays a bound', async () => {
    const { loadResults } = await import('../../src/result/load.js');
    for (const file of ['h200-balanced-16-model.json', 'h200-sweep-balanced.json']) {
      const [result] = loadResults(`test/fixtures/${file}`);
      const modes = result?.modes.filter((m) => m.analysis?.model) ?? [];
      assert.ok(modes.length > 0, file);
      for (const mode of modes) {
        const model = mode.analysis?.model;
        assert.ok(model);
        close(model.gap.reduce((s, p) => s + p.ms, 0), mode.stats.median - model.idealMs, 1e-9);
        assert.ok((mode.analysis?.efficiency ?? 0) <= 1.02, `${file} ${mode.id}: efficiency ${mode.analysis?.efficiency}`);
      }
    }
  });
});
