import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DeviceParts, idealMs, layoutBound, type LayoutShape } from '../../src/measure/bound.js';
import { predictedShape, workloadFloor } from '../../src/measure/floor.js';
import { explainGap, topCause } from '../../src/measure/gap.js';
import { H100_BALANCED as h100 } from '../helpers/device-parts.js';

const MiB = 2 ** 20;
const close = (actual: number, expected: number, tolerance = 1e-9) =>
  assert.ok(Math.abs(actual - expected) < tolerance, `${actual} vs ${expected}`);

const layout = (chunks: number, streams = 4, extra: Partial<LayoutShape> = {}): LayoutShape => ({
  chunks,
  streams,
  issue: 'stream',
  kernelsChunkedMs: null,
  ...extra,
});

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

  it("takes the kernels chunked over the layout's streams when they were measured, not the whole-buffer kernel", () => {
    const b = layoutBound({ ...h100, kernelWholeMs: 30.58 }, layout(16, 4, { kernelsChunkedMs: 29.47 }));
    assert.equal(b.term, 'kernels');
    close(b.ms, 29.47 + (4.863 + 4.869) / 16);
  });

  it('makes H2D and D2H take turns with one copy engine, and is the serial sum without one', () => {
    close(layoutBound({ ...h100, copyEngines: 1 }, layout(16, 16)).ms, 4.863 + 4.869 + 3.695 / 16);
    close(layoutBound({ ...h100, copyEngines: 0 }, layout(16, 16)).ms, 4.863 + 3.695 + 4.869);
  });

  it("charges every chunk's copies their fixed cost on the device", () => {
    const parts = { ...h100, linkMs: null, h2dOpMs: 0.0025, d2hOpMs: 0.003 };
    const b = layoutBound(parts, layout(64, 64));
    assert.equal(b.term, 'D2H');
    close(b.perOpMs, 63 * 0.003);
    close(b.steadyMs, 4.869 + 63 * 0.003);
  });

  it("needs a stream's chunks one after another when there are fewer streams than chunks", () => {
    const b = layoutBound(h100, layout(16, 1));
    assert.equal(b.term, 'streams');
    close(b.ms, 4.863 + 3.695 + 4.869);
  });

  it("cannot end before the host has issued the rep (the op counts times each op's host cost), unless the gate excludes issue", () => {
    const b = layoutBound(
      { ...h100, gated: false, hostCopyMs: 0.1, hostLaunchMs: 0.2, hostSyncMs: 0.05 },
      layout(32, 4),
    );
    assert.equal(b.term, 'host issue');
    close(b.steadyMs, 64 * 0.1 + 32 * 0.2 + (2 + 9) * 0.05);
    close(b.ms, b.steadyMs + 4.869 / 32);
    assert.ok(
      !layoutBound({ ...h100, gated: true, hostCopyMs: 0.1, hostLaunchMs: 0.2 }, layout(32, 4)).terms.some(
        (t) => t.term === 'host issue',
      ),
    );
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
  h2dMs: (16 * MiB) / 55e6 + 0.0026,
  d2hMs: (16 * MiB) / 55e6 + 0.0018,
  kernelWholeMs: 0.19,
  h2dBytes: 16 * MiB,
  d2hBytes: 16 * MiB,
  h2dCopiesPerChunk: 1,
  d2hCopiesPerChunk: 1,
  kernelsPerChunk: 1,
  linkMs: (32 * MiB) / 96.5e6 + 2 * 0.0026,
  linkPieces: 2,
  copyEngines: 3,
  h2dOpMs: 0.0026,
  d2hOpMs: 0.0018,
  launchOpMs: 0.002,
  hostCopyMs: 0.002,
  hostLaunchMs: 0.0037,
  hostSyncMs: 0.001,
  gated: false,
};
/** The same with the host's 3.4 µs a launch that `cuda-pipe overhead` measured at best (GPU-FACTS.md). */
const slowHost: DeviceParts = { ...small, hostCopyMs: 0.0034, hostLaunchMs: 0.0034 };
const measuredSmall: Record<number, number> = { 4: 0.476, 8: 0.432, 16: 0.455, 32: 0.527, 64: 0.689 };

describe('the model on the 16 MiB pipeline measured on the H200', () => {
  it('stays a bound: at or under what was measured at every chunk count', () => {
    for (const [chunks, measured] of Object.entries(measuredSmall)) {
      const b = layoutBound(small, layout(Number(chunks), 4));
      assert.ok(
        b.ms <= measured * 1.01,
        `${chunks} chunks: bound ${b.ms.toFixed(3)} ms above the measured ${measured} ms`,
      );
    }
  });

  it('names the link as the limit at 8 chunks, and host issue at 64 once the host pays 3.4 µs an op', () => {
    assert.equal(layoutBound(small, layout(8)).term, 'link');
    const b = layoutBound(slowHost, layout(64, 4));
    assert.equal(b.term, 'host issue');
    close(b.steadyMs, 192 * 0.0034 + 11 * 0.001);
    assert.ok(b.ms <= 0.689, `bound ${b.ms} above the measured 0.689 ms`);
  });

  it("predicts the workload's floor at a chunk count within a factor of 2 of the measured best, and its time within 5%", () => {
    const floor = workloadFloor(small, layout(64), 4096);
    assert.ok(floor.chunks >= 4 && floor.chunks <= 16, `floor at ${floor.chunks} chunks`);
    assert.ok(
      Math.abs(floor.bound.ms - 0.432) / 0.432 < 0.05,
      `floor ${floor.bound.ms.toFixed(3)} ms vs the best measured 0.432 ms`,
    );
  });
});

describe('the causes of the gap', () => {
  it("add up to the time lost against the workload's ideal, exactly", () => {
    for (const chunks of [4, 8, 64]) {
      const b = layoutBound(small, layout(chunks, 4));
      const ideal = idealMs(small);
      const measured = measuredSmall[chunks] as number;
      const parts = explainGap(measured, b, ideal);
      close(
        parts.reduce((sum, p) => sum + p.ms, 0),
        measured - ideal,
        1e-12,
      );
    }
  });

  it('names host issue as the top cause at 64 chunks', () => {
    const parts = explainGap(0.689, layoutBound(slowHost, layout(64, 4)), idealMs(slowHost));
    assert.equal(topCause(parts)?.cause, 'host issue');
    assert.ok((topCause(parts)?.ms ?? 0) > 0.3);
  });
});

describe('the model in a Result', () => {
  it("records its parts, the workload's floor and a gap that adds up, and the table says them", async () => {
    const { makeResult } = await import('../helpers/results.js');
    const { modelLines } = await import('../../src/report/labels.js');
    const result = makeResult({ noise: 0.001 });
    const mode = result.modes.find((m) => m.role.kind === 'overlapped');
    const model = mode?.analysis?.model;
    assert.ok(mode && model);
    close(
      model.gap.reduce((s, p) => s + p.ms, 0),
      mode.stats.median - model.idealMs,
      1e-9,
    );
    const opCost = result.modes.find((m) => m.role.kind === 'op-cost' && m.role.op === 'h2d');
    close(model.parts.h2dOpMs, Math.min(...(opCost?.samplesMs ?? [])) / 200, 1e-12);
    assert.equal(model.statistic, 'min');
    assert.ok(
      model.floor.ms <= (mode.analysis?.bound.ms ?? 0) + 1e-9,
      "the workload's floor is no worse than this layout's",
    );
    const [floorLine, lossLine] = modelLines(mode);
    assert.match(
      floorLine ?? '',
      /^floor: this layout 5\.9\d\d ms, its floor \d\.\d{3} ms \(every part at its fastest rep, none from this layout\); the workload's floor (this layout \(32 chunks × 4 streams\), \d\.\d{3} ms predicted; none predicted faster|about \d+ chunks × \d+ streams, \d\.\d{3} ms predicted)/,
    );
    assert.match(lossLine ?? '', /^lost against the ideal at 32 chunks × 4 streams: .* most from [a-z ]+: /);
  });
});

describe('the model on results recorded on the H200', () => {
  it("splits every overlapped layout's lost time into causes that add up to it, and stays a bound", async () => {
    const { loadResults } = await import('../../src/result/load.js');
    for (const file of ['h200-balanced-16-model.json', 'h200-sweep-balanced.json']) {
      const [result] = loadResults(`test/fixtures/${file}`);
      const modes = result?.modes.filter((m) => m.analysis?.model) ?? [];
      assert.ok(modes.length > 0, file);
      for (const mode of modes) {
        const model = mode.analysis?.model;
        assert.ok(model);
        close(
          model.gap.reduce((s, p) => s + p.ms, 0),
          mode.stats.median - model.idealMs,
          1e-9,
        );
        assert.ok(
          (mode.analysis?.efficiency ?? 0) <= 1.02,
          `${file} ${mode.id}: efficiency ${mode.analysis?.efficiency}`,
        );
      }
    }
  });
});

/** The model's facts of a recorded Result, as the builder gave them when it ran. */
async function recomputed(
  result: import('../../src/result/schema.js').RunResult,
  mode: import('../../src/model/mode.js').ModeResult,
  modes = result.modes,
) {
  const { modelAnalysis } = await import('../../src/measure/model.js');
  const { chunkUnits } = await import('../../src/chunking.js');
  const facts = {
    buffers: result.buffers.map((b) => ({ role: b.role })),
    kernels: result.kernels.length,
    copyEngines: result.devices[0]?.asyncEngineCount ?? 0,
    gated: result.policy.gate,
    maxChunks: chunkUnits(result.pipeline.elements, result.pipeline.align),
  };
  return modelAnalysis(mode, modes, facts, 200, { kinds: ['non-blocking'], legacyOp: false });
}

/** The mode with every sample and issue time scaled: as if it had run `factor` times as long. */
function scaled(mode: import('../../src/model/mode.js').ModeResult, factor: number) {
  const samplesMs = mode.samplesMs.map((v) => v * factor);
  return {
    ...mode,
    samplesMs,
    hostIssueMs: mode.hostIssueMs.map((v) => v * factor),
    stats: { ...mode.stats, median: mode.stats.median * factor, min: mode.stats.min * factor },
  };
}

describe('a bound built from parts apart from the mode it bounds', () => {
  it('keeps every term when the bounded mode runs twice as long or half as long, on results recorded on the H200', async () => {
    const { loadResults } = await import('../../src/result/load.js');
    for (const file of ['h200-balanced-16-model.json', 'h200-sweep-balanced.json', 'h200-balanced-16-traced.json']) {
      const [result] = loadResults(`test/fixtures/${file}`);
      assert.ok(result);
      const overlapped = result.modes.filter((m) => m.role.kind === 'overlapped');
      assert.ok(overlapped.length > 0, file);
      for (const mode of overlapped) {
        const as = await recomputed(result, mode);
        assert.ok(as, `${file} ${mode.id}`);
        for (const factor of [0.5, 2]) {
          const other = scaled(mode, factor);
          const again = await recomputed(
            result,
            other,
            result.modes.map((m) => (m.id === mode.id ? other : m)),
          );
          assert.deepEqual(again?.bound.terms, as.bound.terms, `${file} ${mode.id} ×${factor}`);
        }
        assert.ok(
          as.bound.ms <= mode.stats.median * 1.01,
          `${file} ${mode.id}: bound ${as.bound.ms.toFixed(3)} ms over the measured ${mode.stats.median.toFixed(3)} ms`,
        );
        assert.ok(
          as.model.floor.ms <= (result.modes.find((m) => m.role.kind === 'serial')?.stats.median ?? 0),
          `${file} ${mode.id}: floor above serial`,
        );
      }
    }
  });

  it("keeps the ideal under the workload's floor and every measured layout, on the H200 compute-bound and graph-launches runs", async () => {
    // Recorded with the model before this rule: compute-bound's kernel ran 30.56 ms whole but 29.45 ms chunked, and
    // an ideal from the whole-buffer time sat above the measured pipeline; graph-launches' ideal sat above its floor.
    const { loadResults } = await import('../../src/result/load.js');
    // h200-graph-launches-host-bound.json: its 200-launch batch cost 3.97 µs a launch on the host, its 1,024 launches
    // over 4 streams 3.15 µs each, and a host term from the batch alone put the bound 15% above the measurement.
    for (const file of ['h200-compute-bound.json', 'h200-graph-launches.json', 'h200-graph-launches-host-bound.json']) {
      const [result] = loadResults(`test/fixtures/${file}`);
      assert.ok(result);
      const serial = result.modes.find((m) => m.role.kind === 'serial');
      assert.ok(serial);
      for (const mode of result.modes.filter((m) => m.role.kind === 'overlapped')) {
        const as = await recomputed(result, mode);
        assert.ok(as, `${file} ${mode.id}`);
        assert.ok(
          as.model.idealMs <= as.model.floor.ms,
          `${file} ${mode.id}: ideal ${as.model.idealMs} over the floor ${as.model.floor.ms}`,
        );
        assert.ok(as.model.floor.ms <= serial.stats.min, `${file} ${mode.id}: floor over serial`);
        assert.ok(
          as.model.idealMs <= mode.stats.min,
          `${file} ${mode.id}: ideal ${as.model.idealMs} over the measured ${mode.stats.min}`,
        );
        assert.ok(
          as.bound.ms <= mode.stats.median * 1.01,
          `${file} ${mode.id}: bound ${as.bound.ms} over the measured ${mode.stats.median}`,
        );
      }
    }
  });

  it("takes host issue from the small-op batches times the layout's op counts, whatever the layout's own issue loop took", async () => {
    const { makeResult } = await import('../helpers/results.js');
    const result = makeResult({ noise: 0.001 });
    const mode = result.modes.find((m) => m.role.kind === 'overlapped');
    assert.ok(mode);
    const host = (await recomputed(result, mode))?.bound.terms.find((t) => t.term === 'host issue');
    const perOp = (op: string) => {
      const batch = result.modes.find((m) => m.role.kind === 'op-cost' && m.role.op === op);
      return Math.min(...(batch?.hostIssueMs ?? [])) / 200;
    };
    const sync = Math.min(
      ...result.modes
        .filter((m) => m.role.kind === 'issue-cost' && ['record-timing', 'record-untimed', 'wait'].includes(m.role.op))
        .map((m) => Math.min(...m.hostIssueMs) / (m.issueCost?.opsPerRep ?? 1)),
    );
    // 32 chunks over 4 streams: 64 copies, 32 launches, and the start and end records with 3 forks and joins a stream.
    close(host?.steadyMs ?? 0, 64 * Math.min(perOp('h2d'), perOp('d2h')) + 32 * perOp('launch') + 11 * sync, 1e-12);
    const slowIssue = { ...mode, hostIssueMs: [40, 41, 42] };
    const again = await recomputed(
      result,
      slowIssue,
      result.modes.map((m) => (m.id === mode.id ? slowIssue : m)),
    );
    assert.deepEqual(
      again?.bound.terms.find((t) => t.term === 'host issue'),
      host,
    );
  });

  it("lets noise in a part lower the bound and never lift it: a part's slow reps leave its term alone", async () => {
    const { makeResult } = await import('../helpers/results.js');
    const result = makeResult({ noise: 0.001 });
    const mode = result.modes.find((m) => m.role.kind === 'overlapped');
    assert.ok(mode);
    const before = await recomputed(result, mode);
    // "H2D + D2H at once" with a quarter of its reps 6% slow, as on a busy host: its median rises, its best does not.
    const noisy = result.modes.map((m) =>
      m.role.kind === 'link' ? { ...m, samplesMs: m.samplesMs.map((v, i) => (i % 4 === 0 ? v * 1.06 : v)) } : m,
    );
    const after = await recomputed(result, mode, noisy);
    assert.deepEqual(after?.bound.terms, before?.bound.terms);
  });

  it('bounds a graph replay by the kernels replayed as a graph, not by the kernels stream-issued with their host cost', async () => {
    const { modelAnalysis } = await import('../../src/measure/model.js');
    const { modeId } = await import('../../src/vocabulary.js');
    const { summarize } = await import('../../src/measure/stats.js');
    const base = { chunks: 1024, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' } as const;
    const mode = (
      role: import('../../src/vocabulary.js').ModeRole,
      samplesMs: number[],
      hostIssueMs: number[] = [0.01],
    ) => ({
      id: modeId(role),
      role,
      device: 0,
      description: '',
      bytes: { h2d: 0, d2h: 0 },
      samplesMs,
      hostIssueMs,
      stats: summarize(samplesMs),
      stoppedBy: 'noise-stable' as const,
      elapsedMs: 1,
      gateTimeouts: 0,
      smClockMHz: null,
      analysis: null,
    });
    // configs/graph-launches.yaml on the H200: 1,024 tiny kernels, 4.1 ms stream-issued and 0.35 ms as a graph.
    const modes = [
      mode({ kind: 'serial' }, [0.0082, 0.0081]),
      mode({ kind: 'stage', stage: 'kernel', kernel: 'bump' }, [0.0045, 0.0046]),
      mode({ kind: 'kernels-chunked', layout: base }, [3.94, 3.95], [3.9, 3.9]),
      mode({ kind: 'kernels-chunked', layout: { ...base, issue: 'graph' } }, [0.351, 0.352]),
      mode({ kind: 'op-cost', op: 'launch' }, [0.4, 0.41], [0.7, 0.72]),
      mode({ kind: 'overlapped', layout: base }, [4.1, 4.12], [4.0, 4.05]),
      mode({ kind: 'overlapped', layout: { ...base, issue: 'graph' } }, [0.349, 0.35]),
    ];
    const facts = {
      buffers: [{ role: 'scratch' as const }],
      kernels: 1,
      copyEngines: 3,
      gated: false,
      maxChunks: 262144 / 256,
    };
    const graph = modelAnalysis(modes[6] as (typeof modes)[number], modes, facts, 200, {
      kinds: ['non-blocking'],
      legacyOp: false,
    });
    const stream = modelAnalysis(modes[5] as (typeof modes)[number], modes, facts, 200, {
      kinds: ['non-blocking'],
      legacyOp: false,
    });
    assert.ok(graph && stream);
    assert.equal(graph.bound.term, 'kernels');
    close(graph.bound.ms, 0.351);
    assert.ok(!graph.bound.terms.some((t) => t.term === 'host issue'), 'a graph replay issues one launch');
    close(stream.bound.ms, 3.94);
    assert.ok(graph.model.floor.ms <= 0.0081 && stream.model.floor.ms <= 0.0081, 'no floor above the serial run');
  });
});

describe("the workload's floor", () => {
  it('is never above the serial run, even from kernels chunked at 65,536 chunks with their host issue in them', () => {
    // configs/small.yaml at 65,536 chunks (seen: "floor 136.0 ms" against a 0.818 ms serial pipeline).
    const floor = workloadFloor(small, layout(65536, 4, { kernelsChunkedMs: 136 }), 65536 * 64, 0.818);
    assert.ok(floor.bound.ms <= 0.818, `floor ${floor.bound.ms} ms`);
    assert.ok(floor.chunks >= 4 && floor.chunks <= 16, `floor at ${floor.chunks} chunks`);
  });

  it('predicts other chunk counts from the whole-buffer kernels where the chunked time, scaled, says more', () => {
    const shape = predictedShape(small, layout(65536, 4, { kernelsChunkedMs: 136 }), 8, 4);
    close(shape.kernelsChunkedMs ?? 0, 0.19 + 7 * 0.002);
    close(
      predictedShape(small, layout(16, 4, { kernelsChunkedMs: 0.21 }), 8, 4).kernelsChunkedMs ?? 0,
      0.21 - 8 * 0.002,
    );
  });

  it('never predicts the kernels faster than they were measured, whole or chunked', () => {
    // 16 chunks took 0.2 ms; 8 fewer launches would make 0.184 ms, below the 0.19 ms of the kernels on whole buffers.
    close(predictedShape(small, layout(16, 4, { kernelsChunkedMs: 0.2 }), 8, 4).kernelsChunkedMs ?? 0, 0.19);
  });

  it('is the serial run when no predicted layout beats it', () => {
    const floor = workloadFloor(small, layout(8), 4096, 0.2);
    assert.deepEqual([floor.chunks, floor.streams, floor.bound.ms, floor.bound.term], [1, 1, 0.2, 'serial']);
  });
});

describe('streams that are all one stream', () => {
  it('count as one stream in the bound, and are named among what serialises the layout', async () => {
    const { makeResult } = await import('../helpers/results.js');
    const { modelAnalysis, serialisersOf } = await import('../../src/measure/model.js');
    const result = makeResult({ noise: 0.001 });
    const mode = result.modes.find((m) => m.role.kind === 'overlapped');
    assert.ok(mode);
    const facts = {
      buffers: result.buffers.map((b) => ({ role: b.role })),
      kernels: 1,
      copyEngines: 3,
      gated: false,
      maxChunks: 2 ** 20,
    };
    const kinds = (kind: 'per-thread-default' | 'non-blocking' | 'legacy-default') => ({
      kinds: [kind, kind, kind, kind],
      legacyOp: false,
    });
    const one = modelAnalysis(mode, result.modes, facts, 200, kinds('per-thread-default'));
    const four = modelAnalysis(mode, result.modes, facts, 200, kinds('non-blocking'));
    const streams = (a: typeof one) => a?.bound.terms.find((t) => t.term === 'streams')?.ms ?? 0;
    // Balanced on the H100: one stream runs the 32 chunks' stages back to back, about the serial time; four, a quarter.
    close(streams(one), 4 * streams(four), 1e-9);
    assert.equal(one?.bound.term, 'streams');
    assert.deepEqual(one?.model.serialisers, ['per-thread default stream']);
    assert.deepEqual(four?.model.serialisers, []);
    assert.equal(streams(modelAnalysis(mode, result.modes, facts, 200, kinds('legacy-default'))), streams(one));
    assert.deepEqual(
      serialisersOf({ kinds: ['blocking', 'blocking'], legacyOp: true }, [{ role: 'in', hostMemory: 'pageable' }]),
      ['legacy default stream', 'pageable memory'],
    );
  });
});
