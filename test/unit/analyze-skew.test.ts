import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import { type AnalysisDocument, AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { parseTraceDocument, parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';

// Several ranks' traces built in code (µs in the events, ms in the assertions), each expected value worked out
// in the comments; and the idle split of single traces, HTA's way.

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
const kernel = (device: number, stream: number, ts: number, dur: number, name = 'k', correlation?: number) =>
  event('kernel', name, ts, dur, { device, stream, ...(correlation === undefined ? {} : { correlation }) });
const step = (name: string, device: number, ts: number, dur: number) =>
  event('gpu_user_annotation', name, ts, dur, { device });
const launch = (ts: number, dur: number, correlation: number) =>
  event('cuda_runtime', 'cudaLaunchKernel', ts, dur, { correlation });
const ALL_REDUCE = 'ncclDevKernel_AllReduce_Sum_f32_RING_LL';

function rank(rankNo: number, events: readonly unknown[], device = rankNo) {
  return parseTraceDocument(`rank${rankNo}.json`, {
    schemaVersion: 1,
    distributedInfo: { rank: rankNo, world_size: 2 },
    traceEvents: [...events].map((e) => withDevice(e, device)),
  });
}

function withDevice(e: unknown, device: number): unknown {
  const raw = e as { args: Args };
  return 'device' in raw.args ? { ...raw, args: { ...raw.args, device } } : raw;
}

function analyse(...traces: ReturnType<typeof rank>[]): AnalysisDocument {
  return analyzeTraces(traces, { rates: null, toolVersion: 'test' });
}

function near(actual: number | null | undefined, expected: number, what: string): void {
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what}: ${actual} is not ${expected}`,
  );
}

/**
 * Three all-reduces, one per step (steps at 0, 1000, 2000 µs, each 1000 µs long), on two ranks. Rank 0 starts
 * each at 500 µs into its step; rank 1 at 700, 700 and 500: 0.2 ms late twice, on time once.
 */
function twoRanks(lateUs: readonly number[]) {
  const sides = [0, 1].map((r) =>
    rank(
      r,
      [0, 1, 2].flatMap((i) => [
        step(`ProfilerStep#${i}`, 0, i * 1000, 1000),
        kernel(0, 7, i * 1000, 400, 'gemm'),
        kernel(0, 20, i * 1000 + 500 + (r === 1 ? lateUs[i]! : 0), 300, ALL_REDUCE),
      ]),
    ),
  );
  return analyse(sides[1]!, sides[0]!);
}

