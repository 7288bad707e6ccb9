import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { clockConfirmedVerdict, NOISE_RULE, thresholdRule, type Verdict, type VerdictRule, verdict } from '../../src/compare/verdict.js';
import type { Stats } from '../../src/result/mode.js';

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
      n,
      median,
      mean: (q1 + median + q3) / 3,
      min: q1 * 0.99,
      max: q3 * 1.01,
      stdev: q3 - q1,
      q1,
      q3,
      iqr: q3 - q1,
      relativeStdev: (q3 - q1) / median,
      relativeNoise: (q3 - q1) / median,
      outliers: [],
    };
  });

/** A pair whose medians sit close together, where a threshold decides: the region where asymmetries hide. */
const nearPair = fc
  .tuple(statsArbitrary, fc.double({ min: 0.85, max: 1.15, noNaN: true }), fc.double({ min: 0, max: 0.02, noNaN: true }))
  .map(([a, ratio, spread]): [Stats, Stats] => {
    const median = a.median * ratio;
    const b = { ...a, median, q1: median * (1 - spread), q3: median * (1 + spread), mean: median };
    return [{ ...a, q1: a.median * (1 - spread), q3: a.median * (1 + spread) }, b];
  });

const MIRROR: Record<Verdict, Verdict> = { faster: 'slower', slower: 'faster', same: 'same', noisy: 'noisy' };
const rule: fc.Arbitrary<VerdictRule> = fc.oneof(
  fc.constant(NOISE_RULE),
  fc.double({ min: 0.001, max: 0.5, noNaN: true }).map(thresholdRule),
  fc.record({ floor: fc.double({ min: 0.001, max: 0.1, noNaN: true }), multiple: fc.double({ min: 0, max: 5, noNaN: true }) }).map((r): VerdictRule => ({ kind: 'noise', ...r })),
);
const clocks = fc.option(fc.record({ baseline: fc.double({ min: 500, max: 2500, noNaN: true }), candidate: fc.double({ min: 500, max: 2500, noNaN: true }) }), { nil: null });

describe('compare verdicts (property)', () => {
  it('are antisymmetric: a is slower than b exactly when b is faster than a', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(statsArbitrary, statsArbitrary), nearPair), rule, ([a, b], r) => {
        assert.equal(verdict(b, a, r).verdict, MIRROR[verdict(a, b, r).verdict]);
      }),
      { numRuns: 2000 },
    );
  });

  it('stay antisymmetric when confirmed in clock-normalised time', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(statsArbitrary, statsArbitrary), nearPair), rule, clocks, ([a, b], r, c) => {
        const swapped = c && { baseline: c.candidate, candidate: c.baseline };
        assert.equal(clockConfirmedVerdict(b, a, swapped, r).verdict, MIRROR[clockConfirmedVerdict(a, b, c, r).verdict]);
      }),
      { numRuns: 2000 },
    );
  });

  it("never call a change smaller than the noise rule's floor anything but same", () => {
    fc.assert(
      fc.property(statsArbitrary, fc.double({ min: 0.9901, max: 1.0099, noNaN: true }), (a, ratio) => {
        const b = { ...a, median: a.median * ratio, q1: a.q1 * ratio, q3: a.q3 * ratio };
        return verdict(a, b).verdict === 'same';
      }),
      { numRuns: 500 },
    );
  });

  it('call a run the same as itself', () => {
    fc.assert(
      fc.property(statsArbitrary, rule, (a, r) => verdict(a, a, r).verdict === 'same'),
      { numRuns: 300 },
    );
  });
});
