import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bimodal, CHANGE_BAND, MIN_SHARE, MIN_SIDE, rankedMs } from '../../src/bimodal.js';
import { SEPARATE_RUNS_BAND } from '../../src/compare/rule.js';
import { bestOfSweep } from '../../src/measure/sweep.js';
import { summarize } from '../../src/measure/stats.js';
import { packageRoot } from '../../src/paths.js';
import { loadResults } from '../../src/result/load.js';

// The statistic that says whether a mode's reps form two clusters (src/bimodal.ts), on samples made to be one cluster
// or two, and on the four-H200 Results where 32 buckets took about 4.4 or about 5.3 ms within one run.

const DEADLINE = { timeout: 60_000 };
const knobs = (file: string) => join(packageRoot(), 'docs', 'measurements', '2026-11-28-h200x4-ddp-knobs', file);
const overlappedOf = (file: string, index = 0) => {
  const mode = loadResults(knobs(file))[index]?.modes.find((m) => m.role.kind === 'overlapped');
  assert.ok(mode, file);
  return mode;
};

/** A polynomial by Horner's rule, its coefficients from the highest power down. */
const horner = (coefficients: readonly number[], x: number) => coefficients.reduce((sum, k) => sum * x + k, 0);
const A = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716];
const B = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572, 1];
const C = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968];
const D = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416, 1];

/** The standard normal quantile (Acklam's rational approximation, good to 1e-9): stratified normal samples below. */
function normalQuantile(p: number): number {
  const tail = (q: number) => horner([...C, 2.938163982698783], q) / horner(D, q);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (horner([...A, 2.506628277459239], r) * q) / horner(B, r);
}

/**
 * n normal reps around `median` with relative σ `noise`, one in each of n equal slices of probability (where in its
 * slice each falls is fast-check's), so the sample is one cluster however unlucky the draw, and the tails are normal.
 */
const normalReps = (median: number, noise: number, jitter: readonly number[]) =>
  jitter.map((u, i) => {
    const within = Math.min(Math.max(u, 1e-6), 1 - 1e-6);
    return median * (1 + noise * normalQuantile((i + within) / jitter.length));
  });

const oneCluster = fc
  .record({
    median: fc.double({ min: 0.01, max: 1000, noNaN: true }),
    noise: fc.double({ min: 0.0005, max: 0.2, noNaN: true }),
    jitter: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 10, maxLength: 400 }),
    // A few far reps, fewer than a tenth, each 1.2 to 3 times the median: the outliers stats.ts flags.
    far: fc.array(fc.double({ min: 1.2, max: 3, noNaN: true }), { maxLength: 40 }),
  })
  .map(({ median, noise, jitter, far }) => {
    const outliers = far.slice(0, Math.floor(jitter.length / 10)).map((f) => median * f);
    return [...normalReps(median, noise, jitter), ...outliers];
  });

const twoClusters = fc.record({
  fast: fc.integer({ min: 0, max: 300 }),
  slow: fc.integer({ min: 0, max: 300 }),
  median: fc.double({ min: 0.01, max: 1000, noNaN: true }),
  noise: fc.double({ min: 0.0005, max: 0.004, noNaN: true }),
  // The slow cluster 6% to 100% above the fast one: its median 15 σ or more away, far beyond the change band.
  step: fc.double({ min: 0.06, max: 1, noNaN: true }),
  seed: fc.double({ min: 0, max: 1, noNaN: true }),
});

