import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  adviceFor,
  type AdviceContext,
  type AdviceModel,
  bestIsBetter,
  SAME_LAYOUT,
} from '../../src/measure/advice.js';
import type { Bound, BoundCandidate, BoundTerm } from '../../src/measure/bound.js';
import { summarize } from '../../src/measure/stats.js';
import type { TermWords } from '../../src/kinds/index.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { CpuStage } from '../../src/kinds/host/section.js';
import type { ModeRole } from '../../src/vocabulary.js';

// The model's advice for one overlapped mode (src/measure/advice.ts), called directly: which change it names for
// each cause, the words it gives why, and what it predicts the change saves, at the edges mutation testing found.

type Layout = Extract<ModeRole, { kind: 'overlapped' }>['layout'];

const layout = (chunks: number, streams: number, extra: Partial<Layout> = {}): Layout => ({
  chunks,
  streams,
  order: 'depth-first',
  topology: 'chunk-per-stream',
  ...extra,
});

function mode(role: ModeRole, medianMs: number, extra: Record<string, unknown> = {}): ModeResult {
  return {
    id: 'm',
    role,
    device: 0,
    description: '',
    bytes: { h2d: 0, d2h: 0 },
    samplesMs: [medianMs],
    hostIssueMs: [],
    stats: summarize([medianMs]),
    stoppedBy: 'noise-stable',
    elapsedMs: 1,
    gateTimeouts: 0,
    smClockMHz: null,
    analysis: null,
    ...extra,
  } as ModeResult;
}
const overlapped = (l: Layout, medianMs: number, extra: Record<string, unknown> = {}) =>
  mode({ kind: 'overlapped', layout: l }, medianMs, extra);

const term = (t: BoundTerm, ms: number): BoundCandidate => ({ term: t, steadyMs: ms, perOpMs: 0, fillDrainMs: 0, ms });
function bound(t: BoundTerm, ms: number, others: Array<[BoundTerm, number]> = []): Bound {
  return { ...term(t, ms), terms: [term(t, ms), ...others.map(([o, m]) => term(o, m))] };
}

const PARTS = {
  h2dMs: 4,
  d2hMs: 4,
  kernelWholeMs: 3,
  h2dBytes: 1e9,
  d2hBytes: 1e9,
  h2dCopiesPerChunk: 1,
  d2hCopiesPerChunk: 1,
  kernelsPerChunk: 1,
  linkMs: 6,
  linkPieces: 8,
  copyEngines: 2,
  h2dOpMs: 0.004,
  d2hOpMs: 0.006,
  launchOpMs: 0.003,
  hostCopyMs: 0.002,
  hostLaunchMs: 0.002,
  gated: false,
};

function model(cause: AdviceModel['gap'][number]['cause'], lostMs: number, extra: Partial<AdviceModel> = {}) {
  const base: AdviceModel = {
    parts: PARTS,
    ops: { copies: 16, launches: 8, sync: 0 },
    hostIssueMs: 0.5,
    kernelsChunkedMs: null,
    idealMs: 4,
    floor: { chunks: 8, streams: 2, ms: 9, limitedBy: 'link' },
    gap: [
      { cause, ms: lostMs },
      { cause: 'per-op cost', ms: -0.25 },
    ],
    serialisers: [],
  };
  return { ...base, ...extra };
}

const context = (b: Bound, extra: Partial<AdviceContext> = {}): AdviceContext => ({
  bound: b,
  linkGbPerSecond: null,
  words: null,
  limit: null,
  ...extra,
});

const buckets: TermWords = {
  holds: () => true,
  layout: (chunks) => `${chunks} buckets`,
  change: (from, to) => `use ${to} buckets (now ${from})`,
  limit: () => 'the last bucket',
  unpredicted: () => null,
  leavesOut: "the buckets' launch gaps, which the bucket term leaves out",
};

const cpuStage: CpuStage = {
  workers: 4,
  tasksPerRep: 16,
  bytesPerRep: 1e9,
  taskMedianMs: 1.5,
  busyMs: [6, 6, 6, 6],
  gpuMedianMs: 8,
  cpuMedianMs: 12,
};

