import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CollectiveSide, collectiveSkew, NO_STEP, participantName } from '../../src/analysis/collectives.js';
import type { GpuEvent } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// The collectives' arrival skew between ranks (src/analysis/collectives.ts) on NCCL kernels built here: how kernels
// pair by step, name and order, who arrived last, and the words when ranks' kernels do not pair.

const DEADLINE = { timeout: 5_000 };

function kernel(name: string, start: number, end = start + 0.5): GpuEvent {
  return gpuEvent({ stream: '9', start, end, name, communication: true });
}

const AR = 'ncclKernel_AllReduce';
const BC = 'ncclKernel_Broadcast';
const STEPS = [
  { name: 's1', start: 0, end: 10 },
  { name: 's2', start: 10, end: 20 },
];

function side(rank: number | null, kernels: GpuEvent[], steps = STEPS, device = rank ?? 0): CollectiveSide {
  return { who: { file: `rank${rank}.json`, rank, device }, kernels, steps };
}

describe('collective skew: pairing and who arrived last', () => {
  it('pairs the k-th kernel of a name in a step across ranks and measures each skew', DEADLINE, () => {
    // Given out of order; the kernel at 10 is s2's (a step holds its start, not its end); the one at 25 is in none.
    const rank0 = side(0, [kernel(AR, 3), kernel(AR, 1), kernel(BC, 2), kernel(AR, 10), kernel(AR, 25)]);
    const rank1 = side(1, [kernel(AR, 1.5), kernel(AR, 4), kernel(BC, 2), kernel(AR, 10.25), kernel(AR, 24)]);
    const skew = collectiveSkew([rank0, rank1]);
    assert.ok(skew?.kind === 'measured');
    assert.deepEqual(skew.participants, [rank0.who, rank1.who]);
    assert.deepEqual(skew.calls, [
      { step: 's1', name: AR, order: 0, startsMs: [1, 1.5], skewMs: 0.5, last: 1 },
      { step: 's1', name: BC, order: 0, startsMs: [2, 2], skewMs: 0, last: null },
      { step: 's1', name: AR, order: 1, startsMs: [3, 4], skewMs: 1, last: 1 },
      { step: 's2', name: AR, order: 0, startsMs: [10, 10.25], skewMs: 0.25, last: 1 },
      { step: NO_STEP, name: AR, order: 0, startsMs: [25, 24], skewMs: 1, last: 0 },
    ]);
    assert.equal(skew.count, 5);
    assert.deepEqual(skew.skewMs, { median: 0.5, max: 1 });
    assert.deepEqual(skew.lastArriving, [
      { ...rank0.who, count: 1, share: 0.2, lateMs: { median: 0, max: 1 } },
      { ...rank1.who, count: 3, share: 0.6, lateMs: { median: 0.25, max: 1 } },
    ]);
    assert.deepEqual(skew.mostOftenLast, { who: [rank1.who], count: 3, of: 5 });
  });

  it('a kernel in two overlapping steps belongs to the one that started first', DEADLINE, () => {
    const steps = [
      { name: 'late', start: 8, end: 20 },
      { name: 'early', start: 0, end: 10 },
    ];
    const skew = collectiveSkew([side(0, [kernel(AR, 9)], steps), side(1, [kernel(AR, 9.5)], steps)]);
    assert.ok(skew?.kind === 'measured');
    assert.deepEqual(
      skew.calls.map((c) => [c.step, c.skewMs, c.last]),
      [['early', 0.5, 1]],
    );
  });

  it('ranks tied for last most often are all named; with no last at all, none is', DEADLINE, () => {
    const a = side(0, [kernel(AR, 1), kernel(AR, 4)]);
    const b = side(1, [kernel(AR, 2), kernel(AR, 3)]);
    const tied = collectiveSkew([a, b]);
    assert.ok(tied?.kind === 'measured');
    assert.deepEqual(tied.mostOftenLast, { who: [a.who, b.who], count: 1, of: 2 });
    assert.deepEqual(
      tied.lastArriving.map((l) => [l.count, l.share, l.lateMs.median, l.lateMs.max]),
      [
        [1, 0.5, 0.5, 1],
        [1, 0.5, 0.5, 1],
      ],
    );
    const even = collectiveSkew([side(0, [kernel(AR, 1)]), side(1, [kernel(AR, 1)])]);
    assert.ok(even?.kind === 'measured');
    assert.deepEqual(even.mostOftenLast, { who: [], count: 0, of: 1 });
    assert.deepEqual(even.skewMs, { median: 0, max: 0 });
  });

  it('three ranks: the skew is the latest arrival less the earliest', DEADLINE, () => {
    const skew = collectiveSkew([side(0, [kernel(AR, 2)]), side(1, [kernel(AR, 1)]), side(2, [kernel(AR, 4)])]);
    assert.ok(skew?.kind === 'measured');
    assert.deepEqual(skew.calls[0], { step: 's1', name: AR, order: 0, startsMs: [2, 1, 4], skewMs: 3, last: 2 });
    assert.deepEqual(
      skew.lastArriving.map((l) => l.lateMs.max),
      [1, 0, 3],
    );
  });

  it('ranks without NCCL kernels pair nothing: zeros, not NaN', DEADLINE, () => {
    const skew = collectiveSkew([side(0, []), side(1, [])]);
    assert.ok(skew?.kind === 'measured');
    assert.equal(skew.count, 0);
    assert.deepEqual(skew.skewMs, { median: 0, max: 0 });
    assert.deepEqual(
      skew.lastArriving.map((l) => [l.count, l.share, l.lateMs]),
      [
        [0, 0, { median: 0, max: 0 }],
        [0, 0, { median: 0, max: 0 }],
      ],
    );
    assert.deepEqual(skew.mostOftenLast, { who: [], count: 0, of: 0 });
  });

  it('a kernel before the first step is in none', DEADLINE, () => {
    const skew = collectiveSkew([side(0, [kernel(AR, -1), kernel(AR, 1)]), side(1, [kernel(AR, -0.5), kernel(AR, 1)])]);
    assert.ok(skew?.kind === 'measured');
    assert.deepEqual(
      skew.calls.map((c) => [c.step, c.order, c.skewMs]),
      [
        [NO_STEP, 0, 0.5],
        ['s1', 0, 0],
      ],
    );
  });

  it('one side has nothing to be skewed against', DEADLINE, () => {
    assert.equal(collectiveSkew([side(0, [kernel(AR, 1)])]), null);
    assert.equal(collectiveSkew([]), null);
  });
});