describe('analyze: collective skew across ranks', () => {
  it('rank 1 arrives 0.2 ms late at two of three all-reduces: skew median 0.2, max 0.2; rank 1 last 2 of 3', () => {
    const document = twoRanks([200, 200, 0]);
    const c = document.collectives;
    assert.ok(c && c.kind === 'measured', JSON.stringify(c));
    assert.equal(c.count, 3);
    // Skews 0.2, 0.2, 0: median 0.2, max 0.2.
    near(c.skewMs.median, 0.2, 'median skew');
    near(c.skewMs.max, 0.2, 'max skew');
    assert.deepEqual(
      c.lastArriving.map((l) => [l.rank, l.count]),
      [
        [0, 0],
        [1, 2],
      ],
    );
    near(c.lastArriving[1]!.share, 2 / 3, 'share');
    // The third is a tie (skew 0): no one is last, so rank 0 never is.
    near(c.lastArriving[0]!.share, 0, 'rank 0 share');
    // Rank 1's lateness per collective: 0.2, 0.2, 0 → median 0.2, max 0.2; rank 0's always 0.
    near(c.lastArriving[1]!.lateMs.median, 0.2, 'late median');
    near(c.lastArriving[0]!.lateMs.max, 0, 'rank 0 late');
    assert.deepEqual(c.mostOftenLast, { who: [{ file: 'rank1.json', rank: 1, device: 1 }], count: 2, of: 3 });
    assert.deepEqual(
      c.calls.map((call) => [call.step, call.order, call.last]),
      [
        ['ProfilerStep#0', 0, 1],
        ['ProfilerStep#1', 0, 1],
        ['ProfilerStep#2', 0, null],
      ],
    );
    assert.ok(document.notes.some((n) => /include.* clock offset/.test(n)));
    assert.ok(!document.notes.some((n) => /not computed/.test(n)));
    assert.doesNotThrow(() => AnalysisDocumentSchema.parse(document));
  });

  it('matches by order among kernels of one name: two all-reduces and an all-gather, each paired with its own', () => {
    // Rank 0: all-reduce at 100 and 600, all-gather at 300. Rank 1: all-gather at 350 (first!), all-reduce at 100
    // and 900. Skews: all-reduce #0 0, all-reduce #1 0.3 (rank 1), all-gather 0.05 (rank 1) → median 0.05, max 0.3.
    const r0 = rank(0, [
      kernel(0, 20, 100, 50, ALL_REDUCE),
      kernel(0, 20, 300, 50, 'ncclDevKernel_AllGather'),
      kernel(0, 20, 600, 50, ALL_REDUCE),
    ]);
    const r1 = rank(1, [
      kernel(0, 20, 100, 50, ALL_REDUCE),
      kernel(0, 21, 350, 50, 'ncclDevKernel_AllGather'),
      kernel(0, 20, 900, 50, ALL_REDUCE),
    ]);
    const c = analyse(r0, r1).collectives;
    assert.ok(c && c.kind === 'measured');
    near(c.skewMs.median, 0.05, 'median');
    near(c.skewMs.max, 0.3, 'max');
    assert.deepEqual(
      c.calls.map((call) => [call.name, call.order, call.step, call.last]),
      [
        [ALL_REDUCE, 0, 'whole trace', null],
        ['ncclDevKernel_AllGather', 0, 'whole trace', 1],
        [ALL_REDUCE, 1, 'whole trace', 1],
      ],
    );
  });

  it('refuses to pair ranks whose steps ran different numbers of a collective, and says which', () => {
    const r0 = rank(0, [kernel(0, 20, 100, 50, ALL_REDUCE), kernel(0, 20, 600, 50, ALL_REDUCE)]);
    const r1 = rank(1, [kernel(0, 20, 100, 50, ALL_REDUCE)]);
    const c = analyse(r0, r1).collectives;
    assert.ok(c && c.kind === 'unknown');
    assert.match(
      c.reason,
      /ncclDevKernel_AllReduce_Sum_f32_RING_LL in whole trace ran 2 on rank 0 GPU 0, 1 on rank 1 GPU 1/,
    );
  });

  it('gives no collectives section for one rank, nor for ranks without NCCL kernels', () => {
    assert.equal(analyse(rank(0, [kernel(0, 20, 100, 50, ALL_REDUCE)])).collectives, undefined);
    assert.equal(analyse(rank(0, [kernel(0, 7, 100, 50)]), rank(1, [kernel(0, 7, 100, 50)])).collectives, undefined);
  });

  it('pairs the recorded DDP rank (ddp-nccl.json) with itself shifted: rank 0 0.1 ms early at both all-reduces', async () => {
    // ddp-nccl.json is rank 1 (GPU 1): all-reduces start at 1.4 ms (ProfilerStep#0) and 3.5 ms (ProfilerStep#1).
    // Its copy as rank 0 with every time 100 µs earlier arrives first at both: skew 0.1 ms each, rank 1 last twice.
    const file = join(packageRoot(), 'test', 'fixtures', 'analyze', 'ddp-nccl.json');
    const recorded = await parseTraceFile(file);
    const shifted = {
      ...recorded,
      file: 'rank0.json',
      rank: 0,
      gpu: recorded.gpu.map((e) => ({ ...e, start: e.start - 0.1, end: e.end - 0.1 })),
      host: recorded.host.map((h) => ({ ...h, start: h.start - 0.1, end: h.end - 0.1 })),
      steps: recorded.steps.map((s) => ({ ...s, start: s.start - 0.1, end: s.end - 0.1 })),
    };
    const c = analyse(recorded, shifted).collectives;
    assert.ok(c && c.kind === 'measured');
    assert.equal(c.count, 2);
    near(c.skewMs.median, 0.1, 'median');
    assert.deepEqual(
      c.calls.map((call) => call.step),
      ['ProfilerStep#0', 'ProfilerStep#1'],
    );
    assert.deepEqual(
      c.lastArriving.map((l) => [l.rank, l.count]),
      [
        [0, 0],
        [1, 2],
      ],
    );
  });
});