describe('whether the best layout is better than this one', { timeout: 5_000 }, () => {
  it('is better only where it is faster by more than the same-layout share', () => {
    const at = 100 * (1 - SAME_LAYOUT);
    assert.equal(bestIsBetter({ ms: at }, { ms: 100 }), false);
    assert.equal(bestIsBetter({ ms: at - 1e-9 }, { ms: 100 }), true);
    assert.equal(bestIsBetter({ ms: 100 }, { ms: 100 }), false);
    assert.equal(bestIsBetter({ ms: 50 }, { ms: 100 }), true);
  });
});

describe('advice that names no change', { timeout: 5_000 }, () => {
  it('gives none for a mode that is not overlapped, whatever it lost', () => {
    const serial = mode({ kind: 'serial' }, 12);
    assert.equal(adviceFor(serial, model('fill and drain', 2), context(bound('link', 10))), null);
  });

  it('gives none where every part of the gap is time gained', () => {
    const m = overlapped(layout(8, 2), 10);
    const gap = [
      { cause: 'fill and drain' as const, ms: -1 },
      { cause: 'per-op cost' as const, ms: 0 },
    ];
    assert.equal(adviceFor(m, model('fill and drain', -1, { gap }), context(bound('link', 10))), null);
  });

  it('names the largest cause and no change where the best layout is this one', () => {
    const m = overlapped(layout(8, 2), 12);
    const gap = [
      { cause: 'per-op cost' as const, ms: 0.5 },
      { cause: 'fill and drain' as const, ms: 1.5 },
      { cause: 'serialisation and effects the model does not capture' as const, ms: 1 },
    ];
    const advice = adviceFor(m, model('fill and drain', 1.5, { gap }), context(bound('link', 10)));
    assert.deepEqual(advice, {
      code: 'none',
      cause: 'fill and drain',
      lostMs: 1.5,
      change: null,
      why: 'the first and last chunks run with the pipeline half empty',
      predictedMs: null,
      savingMs: 0,
    });
  });

  it('names no layout where the best is faster by less than the same-layout share', () => {
    const m = overlapped(layout(8, 2), 12);
    const floor = { chunks: 16, streams: 4, ms: 9.95, limitedBy: 'link' as const };
    const advice = adviceFor(m, model('fill and drain', 2, { floor }), context(bound('link', 10)));
    assert.equal(advice?.code, 'none');
    assert.equal(advice?.change, null);
  });
});