describe('collective skew: ranks whose kernels do not pair', () => {
  it('names the first group, by step and name, whose counts differ, with each rank its count', DEADLINE, () => {
    // s1's broadcasts (1 and 0) came first in time, but s1's all-reduces (2 and 1) sort first; s2's differ too.
    const a = side(0, [kernel(BC, 1), kernel(AR, 2), kernel(AR, 3), kernel(AR, 11), kernel(AR, 12)]);
    const b = side(1, [kernel(AR, 2), kernel(AR, 11)]);
    const skew = collectiveSkew([a, b]);
    assert.deepEqual(skew, {
      kind: 'unknown',
      participants: [a.who, b.who],
      reason: `the ranks' NCCL kernels do not pair: ${AR} in s1 ran 2 on rank 0 GPU 0, 1 on rank 1 GPU 1`,
    });
  });

  it('a group only one rank ran counts 0 on the others', DEADLINE, () => {
    const skew = collectiveSkew([side(0, [kernel(AR, 2)]), side(1, [kernel(AR, 2), kernel(BC, 3)])]);
    assert.equal(
      skew?.kind === 'unknown' && skew.reason,
      `the ranks' NCCL kernels do not pair: ${BC} in s1 ran 0 on rank 0 GPU 0, 1 on rank 1 GPU 1`,
    );
  });

  it('a difference in the second of three ranks is found too', DEADLINE, () => {
    const skew = collectiveSkew([
      side(0, [kernel(AR, 1)]),
      side(1, [kernel(AR, 1), kernel(AR, 2)]),
      side(2, [kernel(AR, 1)]),
    ]);
    assert.equal(skew?.kind, 'unknown');
    assert.equal(
      skew.kind === 'unknown' && skew.reason,
      `the ranks' NCCL kernels do not pair: ${AR} in s1 ran 1 on rank 0 GPU 0, 2 on rank 1 GPU 1, 1 on rank 2 GPU 2`,
    );
  });

  it('names a rank by its rank and GPU, or a trace without one by its file and GPU', DEADLINE, () => {
    assert.equal(participantName({ file: 'a.json', rank: 3, device: 1 }), 'rank 3 GPU 1');
    assert.equal(participantName({ file: 'a.json', rank: null, device: 1 }), 'a.json GPU 1');
  });
});
