import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { logRatios, pairedEstimate, pairedMeasured } from '../../src/compare/paired.js';
import {
  judge,
  type Measured,
  type Verdict,
  type VerdictRule,
  pairedRule,
  separateRunsRule,
} from '../../src/compare/rule.js';
import { kthDifference, shiftInterval } from '../../src/compare/shift.js';
import { clockConfirmedVerdict, verdict } from '../../src/compare/verdict.js';

// The one rule's promises, over samples as runs produce them: positive times, a few per cent to tens of per cent of
// scatter, 1 to 40 samples a side (below the interval's minimum too).

/**
 * A fraction from whole thousandths: fast-check's doubles crowd the ends of their range (0, ±1), where every pair is
 * `same` or far apart and the band's edges are never met.
 */
const thousandths = (min: number, max: number) =>
  fc.integer({ min: Math.round(min * 1000), max: Math.round(max * 1000) }).map((x) => x / 1000);
const deviates = (length: { min: number; max: number }) =>
  fc.array(thousandths(-1, 1), { minLength: length.min, maxLength: length.max });

/** A run's samples: a median times exp(spread × a deviate), the deviates in [−1, 1]. */
const run = (length: { min: number; max: number }) =>
  fc
    .record({
      median: fc.double({ min: 1e-3, max: 1e4, noNaN: true }),
      spread: thousandths(0, 0.3),
      deviates: deviates(length),
    })
    .map(({ median, spread, deviates }) => deviates.map((z) => median * Math.exp(spread * z)));

const pair = fc.tuple(run({ min: 1, max: 40 }), run({ min: 1, max: 40 }));
/** Two runs of one median and close spreads: where the band's edges decide, and asymmetries would hide. */
const nearPair = fc
  .tuple(run({ min: 3, max: 40 }), thousandths(0.97, 1.03), thousandths(0.5, 2))
  .map(([a, ratio, stretch]): [number[], number[]] => {
    const middle = a[Math.floor(a.length / 2)] as number;
    return [a, a.map((t) => middle * ratio * (t / middle) ** stretch)];
  });
const band = thousandths(0.001, 0.2);
const clocks = fc.option(
  fc.record({
    baseline: fc.double({ min: 500, max: 2500, noNaN: true }),
    candidate: fc.double({ min: 500, max: 2500, noNaN: true }),
  }),
  {
    nil: null,
  },
);

const MIRROR: Record<Verdict, Verdict> = { faster: 'slower', slower: 'faster', same: 'same', noisy: 'noisy' };

/** True when an end of the interval or the estimate lies within `eps` of an edge the rule compares it with. */
function nearEdge(measured: Measured, rule: Pick<VerdictRule, 'band'>, eps: number): boolean {
  if (!measured.interval) return false;
  const edge = Math.log1p(rule.band);
  const { estimate, low, high } = measured.interval;
  return [estimate, low, high].some((x) => [0, edge, -edge].some((e) => Math.abs(x - e) < eps));
}