describe('a change to the best layout', { timeout: 5_000 }, () => {
  const floorAt = (chunks: number, streams: number, ms = 8, limitedBy: BoundTerm = 'link') => ({
    chunks,
    streams,
    ms,
    limitedBy,
  });
  const advise = (l: Layout, floor: AdviceModel['floor'], extra: Partial<AdviceContext> = {}, measured = 12) =>
    adviceFor(overlapped(l, measured), model('fill and drain', 2, { floor }), context(bound('link', 10), extra));

  it('names chunks and streams where both differ, saving the bound less the floor', () => {
    assert.deepEqual(advise(layout(8, 2), floorAt(16, 4)), {
      code: 'layout',
      cause: 'fill and drain',
      lostMs: 2,
      change: 'use 16 chunks × 4 streams (now 8 × 2)',
      why: 'the first and last chunks run with the pipeline half empty',
      predictedMs: 10,
      savingMs: 2,
      to: { chunks: 16, streams: 4 },
    });
  });

  it('names the chunks alone where the streams are the same', () => {
    const advice = advise(layout(8, 2), floorAt(16, 2));
    assert.equal(advice?.change, 'use 16 chunks (now 8)');
    assert.deepEqual(advice?.to, { chunks: 16, streams: 2 });
  });

  it('names the streams alone where the chunks are the same, one stream in the singular', () => {
    assert.equal(advise(layout(8, 2), floorAt(8, 4))?.change, 'use 4 streams (now 2)');
    assert.equal(advise(layout(8, 2), floorAt(8, 1))?.change, 'use 1 stream (now 2)');
  });

  it('never names streams for stage per stream, whose streams are no count to change', () => {
    const stages = layout(8, 2, { topology: 'stage-per-stream' });
    assert.equal(advise(stages, floorAt(16, 4))?.change, 'use 16 chunks (now 8)');
    const same = advise(stages, floorAt(8, 4));
    assert.equal(same?.code, 'none');
    assert.equal(same?.change, null);
  });

  it('takes one chunk on any number of streams as this layout where it is one chunk', () => {
    const one = advise(layout(1, 2), floorAt(1, 4));
    assert.equal(one?.code, 'none');
    assert.equal(advise(layout(1, 2), floorAt(2, 4))?.change, 'use 2 chunks × 4 streams (now 1 × 2)');
  });

  it('says to run serially where the best is serial, saving what serial measured less', () => {
    const advice = advise(layout(8, 2), floorAt(1, 1, 7, 'serial'));
    assert.equal(advice?.change, 'run it serially, as one chunk (now 8)');
    // Serial saves measured − its time (12 − 7), not the bound's 10 − 7.
    assert.equal(advice?.savingMs, 5);
    assert.equal(advice?.predictedMs, 7);
    assert.deepEqual(advice?.to, { chunks: 1, streams: 1 });
  });

  it("names a kind's layout in its words, and no change where only the streams would", () => {
    assert.equal(advise(layout(8, 2), floorAt(16, 2), { words: buckets })?.change, 'use 16 buckets (now 8)');
    assert.equal(
      advise(layout(8, 2), floorAt(16, 4, 8, 'serial'), { words: buckets })?.change,
      'use 16 buckets (now 8)',
    );
    assert.equal(advise(layout(8, 2), floorAt(8, 4), { words: buckets })?.code, 'none');
  });

  it('never saves more than measured less the floor, nor less than nothing', () => {
    // Measured below the bound: the layout saves what the measurement has above the floor.
    const below = advise(layout(8, 2), floorAt(16, 4, 8), {}, 9);
    assert.equal(below?.savingMs, 1);
    assert.equal(below?.predictedMs, 8);
    // Measured below the floor itself: nothing to save.
    const under = advise(layout(8, 2), floorAt(16, 4, 8), {}, 7.5);
    assert.equal(under?.savingMs, 0);
    assert.equal(under?.predictedMs, 7.5);
  });
});