describe('two clusters of reps (src/bimodal.ts)', () => {
  it('never calls one cluster of normal noise with a few outliers bimodal', DEADLINE, () => {
    fc.assert(
      fc.property(oneCluster, (reps) => bimodal(reps) === null),
      { numRuns: 500 },
    );
  });

  it('finds two well-separated clusters, each with its count and median', DEADLINE, () => {
    fc.assert(
      fc.property(twoClusters, ({ fast, slow, median, noise, step, seed }) => {
        const total = fast + slow;
        fc.pre(Math.min(fast, slow) >= Math.max(MIN_SIDE, Math.ceil(MIN_SHARE * total)));
        const jitter = (n: number) => Array.from({ length: n }, (_, i) => 0.25 + 0.5 * ((i * 0.618 + seed) % 1));
        const slowReps = normalReps(median * (1 + step), noise, jitter(slow));
        const found = bimodal([...slowReps, ...normalReps(median, noise, jitter(fast))]);
        assert.ok(found, `${fast} + ${slow} reps, ${step} apart`);
        assert.deepEqual([found.fast.n, found.slow.n], [fast, slow]);
        assert.ok(Math.abs(found.fast.median / median - 1) < 4 * noise);
        assert.ok(Math.abs(found.slow.median / (median * (1 + step)) - 1) < 4 * noise);
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same answer whatever the order of the reps and in any power-of-two unit', DEADLINE, () => {
    const samples = fc.oneof(
      oneCluster,
      twoClusters.map(({ fast, slow, median, noise, step, seed }) => {
        const jitter = (n: number) => Array.from({ length: n }, (_, i) => 0.25 + 0.5 * ((i * 0.618 + seed) % 1));
        return [...normalReps(median, noise, jitter(fast)), ...normalReps(median * (1 + step), noise, jitter(slow))];
      }),
    );
    fc.assert(
      fc.property(samples, fc.integer({ min: -20, max: 20 }), fc.integer(), (reps, power, shuffle) => {
        const scale = 2 ** power;
        const keyed = reps.map((x, i) => ({ x, key: (i * 2654435761 + shuffle) % 1000003 }));
        const shuffled = keyed.sort((a, b) => a.key - b.key);
        const found = bimodal(reps);
        const scaled = bimodal(shuffled.map((s) => s.x * scale));
        const times = (c: { n: number; median: number }) => ({ n: c.n, median: c.median * scale });
        assert.deepEqual(scaled, found && { fast: times(found.fast), slow: times(found.slow) });
      }),
      { numRuns: 300 },
    );
  });

  it('calls two far reps outliers, not a cluster, and reps closer than the change band one cluster', DEADLINE, () => {
    assert.equal(bimodal([...Array.from({ length: 8 }, (_, i) => 4.4 + i * 0.001), 5.3, 5.31]), null);
    // Two tight groups 0.5% apart: within what `compare` calls no change between runs.
    const ten = (from: number) => Array.from({ length: 10 }, (_, i) => from + i * 1e-5);
    const tight = [...ten(4.4), ...ten(4.422)];
    assert.equal(bimodal(tight), null);
    assert.ok(bimodal(tight, 0.001));
  });

  it("uses compare's band for a change between two runs", DEADLINE, () => {
    assert.equal(CHANGE_BAND, SEPARATE_RUNS_BAND);
  });
});

describe('32 buckets over four H200s (docs/measurements/2026-11-28-h200x4-ddp-knobs)', () => {
  it('is bimodal in both runs that took enough reps, with the counts on each side of 4.8 ms', DEADLINE, () => {
    const high = overlappedOf('run-g4-high-32-2.json');
    const low = overlappedOf('run-g4-low-32-2.json');
    const under = (reps: readonly number[]) => reps.filter((x) => x < 4.8).length;
    const counts = (reps: readonly number[]) => [under(reps), reps.length - under(reps)];
    assert.deepEqual(counts(high.samplesMs), [35, 62]);
    assert.deepEqual(counts(low.samplesMs), [175, 55]);
    const round = (x: number) => Number(x.toFixed(3));
    const split = (reps: readonly number[]) => {
      const found = bimodal(reps);
      return found && [found.fast.n, round(found.fast.median), found.slow.n, round(found.slow.median)];
    };
    assert.deepEqual(split(high.samplesMs), [35, 4.471, 62, 5.289]);
    assert.deepEqual(split(low.samplesMs), [175, 4.382, 55, 5.277]);
  });

  it('is not bimodal at 16 buckets, in any run or in the sweep that raced it 130 reps', DEADLINE, () => {
    const runs = ['run-g4-high-16-1.json', 'run-g4-high-16-2.json', 'run-g4-low-16-1.json', 'run-g4-low-16-2.json'];
    for (const file of runs) {
      assert.equal(bimodal(overlappedOf(file).samplesMs), null, file);
    }
    const [sweep] = loadResults(knobs('sweep-g4.json'));
    const sixteen = sweep?.modes.find((m) => m.id === 'overlapped:16x3:depth-first:stage-per-stream');
    assert.equal(sixteen?.stats.n, 130);
    assert.equal(bimodal(sixteen?.samplesMs ?? []), null);
  });

  it('ranks 32 buckets at its slower cluster, so a sweep that raced it against 16 picks 16', DEADLINE, () => {
    const sixteen = overlappedOf('run-g4-low-16-2.json');
    const thirtyTwo = overlappedOf('run-g4-low-32-2.json');
    assert.ok(thirtyTwo.stats.median < sixteen.stats.median, 'at their medians, 32 buckets would win');
    assert.equal(Number(rankedMs(thirtyTwo.samplesMs, thirtyTwo.stats.median).toFixed(3)), 5.277);
    const layout = (id: string, samplesMs: readonly number[]) => ({ id, samplesMs, stats: summarize(samplesMs) });
    const best = bestOfSweep([layout('32', thirtyTwo.samplesMs), layout('16', sixteen.samplesMs)]);
    assert.deepEqual(best, { mode: '16', ties: [] });
  });
});