describe('the verdict rule (property)', () => {
  it('selects the k-th of the differences as sorting them all would, ties and signs included', () => {
    const values = fc.array(
      fc.oneof(fc.constantFrom(-1, 0, 0.5, 1), thousandths(-3, 3), fc.double({ min: -1e3, max: 1e3, noNaN: true })),
      { minLength: 1, maxLength: 40 },
    );
    fc.assert(
      fc.property(values, values, fc.nat(), (x, y, pick) => {
        const [xs, ys] = [[...x].sort((p, q) => p - q), [...y].sort((p, q) => p - q)];
        const all = ys.flatMap((b) => xs.map((a) => b - a)).sort((p, q) => p - q);
        const k = (pick % all.length) + 1;
        // Numerically: 0 − (−0) and −0 − 0 are the same difference, though Object.is tells their signs apart.
        assert.equal(kthDifference(xs, ys, k) + 0, (all[k - 1] as number) + 0);
      }),
      { numRuns: 2000 },
    );
  });

  it('mirrors on swapping two runs: slower and faster swap, same and noisy stay', () => {
    fc.assert(
      fc.property(fc.oneof(pair, nearPair), band, ([a, b], d) => {
        const rule = separateRunsRule(d);
        assert.equal(verdict(b, a, rule).verdict, MIRROR[verdict(a, b, rule).verdict]);
      }),
      { numRuns: 1000 },
    );
  });

  it('mirrors on swapping two runs in clock-normalised time too', () => {
    fc.assert(
      fc.property(fc.oneof(pair, nearPair), band, clocks, ([a, b], d, c) => {
        const swapped = c && { baseline: c.candidate, candidate: c.baseline };
        const rule = separateRunsRule(d);
        assert.equal(
          clockConfirmedVerdict(b, a, swapped, rule).verdict,
          MIRROR[clockConfirmedVerdict(a, b, c, rule).verdict],
        );
      }),
      { numRuns: 500 },
    );
  });

  it('mirrors on swapping the sides of interleaved pairs', () => {
    fc.assert(
      fc.property(fc.oneof(pair, nearPair), band, ([a, b], d) => {
        const rule = pairedRule(d);
        const measured = (x: number[], y: number[]) =>
          pairedMeasured(pairedEstimate(logRatios(x, y), rule.confidence), rule.confidence);
        // On an edge to the last bit, log(b/a) and −log(a/b) may round to either side of it (seen: every ratio 1.006
        // against a ±0.6% band).
        fc.pre(!nearEdge(measured(a, b), rule, 1e-9) && !nearEdge(measured(b, a), rule, 1e-9));
        assert.equal(judge(measured(b, a), rule), MIRROR[judge(measured(a, b), rule)]);
      }),
      { numRuns: 1000 },
    );
  });

  it('changes nothing when both runs are scaled by one constant', () => {
    fc.assert(
      fc.property(pair, band, fc.double({ min: 1e-3, max: 1e3, noNaN: true }), ([a, b], d, c) => {
        const rule = separateRunsRule(d);
        const measured = shiftInterval(a, b, rule.confidence);
        fc.pre(!nearEdge(measured, rule, 1e-9));
        assert.equal(
          verdict(
            a.map((t) => t * c),
            b.map((t) => t * c),
            rule,
          ).verdict,
          judge(measured, rule),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('changes nothing when the samples come in another order (two separate runs)', () => {
    fc.assert(
      fc.property(pair, band, ([a, b], d) => {
        const rule = separateRunsRule(d);
        assert.equal(
          verdict(
            [...a].reverse(),
            [...b].sort((x, y) => x - y),
            rule,
          ).verdict,
          verdict(a, b, rule).verdict,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('never makes same easier when the spread widens: noisy stays out of same, and so does any verdict', () => {
    // Both runs of one shape (the same deviates), centres apart by a shift: widening the spread widens the interval
    // about the shift, and a wider interval can only leave the band. So a wider spread reads same only where the
    // narrower one did.
    fc.assert(
      fc.property(
        deviates({ min: 1, max: 30 }),
        thousandths(-0.1, 0.1),
        thousandths(0, 0.2),
        thousandths(1, 5),
        band,
        (shape, shift, spread, widen, d) => {
          const rule = separateRunsRule(d);
          const sides = (s: number) =>
            [shape.map((z) => Math.exp(s * z)), shape.map((z) => Math.exp(shift + s * z))] as const;
          const [a, b] = sides(spread);
          const [wideA, wideB] = sides(spread * widen);
          const narrow = shiftInterval(a, b, rule.confidence);
          fc.pre(!nearEdge(narrow, rule, 1e-9));
          if (verdict(wideA, wideB, rule).verdict === 'same') assert.equal(judge(narrow, rule), 'same');
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps same under a wider band, and slower or faster under a narrower one', () => {
    fc.assert(
      fc.property(fc.oneof(pair, nearPair), band, thousandths(1, 4), ([a, b], d, factor) => {
        const [narrow, wide] = [
          verdict(a, b, separateRunsRule(d)).verdict,
          verdict(a, b, separateRunsRule(d * factor)).verdict,
        ];
        if (narrow === 'same') assert.equal(wide, 'same');
        if (wide === 'slower' || wide === 'faster') assert.equal(narrow, wide);
      }),
      { numRuns: 500 },
    );
  });

  it('calls a run the same as itself once it has the samples for an interval, and noisy before', () => {
    fc.assert(
      fc.property(run({ min: 1, max: 40 }), band, (a, d) => {
        const judged = verdict(a, a, separateRunsRule(d));
        const distinct = new Set(a).size;
        if (judged.measured.interval === null) assert.equal(judged.verdict, 'noisy');
        else if (distinct === 1) assert.equal(judged.verdict, 'same');
        assert.notEqual(judged.verdict, 'slower');
        assert.notEqual(judged.verdict, 'faster');
      }),
      { numRuns: 300 },
    );
  });
});