describe('a change of the cause its own', { timeout: 5_000 }, () => {
  const hostBound = bound('host issue', 10, [
    ['kernels', 7],
    ['link', 8],
  ]);

  it('issues a stream-issued layout as a CUDA graph, saving what the bound has above its next term', () => {
    const m = overlapped(layout(8, 2), 12);
    const gap = [{ cause: 'host issue' as const, ms: 5 }];
    const advice = adviceFor(
      m,
      model('host issue', 5, { gap, hostIssueMs: 6, ops: { copies: 16, launches: 8, sync: 6 } }),
      context(hostBound),
    );
    assert.deepEqual(advice, {
      code: 'graph',
      cause: 'host issue',
      lostMs: 5,
      change: 'issue it as a CUDA graph (pipeline.mode: graph)',
      why: 'the host took 6.000 ms to issue 30 ops (200.0 µs each; --gate leaves issue out of the figure)',
      predictedMs: 10,
      savingMs: 2,
    });
  });

  it('saves the cause itself where its term is not the binding one, at most measured less the ideal', () => {
    const m = overlapped(layout(8, 2), 12);
    const gap = [{ cause: 'host issue' as const, ms: 1.5 }];
    assert.equal(adviceFor(m, model('host issue', 1.5, { gap }), context(bound('link', 10)))?.savingMs, 1.5);
    const big = [{ cause: 'host issue' as const, ms: 9 }];
    // measured 12 − ideal 4: no change saves more than the 8 ms above the ideal.
    assert.equal(adviceFor(m, model('host issue', 9, { gap: big }), context(bound('link', 10)))?.savingMs, 8);
    const alone = bound('host issue', 10);
    assert.equal(adviceFor(m, model('host issue', 9, { gap: big }), context(alone))?.savingMs, 8);
  });

  it('counts one op each where the host issued none', () => {
    const m = overlapped(layout(8, 2), 12);
    const advice = adviceFor(
      m,
      model('host issue', 1, { hostIssueMs: 0.25, ops: { copies: 0, launches: 0, sync: 0 } }),
      context(bound('link', 10)),
    );
    assert.equal(
      advice?.why,
      'the host took 0.250 ms to issue 0 ops (250.0 µs each; --gate leaves issue out of the figure)',
    );
  });

  it('names no graph for a graph replay, which has no host issue to remove', () => {
    const m = overlapped(layout(8, 2, { issue: 'graph' }), 12);
    const advice = adviceFor(m, model('host issue', 1), context(hostBound));
    assert.equal(advice?.code, 'none');
    assert.equal(advice?.cause, 'host issue');
  });

  it('asks for more workers where a CPU stage on workers limits, in its own words', () => {
    const m = overlapped(layout(8, 2, { host: 'scale' }), 12, { cpuStage });
    const cpuBound = bound('CPU stage', 10, [['link', 9]]);
    const advice = adviceFor(m, model('CPU stage', 3), context(cpuBound));
    assert.deepEqual(advice, {
      code: 'workers',
      cause: 'CPU stage',
      lostMs: 3,
      change: 'use more workers (host.workers) or a cheaper function',
      why: "the host stage's 16 tasks of 1.500 ms on 4 workers take longer than the GPU's side",
      predictedMs: 11,
      savingMs: 1,
    });
  });

  it('says the host stage is slower than the GPU, with no change, where no CPU stage was measured', () => {
    const m = overlapped(layout(8, 2, { host: 'scale' }), 12);
    const advice = adviceFor(m, model('CPU stage', 3), context(bound('CPU stage', 10)));
    assert.equal(advice?.code, 'none');
    assert.equal(advice?.why, 'the host stage takes longer than the GPU side');
  });

  it('asks for non-blocking streams where the per-thread default stream makes the streams one', () => {
    const m = overlapped(layout(8, 3), 12);
    const streamsBound = bound('streams', 10, [['link', 9.5]]);
    const advice = adviceFor(
      m,
      model('too few streams', 3, { serialisers: ['legacy default stream', 'per-thread default stream'] }),
      context(streamsBound),
    );
    assert.equal(advice?.code, 'stream-kind');
    assert.equal(advice?.change, 'use `streamKind: non-blocking`');
    assert.equal(
      advice?.why,
      'every stream is the per-thread default stream, so the 3 streams are one and the chunks run one after another',
    );
    assert.equal(advice?.savingMs, 0.5);
  });

  it('says each stream runs its chunks in turn where nothing makes the streams one, or nothing is recorded', () => {
    const m = overlapped(layout(8, 3), 12);
    const why = 'each stream runs its chunks one after another';
    const none = adviceFor(
      m,
      model('too few streams', 3, { serialisers: ['pageable memory'] }),
      context(bound('streams', 10)),
    );
    assert.equal(none?.why, why);
    // No change of its own: the best layout's (2 streams) is the change.
    assert.equal(none?.code, 'layout');
    assert.equal(none?.change, 'use 2 streams (now 3)');
    const old = adviceFor(m, model('too few streams', 3, { serialisers: undefined }), context(bound('streams', 10)));
    assert.equal(old?.why, why);
  });
});

describe('why a cause costs what it does', { timeout: 5_000 }, () => {
  const m = overlapped(layout(8, 4), 12);
  const why = (
    cause: AdviceModel['gap'][number]['cause'],
    extra: Partial<AdviceModel> = {},
    c: Partial<AdviceContext> = {},
  ) => adviceFor(m, model(cause, 2, extra), context(bound('link', 10), c))?.why;

  it("gives the per-op cost as copies at the two directions' mean cost and launches at theirs", () => {
    assert.equal(why('per-op cost'), '16 copies × 5.0 µs + 8 launches × 3.0 µs of fixed cost on the GPU');
    assert.equal(
      why('per-op cost', { ops: { copies: 0, launches: 4, sync: 0 } }),
      '0 copies × 0.0 µs + 4 launches × 3.0 µs of fixed cost on the GPU',
    );
  });

  it('names the shared link, with its rate where one was measured', () => {
    assert.equal(
      why('shared link'),
      "both copy directions share the PCIe link: that is this workload's limit, whatever the layout",
    );
    assert.equal(
      why('shared link', {}, { linkGbPerSecond: 25 }),
      "both copy directions share the PCIe link, 25.0 GB/s at its fastest rep: that is this workload's limit, whatever the layout",
    );
  });

  it('sets the kernels chunked over the streams against the kernels on whole buffers', () => {
    assert.equal(
      why('kernels not concurrent', { kernelsChunkedMs: 4.5 }),
      'the kernels chunked over 4 streams take 4.500 ms against 3.000 ms on whole buffers',
    );
    assert.equal(
      why('kernels not concurrent'),
      'the kernels chunked over 4 streams take 0.00 µs against 3.000 ms on whole buffers',
    );
  });

  it('says one direction carries most of the bytes', () => {
    assert.equal(
      why('one direction at a time'),
      'one copy direction carries most of the bytes; overlap cannot hide the larger direction',
    );
  });

  it("names a kind's limit for exposed communication, or the collectives after the compute", () => {
    assert.equal(
      why('exposed communication', {}, { limit: "the last bucket's all-reduce (0.266 ms)" }),
      "the communication the compute does not hide: the last bucket's all-reduce (0.266 ms)",
    );
    assert.equal(
      why('exposed communication'),
      'the communication the compute does not hide: the collectives after the compute',
    );
  });
});

