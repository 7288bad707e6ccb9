import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SAME_LAYOUT } from '../../src/measure/advice.js';
import { deviceParts, modelAnalysis, type PipelineFacts } from '../../src/measure/model.js';
import { summarize } from '../../src/measure/stats.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { ModeRole } from '../../src/vocabulary.js';

// The model of one overlapped mode (src/measure/model.ts) on a small hand-built device: the floor a layout measured
// no faster overrules, the host stage the model has no term for, the SM clocks the kernel parts are put at, the
// link's rate, and a collective's words, at the edges mutation testing found unpinned.

type Layout = Extract<ModeRole, { kind: 'overlapped' }>['layout'];

const close = (actual: number | null | undefined, expected: number, what = '') =>
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what} ${actual} ≠ ${expected}`,
  );

let ids = 0;
function mode(role: ModeRole, samplesMs: number[], extra: Record<string, unknown> = {}): ModeResult {
  ids += 1;
  return {
    id: `m${ids}`,
    role,
    device: 0,
    description: '',
    bytes: { h2d: 0, d2h: 0 },
    samplesMs,
    hostIssueMs: [],
    stats: summarize(samplesMs),
    stoppedBy: 'noise-stable',
    elapsedMs: 1,
    gateTimeouts: 0,
    smClockMHz: null,
    analysis: null,
    ...extra,
  } as ModeResult;
}

const layout = (chunks: number, streams: number, extra: Partial<Layout> = {}): Layout => ({
  chunks,
  streams,
  order: 'depth-first',
  topology: 'chunk-per-stream',
  ...extra,
});
const overlapped = (l: Layout, ms: number, extra: Record<string, unknown> = {}) =>
  mode({ kind: 'overlapped', layout: l }, [ms], extra);

const facts: PipelineFacts = {
  buffers: [{ role: 'in' }, { role: 'out' }],
  kernels: 1,
  copyEngines: 2,
  gated: false,
  maxChunks: 64,
};

/** A device whose model predicts 32 chunks × 3 streams (5.38 ms) far faster than 2 × 2 (7.59 ms). */
const device = (serialMs = 11, linkMs = 5) => [
  mode({ kind: 'serial' }, [serialMs]),
  mode({ kind: 'stage', stage: 'h2d' }, [4], { bytes: { h2d: 4e8, d2h: 0 } }),
  mode({ kind: 'stage', stage: 'd2h' }, [4], { bytes: { h2d: 0, d2h: 4e8 } }),
  mode({ kind: 'stage', stage: 'kernel', kernel: 'k' }, [3]),
  mode({ kind: 'link', copiesPerDirection: 8, streamsPerDirection: 2 }, [linkMs], { bytes: { h2d: 4e8, d2h: 4e8 } }),
  mode({ kind: 'op-cost', op: 'launch' }, [0.5], { hostIssueMs: [0.4] }),
  mode({ kind: 'op-cost', op: 'h2d' }, [0.8], { hostIssueMs: [0.4] }),
  mode({ kind: 'op-cost', op: 'd2h' }, [0.8], { hostIssueMs: [0.4] }),
];

const analyse = (own: ModeResult, others: readonly ModeResult[], f: PipelineFacts = facts) =>
  modelAnalysis(own, [...others, own], f, 100);

describe('a layout the Result measured no faster than the predicted best', { timeout: 5_000 }, () => {
  const own = overlapped(layout(2, 2), 9);
  const predicted = analyse(own, device());

  it('predicts 32 chunks × 3 streams where no other layout was measured', () => {
    assert.equal(predicted?.model.floor.chunks, 32);
    assert.equal(predicted?.model.floor.streams, 3);
    assert.equal(predicted?.model.floor.limitedBy, 'link');
    assert.equal('overruled' in (predicted?.model.floor ?? {}), false);
    assert.equal(predicted?.model.advice?.change, 'use 32 chunks × 3 streams (now 2 × 2)');
  });

  it('overrules the prediction where that layout was measured slower, and the floor is this layout', () => {
    const got = analyse(own, [...device(), overlapped(layout(32, 3), 9.5)]);
    assert.ok(got && predicted);
    assert.deepEqual(got.model.floor, {
      chunks: 2,
      streams: 2,
      ms: got.bound.ms,
      limitedBy: 'link',
      overruled: { chunks: 32, streams: 3, predictedMs: predicted.model.floor.ms, measuredMs: 9.5 },
    });
    assert.equal(got.model.advice?.code, 'none');
  });

  it('overrules it at the same-layout share, and not where the layout measured faster by more', () => {
    const at = 9 * (1 - SAME_LAYOUT);
    assert.equal(analyse(own, [...device(), overlapped(layout(32, 3), at)])?.model.floor.overruled?.measuredMs, at);
    const faster = analyse(own, [...device(), overlapped(layout(32, 3), at - 1e-6)])?.model.floor;
    assert.equal(faster?.overruled, undefined);
    assert.equal(faster?.chunks, 32);
  });

  it('takes only a layout of the same variants, on the same device, at the predicted chunks and streams', () => {
    const others: Array<[string, ModeResult]> = [
      ['another order', overlapped(layout(32, 3, { order: 'breadth-first' }), 9.5)],
      ['stage per stream', overlapped(layout(32, 3, { topology: 'stage-per-stream' }), 9.5)],
      ['a graph', overlapped(layout(32, 3, { issue: 'graph' }), 9.5)],
      ['slots', overlapped(layout(32, 3, { slots: 2 }), 9.5)],
      ['a legacy-stream op', overlapped(layout(32, 3, { legacyOp: { chunk: 0, op: 'h2d' } }), 9.5)],
      ['a per-thread op', overlapped(layout(32, 3, { perThreadOp: { chunk: 0, op: 'kernel' } }), 9.5)],
      ['another device', overlapped(layout(32, 3), 9.5, { device: 1 })],
      ['other chunks', overlapped(layout(16, 3), 9.5)],
      ['other streams', overlapped(layout(32, 2), 9.5)],
    ];
    for (const [what, other] of others) {
      const floor = analyse(own, [...device(), other])?.model.floor;
      assert.equal(floor?.overruled, undefined, what);
      assert.equal(floor?.chunks, 32, what);
    }
  });

  it('never takes a host stage variant for a layout without one', () => {
    const withHost = overlapped(layout(32, 3, { host: 'scale' }), 9.5);
    assert.equal(analyse(own, [...device(), withHost])?.model.floor.overruled, undefined);
  });

  it('matches any streams for a stage-per-stream layout, whose streams are its stages', () => {
    const staged = overlapped(layout(2, 2, { topology: 'stage-per-stream' }), 9);
    const best = analyse(staged, device())?.model.floor;
    assert.ok(best && best.chunks !== 2);
    const twin = overlapped(layout(best.chunks, best.streams + 5, { topology: 'stage-per-stream' }), 9.5);
    assert.equal(analyse(staged, [...device(), twin])?.model.floor.overruled?.measuredMs, 9.5);
  });
});

describe('a host stage and the serial baseline', { timeout: 5_000 }, () => {
  const cpuStage = {
    workers: 4,
    tasksPerRep: 2,
    bytesPerRep: 4e8,
    taskMedianMs: 1,
    busyMs: [1, 1, 0, 0],
    gpuMedianMs: 8,
    cpuMedianMs: 9,
  };

  it('names this layout as the best for a host stage on the JS thread, which the model has no term for', () => {
    const thread = overlapped(layout(2, 2, { host: 'scale' }), 9);
    const got = analyse(thread, device());
    assert.deepEqual([got?.model.floor.chunks, got?.model.floor.streams, got?.model.floor.ms], [2, 2, got?.bound.ms]);
    assert.equal(
      got?.bound.terms.some((t) => t.term === 'CPU stage'),
      false,
    );
  });

  it('puts the CPU stage on workers in the bound beside the GPU, its last task after the GPU', () => {
    const workers = overlapped(layout(2, 2, { host: 'scale' }), 9, { cpuStage: { ...cpuStage, taskMedianMs: 8 } });
    const got = analyse(workers, device());
    const gpu = analyse(overlapped(layout(2, 2), 9), device());
    assert.ok(got && gpu);
    // 2 chunks' tasks of 8 ms over 4 workers (4 ms) and one to fill: 12 ms, under the GPU's side and its 8 ms tail.
    const cpu = got.bound.terms.find((t) => t.term === 'CPU stage');
    close(cpu?.ms, 12);
    assert.equal(got.bound.term, 'link');
    close(got.bound.ms, gpu.bound.ms + 8);
  });

  it('bounds the floor by serial, unless serial ran a host stage this layout lacks', () => {
    const own = overlapped(layout(2, 2), 9);
    const serialFirst = analyse(own, device(5))?.model.floor;
    assert.deepEqual(serialFirst, { chunks: 1, streams: 1, ms: 5, limitedBy: 'serial' });
    const staged = overlapped(layout(4, 2, { host: 'scale' }), 9);
    const without = analyse(own, [...device(5), staged])?.model.floor;
    assert.equal(without?.chunks, 32);
    assert.equal(without?.limitedBy, 'link');
  });
});

describe("the kernel parts at the mode's SM clock", { timeout: 5_000 }, () => {
  const at = (min: number, max = min) => ({ smClockMHz: { min, max } });
  const clocked = (kernelClock: number) => [
    mode({ kind: 'serial' }, [11]),
    mode({ kind: 'stage', stage: 'h2d' }, [4], { bytes: { h2d: 4e8, d2h: 0 }, ...at(500) }),
    mode({ kind: 'stage', stage: 'd2h' }, [4], { bytes: { h2d: 0, d2h: 4e8 }, ...at(500) }),
    mode({ kind: 'stage', stage: 'kernel', kernel: 'a' }, [3], at(kernelClock)),
    mode({ kind: 'stage', stage: 'kernel', kernel: 'b' }, [1], at(kernelClock)),
    mode({ kind: 'kernels-chunked', layout: layout(2, 2) }, [2.5], at(kernelClock)),
  ];
  const own = overlapped(layout(2, 2), 9, at(1980));

  it('puts kernels timed at half the clock at half their time, and says the parts were rebuilt', () => {
    const got = analyse(own, clocked(990));
    assert.deepEqual(got?.model.clocks, {
      status: 'rebuilt',
      mode: { min: 1980, max: 1980 },
      parts: { min: 990, max: 990 },
    });
    assert.equal(got?.model.parts.kernelWholeMs, 2);
    assert.equal(got?.model.kernelsChunkedMs, 1.25);
    assert.equal(got?.model.parts.h2dMs, 4);
  });

  it('compares the kernels chunked as the layout runs them among the kernel parts', () => {
    const chunkedApart = clocked(990).map((m) => (m.role.kind === 'kernels-chunked' ? { ...m, ...at(1100) } : m));
    const got = analyse(own, chunkedApart);
    assert.deepEqual(got?.model.clocks?.parts, { min: 990, max: 1100 });
    assert.equal(got?.model.kernelsChunkedMs, (2.5 * 1100) / 1980);
  });

  it('keeps the kernel times where the clocks match', () => {
    const got = analyse(own, clocked(1960));
    assert.equal(got?.model.clocks?.status, 'matching');
    assert.deepEqual(got?.model.clocks?.parts, { min: 1960, max: 1960 });
    assert.equal(got?.model.parts.kernelWholeMs, 4);
    assert.equal(got?.model.kernelsChunkedMs, 2.5);
  });

  it('keeps them where the clocks moved through the mode’s', () => {
    const moving = clocked(990).map((m) =>
      m.role.kind === 'stage' && m.role.stage === 'kernel' ? { ...m, smClockMHz: { min: 900, max: 2000 } } : m,
    );
    const got = analyse(own, moving);
    assert.equal(got?.model.clocks?.status, 'moving');
    assert.equal(got?.model.parts.kernelWholeMs, 4);
  });
});

describe("the link's rate in the advice", { timeout: 5_000 }, () => {
  it("gives the shared link at both directions' bytes over the link's fastest rep", () => {
    const own = overlapped(layout(32, 3), 12.5);
    const advice = analyse(own, device(30, 12))?.model.advice;
    assert.equal(advice?.cause, 'shared link');
    assert.equal(
      advice?.why,
      "both copy directions share the PCIe link, 66.7 GB/s at its fastest rep: that is this workload's limit, whatever the layout",
    );
  });
});

describe("a collective's words in the model", { timeout: 5_000 }, () => {
  const collective = { h2d: 0, d2h: 0, collective: 1e8 };
  const alone = (buckets: number, ms: number) =>
    mode({ kind: 'stage', stage: 'collective', collective: 'allreduce', buckets }, [ms], {
      bytes: collective,
      collective: { collective: 'allreduce', calls: buckets, bytes: 1e8 },
    });
  const modes = [mode({ kind: 'stage', stage: 'kernel', kernel: 'k' }, [6]), alone(1, 4), alone(4, 4.4)];
  const layers: PipelineFacts = { buffers: [], kernels: 1, copyEngines: 2, gated: false, maxChunks: 64, items: 24 };
  const own = overlapped(layout(2, 1), 9, {
    bytes: collective,
    collective: { collective: 'allreduce', calls: 2, bytes: 1e8 },
  });

  it('bounds the step by the compute then the last bucket, and names the buckets', () => {
    const got = analyse(own, modes, layers);
    assert.ok(got);
    assert.equal(got.bound.term, 'communication');
    // 6 ms of compute, then the last of 2 buckets' all-reduce: half the bytes of the 4 ms call over all of them.
    close(got.bound.ms, 8);
    assert.deepEqual(got.model.words, {
      layout: '2 buckets',
      best: '16 buckets',
      limit: "the compute, then the last bucket's all-reduce (2.000 ms)",
      bestLimit: "the compute, then the last bucket's all-reduce (0.456 ms)",
      unpredicted: null,
    });
    assert.equal(got.model.floor.chunks, 16);
    close(got.model.floor.ms, 6.455555555555555);
    assert.equal(
      got.model.advice?.why,
      "the communication the compute does not hide: the compute, then the last bucket's all-reduce (2.000 ms)",
    );
    assert.equal(got.model.advice?.change, 'use 16 buckets, pipeline.chunks 16 (now 2)');
  });

  it('cuts the layers the config gives, or the most chunks without them', () => {
    const noItems = analyse(own, modes, { ...layers, items: undefined })?.model;
    assert.notEqual(noItems?.floor.ms, analyse(own, modes, layers)?.model.floor.ms);
  });

  it('counts a layout measured no faster at the best bucket count whatever its streams', () => {
    const twin = overlapped(layout(16, 4), 9.5, { bytes: collective });
    const got = analyse(own, [...modes, twin], layers)?.model;
    assert.equal(got?.floor.overruled?.chunks, 16);
    assert.equal(got?.words?.overruled, '16 buckets');
    assert.equal(got?.words?.best, '2 buckets');
  });

  it('has no words for a layout without collectives, nor a limit where communication does not bind', () => {
    const plain = analyse(overlapped(layout(2, 2), 9), device())?.model;
    assert.equal(plain?.words, undefined);
    const copies = [
      ...modes,
      mode({ kind: 'stage', stage: 'h2d' }, [40], { bytes: { h2d: 4e8, d2h: 0 } }),
      mode({ kind: 'stage', stage: 'd2h' }, [40], { bytes: { h2d: 0, d2h: 4e8 } }),
    ];
    const copyBound = analyse(own, copies, { ...layers, buffers: [{ role: 'in' }, { role: 'out' }] });
    assert.equal(copyBound?.bound.term, 'streams');
    assert.equal(copyBound?.model.words?.limit, null);
    assert.equal(copyBound?.model.words?.layout, '2 buckets');
  });
});

describe('the parts the model reads', { timeout: 5_000 }, () => {
  it("copies each input buffer up and each output buffer down, a chunk's copies", () => {
    const parts = deviceParts([], { ...facts, buffers: [{ role: 'in' }, { role: 'in' }, { role: 'out' }] }, 100);
    assert.deepEqual([parts.h2dCopiesPerChunk, parts.d2hCopiesPerChunk], [2, 1]);
  });

  it('never takes a launch cost from a kernels loop when the pipeline has no kernels, nor a copy cost without copies', () => {
    const loops = [
      mode({ kind: 'op-cost', op: 'launch' }, [0.5], { hostIssueMs: [0.5] }),
      mode({ kind: 'op-cost', op: 'h2d' }, [0.5], { hostIssueMs: [0.5] }),
      mode({ kind: 'kernels-chunked', layout: layout(8, 2) }, [1], { hostIssueMs: [0.00001] }),
      mode({ kind: 'link', copiesPerDirection: 8, streamsPerDirection: 2 }, [1], { hostIssueMs: [0.00001] }),
    ];
    const parts = deviceParts(loops, { ...facts, kernels: 0, buffers: [] }, 100);
    close(parts.hostLaunchMs, 0.005);
    close(parts.hostCopyMs, 0.005);
  });
});