describe("analyze: idle by cause, HTA's way", () => {
  it('three 10 µs gaps between ops issued in time are kernel wait (under 30 µs): pageable-compute-stream.json', async () => {
    const device = analyzeTraces(
      [await parseTraceFile(join(packageRoot(), 'test', 'fixtures', 'analyze', 'pageable-compute-stream.json'))],
      { rates: null, toolVersion: 'test' },
    ).devices[0]!;
    const s = device.steps[0]!;
    near(s.idleMs, 0.03, 'idle');
    near(s.kernelWaitMs, 0.03, 'kernel wait');
    near(s.hostWaitMs + s.syncWaitMs + s.otherIdleMs, 0, 'the rest');
    near(device.kernelWaitMs, 0.03, 'device median');
  });

  it('splits a step into host wait 0.1, kernel wait 0.02, sync wait 0.2 and other 0.05', () => {
    // One stream, kernels issued long before they run except the second:
    //   k1 0–100, gap 100–120 (20 µs, issued early: kernel wait),
    //   k2 120–200, gap 200–300 (k3 launched 250–260, returned after the gap began: host wait 100 µs),
    //   k3 300–400, gap 400–600 (k4 issued early; a synchronize ran 350–700 on the host: sync wait 200 µs),
    //   k4 600–700, gap 700–750 (k5 issued early, no synchronize: other 50 µs), k5 750–800.
    const events = [
      launch(-50, 5, 1),
      kernel(0, 13, 0, 100, 'k1', 1),
      launch(-40, 5, 2),
      kernel(0, 13, 120, 80, 'k2', 2),
      launch(250, 10, 3),
      kernel(0, 13, 300, 100, 'k3', 3),
      launch(270, 5, 4),
      event('cuda_runtime', 'cudaStreamSynchronize', 350, 350, { correlation: 9 }),
      kernel(0, 13, 600, 100, 'k4', 4),
      launch(280, 5, 5),
      kernel(0, 13, 750, 50, 'k5', 5),
    ];
    const s = analyzeTraces([parseTraceDocument('idle.json', { schemaVersion: 1, traceEvents: events })], {
      rates: null,
      toolVersion: 'test',
    }).devices[0]!.steps[0]!;
    near(s.ms, 0.8, 'step');
    near(s.idleMs, 0.37, 'idle');
    near(s.hostWaitMs, 0.1, 'host wait');
    near(s.kernelWaitMs, 0.02, 'kernel wait');
    near(s.syncWaitMs, 0.2, 'sync wait');
    near(s.otherIdleMs, 0.05, 'other');
  });

  it('a gap at the step edge is never kernel wait: no op on both sides', () => {
    // The annotated step is 0–200 µs; the kernel runs 10–190: two 10 µs gaps at its edges, issued early: other.
    const events = [step('ProfilerStep#1', 0, 0, 200), launch(-50, 5, 1), kernel(0, 13, 10, 180, 'k', 1)];
    const s = analyzeTraces([parseTraceDocument('edge.json', { schemaVersion: 1, traceEvents: events })], {
      rates: null,
      toolVersion: 'test',
    }).devices[0]!.steps[0]!;
    near(s.kernelWaitMs, 0, 'kernel wait');
    near(s.otherIdleMs, 0.02, 'other');
  });
});