describe('the time the model does not explain', { timeout: 5_000 }, () => {
  const cause = 'serialisation and effects the model does not capture' as const;
  const timeline = '`--timeline` shows where the streams waited';
  const why = (m: ModeResult, serialisers: AdviceModel['serialisers'], words: TermWords | null = null) =>
    adviceFor(m, model(cause, 2, { serialisers }), context(bound('link', 10), { words }))?.why;
  const plain = overlapped(layout(8, 4), 12);

  it('gives the general list for a file from before the serialisers were recorded', () => {
    assert.equal(
      why(plain, undefined),
      `time the model does not explain: look for ops on the legacy default stream, pageable memory or synchronous calls (${timeline})`,
    );
  });

  it('names the one serialiser this layout has, or both, with the verb that agrees', () => {
    assert.equal(
      why(plain, ['pageable memory']),
      `time the model does not explain: this layout has pageable memory, which runs ops one after another; ${timeline}`,
    );
    assert.equal(
      why(plain, ['legacy default stream', 'pageable memory']),
      'time the model does not explain: this layout has legacy default stream and pageable memory, which run ops one ' +
        `after another; ${timeline}`,
    );
  });

  it('names contention, scheduling or noise where the layout has no serialiser', () => {
    assert.equal(
      why(plain, []),
      'time the model does not explain: this config has no legacy default stream, pageable memory or synchronous ' +
        `call, so it is kernels and copies contending for memory and the engines, the GPU's scheduling of the streams, or noise (${timeline})`,
    );
  });

  it("adds what a kind's term leaves out where the layout has no host stage", () => {
    assert.equal(
      why(plain, ['pageable memory'], buckets),
      'time the model does not explain: this layout has pageable memory, which runs ops one after another, and ' +
        `the buckets' launch gaps, which the bucket term leaves out; ${timeline}`,
    );
    assert.equal(
      why(plain, [], buckets),
      'time the model does not explain: this config has no legacy default stream, pageable memory or synchronous ' +
        "call, so it is the buckets' launch gaps, which the bucket term leaves out, kernels and copies contending for " +
        `memory and the engines, the GPU's scheduling of the streams, or noise (${timeline})`,
    );
  });

  it('adds the host stage the model leaves out, or what the CPU-stage term leaves out of one on workers', () => {
    const thread = overlapped(layout(8, 4, { host: 'scale' }), 12);
    assert.equal(
      why(thread, ['pageable memory'], buckets),
      'time the model does not explain: this layout has pageable memory, which runs ops one after another, and the ' +
        `host stage scale, which the model leaves out (it has the GPU's stages only); ${timeline}`,
    );
    const workers = overlapped(layout(8, 4, { host: 'scale' }), 12, { cpuStage });
    assert.equal(
      why(workers, []),
      'time the model does not explain: this config has no legacy default stream, pageable memory or synchronous ' +
        "call, so it is the host stage scale's hand-overs and contention, which the CPU-stage term leaves out (it " +
        "counts the tasks' own time), kernels and copies contending for memory and the engines, the GPU's scheduling " +
        `of the streams, or noise (${timeline})`,
    );
  });
});
