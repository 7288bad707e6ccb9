import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Verdict, verdict } from '../../src/compare/verdict.js';
import type { Stats } from '../../src/result/schema.js';

/** Stats as a run produces them: positive times, q1 ≤ median ≤ q3, min and max around them. */
const statsArbitrary: fc.Arbitrary<Stats> = fc
  .record({
    median: fc.double({ min: 1e-3, max: 1e4, noNaN: true }),
    below: fc.double({ min: 0, max: 0.5, noNaN: true }),
    above: fc.double({ min: 0, max: 0.5, noNaN: true }),
    n: fc.integer({ min: 1, max: 2000 }),
  })
  .map(({ median, below, above, n }): Stats => {
    const q1 = median * (1 - below);
    const q3 = median * (1 + above);
    return {
      n, median, mean: (q1 + median + q3) / 3, min: q1 * 0.99, max: q3 * 1.01, stdev: q3 - q1, q1, q3, iqr: q3 - q1,
      relativeStdev: (q3 - q1) / median, relativeNoise: (q3 - q1) / median, outliers: [],
    };
  });

/** A pair whose medians sit close together, where a threshold decides: the region where asymmetries hide. */
const nearPair = fc.tuple(statsArbitrary, fc.double({ min: 0.85, max: 1.15, noNaN: true }), fc.double({ min: 0, max: 0.02, noNaN: true }))
  .map(([a, ratio, spread]): [Stats, Stats] => {
    const median = a.median * ratio;
    const b = { ...a, median, q1: median * (1 - spread), q3: median * (1 + spread), mean: median };
    return [{ ...a, q1: a.median * (1 - spread), q3: a.median * (1 + spread) }, b];
  });

const MIRROR: Record<Verdict, Verdict> = { faster: 'slower', slower: 'faster', same: 'same', noisy: 'noisy' };
const threshold = fc.double({ min: 0.001, max: 0.5, noNaN: true });

describe('compare verdicts (property)', () => {
  it('are antisymmetric: a is slower than b exactly when b is faster than a', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(statsArbitrary, statsArbitrary), nearPair), threshold, ([a, b], t) => {
        assert.equal(verdict(b, a, t).verdict, MIRROR[verdict(a, b, t).verdict]);
      }),
      { numRuns: 2000 },
    );
  });

  it('call a run the same as itself', () => {
    fc.assert(fc.property(statsArbitrary, threshold, (a, t) => verdict(a, a, t).verdict === 'same'), { numRuns: 300 });
  });
});
