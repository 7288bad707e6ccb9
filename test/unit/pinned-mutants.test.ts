import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busyFractions, idleGaps, issueRate } from '../../src/analysis/timeline.js';
import { idealMs, layoutBound, type LayoutShape } from '../../src/measure/bound.js';
import { type RepetitionPolicy, StoppingCriterion } from '../../src/measure/policy.js';
import { outlierIndexes, summarize } from '../../src/measure/stats.js';
import { dropClearlySlower } from '../../src/measure/sweep.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';
import { H100_BALANCED as h100 } from '../helpers/device-parts.js';

// Each test here fails on a one-line change of the core that the rest of the suite let through (issue 16, class 10):
// the values are chosen so that the rule as written and its neighbours give different answers.

const close = (actual: number, expected: number, what = '') =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

describe('the sweep drops a layout early', () => {
  const state = (gpuMs: number[]) => ({ gpuMs, stopped: null as 'clearly-slower' | 'noise-target' | null });

  it("only when its first quartile, not just its median, lies above the best layout's third quartile", () => {
    const best = state([1.0, 1.01, 1.02, 1.03, 1.04]);
    const overlapping = state([1.0, 1.02, 1.05, 1.06, 1.07]);
    const separated = state([1.04, 1.05, 1.06, 1.07, 1.08]);
    const bestQ3 = summarize(best.gpuMs).q3;
    // The overlapping layout's median is above the best's q3, its q1 below it: the spreads still touch.
    assert.ok(summarize(overlapping.gpuMs).median > bestQ3 && summarize(overlapping.gpuMs).q1 < bestQ3);
    dropClearlySlower([overlapping, best, separated]);
    assert.deepEqual([best.stopped, overlapping.stopped, separated.stopped], [null, null, 'clearly-slower']);
  });

  it("keeps a layout whose first quartile equals the best's third quartile", () => {
    const best = state([1, 2, 3, 4, 5]);
    const touching = state([4, 4, 4, 9, 9]);
    assert.equal(summarize(best.gpuMs).q3, summarize(touching.gpuMs).q1);
    dropClearlySlower([best, touching]);
    assert.equal(touching.stopped, null);
  });

  it('judges nothing with fewer than two samples, and leaves a layout the noise rule stopped as it was', () => {
    const best = state([1, 1.01]);
    const single = state([9]);
    dropClearlySlower([best, single]);
    assert.equal(single.stopped, null);
    const done = { gpuMs: [5, 5.1, 5.2], stopped: 'noise-target' as const };
    const slow = state([7, 7.1, 7.2]);
    dropClearlySlower([best, done, slow]);
    assert.deepEqual([best.stopped, done.stopped, slow.stopped], [null, 'noise-target', 'clearly-slower']);
  });
});

describe('outliers', () => {
  // Median 10 and MAD 1 whatever the last sample is: its modified z-score is 0.6745 · (x − 10).
  const withLast = (x: number) => [8, 9, 9, 10, 10, 10, 11, 11, x];

  it('are samples whose modified z-score exceeds 3.5, so one at 2.7 is kept', () => {
    assert.deepEqual(outlierIndexes(withLast(14), 10), []);
    // 3.5 / 0.6745 = 5.189: just under and just over the limit.
    assert.deepEqual(outlierIndexes(withLast(15.15), 10), []);
    assert.deepEqual(outlierIndexes(withLast(15.25), 10), [8]);
    assert.deepEqual(outlierIndexes(withLast(4.75), 10), [8]);
    assert.deepEqual(summarize(withLast(16)).outliers, [8]);
  });

  it('are none when half the samples are equal (MAD 0)', () => {
    assert.deepEqual(outlierIndexes([5, 5, 5, 5, 9], 5), []);
  });
});

describe('the noise estimate counts as stable', () => {
  const policy: RepetitionPolicy = {
    warmup: 0,
    warmupMs: 0,
    fixedReps: null,
    minReps: 10,
    maxReps: 10_000,
    maxNoise: 1e-6,
    maxTimeMs: 1e9,
  };
  const stopsAt = (samples: readonly number[]) => {
    const criterion = new StoppingCriterion(policy);
    for (let n = 1; n <= samples.length; n++) {
      const rule = criterion.check(samples.slice(0, n), 0);
      if (rule) return { n, rule };
    }
    return null;
  };
  const wave = (frequency: number, phase: number) =>
    Array.from({ length: 200 }, (_, i) => 1 + 0.01 * Math.sin(i * frequency + phase));

  // Over the last 16 estimates (max − min) / latest first falls to 4.9% at sample 47 of the first wave (to 5.8% at 43,
  // 3.9% at 67), and to 3.9% at sample 71 of the second (5.3% at 58): only a limit of 5% stops both where they stop.
  it('when its last 16 values spread less than 5% of the latest', () => {
    assert.deepEqual(stopsAt(wave(1.7, 2)), { n: 47, rule: 'noise-stable' });
    assert.deepEqual(stopsAt(wave(2.399963, 0.5)), { n: 71, rule: 'noise-stable' });
  });

  it('never at a zero estimate, where the spread relative to it means nothing', () => {
    const flat = Array.from({ length: 40 }, () => 1);
    assert.equal(new StoppingCriterion({ ...policy, maxNoise: -1 }).check(flat, 0), null);
    const criterion = new StoppingCriterion({ ...policy, maxNoise: -1 });
    assert.deepEqual(
      flat.map((_, i) => criterion.check(flat.slice(0, i + 1), 0)).filter((r) => r !== null),
      [],
    );
  });
});

const layout = (chunks: number, streams: number): LayoutShape => ({
  chunks,
  streams,
  issue: 'stream',
  kernelsChunkedMs: null,
});

describe("the bound's link term", () => {
  it('is absent with one chunk, where nothing overlaps: the bound is the serial sum', () => {
    const b = layoutBound(h100, layout(1, 1));
    assert.deepEqual(
      b.terms.map((t) => t.term),
      ['H2D', 'kernels', 'D2H'],
    );
    close(b.ms, 4.863 + 3.695 + 4.869);
  });

  it('is present from two chunks on', () => {
    const b = layoutBound(h100, layout(2, 2));
    assert.ok(b.terms.some((t) => t.term === 'link'));
  });

  it('is absent without traffic both ways', () => {
    assert.ok(!layoutBound({ ...h100, d2hMs: 0, d2hBytes: 0 }, layout(8, 8)).terms.some((t) => t.term === 'link'));
    assert.ok(!layoutBound({ ...h100, h2dMs: 0, h2dBytes: 0 }, layout(8, 8)).terms.some((t) => t.term === 'link'));
  });
});

describe("the workload's ideal", () => {
  it('is the link both ways when that is the slowest resource', () => {
    close(idealMs(h100), 5.387);
  });

  it("takes the link's per-copy cost out, once per piece it was measured in", () => {
    // 32 pieces of one H2D copy each at 10 µs: 0.32 ms of fixed cost in the 5.387 ms.
    close(idealMs({ ...h100, h2dOpMs: 0.01 }), 5.387 - 32 * 0.01);
  });

  it('ignores the link when only one direction moves data, and is the slowest stage then', () => {
    close(idealMs({ ...h100, d2hMs: 0, d2hBytes: 0 }), 4.863);
    close(idealMs({ ...h100, linkMs: null }), 4.869);
    close(idealMs({ ...h100, kernelWholeMs: 9 }), 9);
  });

  it('adds the directions with one copy engine, and everything without one', () => {
    close(idealMs({ ...h100, copyEngines: 1 }), 4.863 + 4.869);
    close(idealMs({ ...h100, copyEngines: 0 }), 4.863 + 3.695 + 4.869);
  });
});

function op(stream: string, kind: TimelineOp['kind'], startMs: number, endMs: number, issuedMs = 0): TimelineOp {
  return {
    mode: 'm',
    device: 0,
    stream,
    kind,
    chunk: null,
    buffer: kind === 'kernel' ? null : 'b',
    kernel: kind === 'kernel' ? 'k' : null,
    bytes: 1,
    startMs,
    endMs,
    issuedMs,
  };
}
const rep = (totalMs: number, issueMs: number, ops: TimelineOp[]): TracedRep => ({
  mode: 'm',
  device: 0,
  totalMs,
  issueMs,
  streams: [...new Set(ops.map((o) => o.stream))].map((id) => ({ id, flags: 'non-blocking' as const, priority: null })),
  ops,
});

describe('a traced rep with peer copies', () => {
  // s0: kernel [0,2], peer [2,6]; s1: peer [6,8] behind s0's peer on the same link; nothing runs in [8,10].
  const peer = rep(10, 9, [op('s0', 'kernel', 0, 2), op('s0', 'peer', 2, 6), op('s1', 'peer', 6, 8)]);

  it('counts the peer copies as busy time, not idle', () => {
    close(busyFractions(peer).idle, 0.2);
    close(busyFractions(peer).sm, 0.2);
  });

  it("counts them in the GPU's busy time against the host's issue time", () => {
    const rate = issueRate(peer);
    close(rate.gpuBusyMs, 8);
    assert.equal(rate.hostIssueBound, true);
    assert.equal(issueRate({ ...peer, issueMs: 7 }).hostIssueBound, false);
  });

  it("blames a peer copy's wait on another stream's peer copy as engine time", () => {
    const gaps = idleGaps(peer);
    assert.deepEqual(
      gaps.map((g) => [g.stream, g.startMs, g.endMs, g.hostMs, g.engineMs, g.dependencyMs]),
      [['s1', 0, 6, 0, 4, 2]],
    );
  });
});
