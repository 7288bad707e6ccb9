import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Interval, intersect, measure, subtract, union } from '../../src/analysis/intervals.js';

// The interval algebra `analyze` measures every overlap with. Integer ends keep every sum exact, so the properties
// compare with equality; a brute-force count over unit cells is the reference.

const intervalArbitrary: fc.Arbitrary<Interval> = fc
  .record({ start: fc.integer({ min: 0, max: 200 }), length: fc.integer({ min: -5, max: 60 }) })
  .map(({ start, length }) => ({ start, end: start + length }));
const listArbitrary = fc.array(intervalArbitrary, { maxLength: 30 });

/** The unit cells [t, t+1) some interval covers: the reference the sweeps must agree with. */
function cells(intervals: readonly Interval[]): Set<number> {
  const covered = new Set<number>();
  for (const i of intervals) for (let t = i.start; t < i.end; t += 1) covered.add(t);
  return covered;
}

const sumOfLengths = (intervals: readonly Interval[]) =>
  intervals.reduce((sum, i) => sum + Math.max(0, i.end - i.start), 0);

describe('interval algebra, for any lists of intervals', () => {
  it('a union is sorted, disjoint and non-empty, no longer than the lengths summed, and covers what the intervals cover', () => {
    fc.assert(
      fc.property(listArbitrary, (list) => {
        const u = union(list);
        u.forEach((piece, k) => {
          assert.ok(piece.end > piece.start);
          if (k > 0) assert.ok(piece.start > u[k - 1]!.end);
        });
        assert.ok(measure(u) <= sumOfLengths(list));
        assert.equal(measure(u), cells(list).size);
      }),
    );
  });

  it('an intersection is no longer than the shorter set, and covers exactly the cells both cover', () => {
    fc.assert(
      fc.property(listArbitrary, listArbitrary, (a, b) => {
        const [ua, ub] = [union(a), union(b)];
        const both = intersect(ua, ub);
        assert.ok(measure(both) <= Math.min(measure(ua), measure(ub)));
        const inB = cells(b);
        assert.equal(measure(both), [...cells(a)].filter((t) => inB.has(t)).length);
        assert.deepEqual(intersect(ua, ub), intersect(ub, ua));
      }),
    );
  });

  it('a difference and the intersection split the first set: |A \\ B| + |A ∩ B| = |A|, and A \\ B meets nothing of B', () => {
    fc.assert(
      fc.property(listArbitrary, listArbitrary, (a, b) => {
        const [ua, ub] = [union(a), union(b)];
        const rest = subtract(ua, ub);
        assert.equal(measure(rest) + measure(intersect(ua, ub)), measure(ua));
        assert.equal(measure(intersect(rest, ub)), 0);
        assert.deepEqual(union(rest), rest);
      }),
    );
  });

  it('|A ∪ B| = |A| + |B| − |A ∩ B|', () => {
    fc.assert(
      fc.property(listArbitrary, listArbitrary, (a, b) => {
        const [ua, ub] = [union(a), union(b)];
        assert.equal(measure(union([...ua, ...ub])), measure(ua) + measure(ub) - measure(intersect(ua, ub)));
      }),
    );
  });
});

describe('subtract', () => {
  it('cuts holes out of a piece and keeps the pieces a later cut does not reach', () => {
    const a = [
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ];
    const b = [
      { start: 2, end: 4 },
      { start: 8, end: 22 },
      { start: 25, end: 26 },
    ];
    assert.deepEqual(subtract(a, b), [
      { start: 0, end: 2 },
      { start: 4, end: 8 },
      { start: 22, end: 25 },
      { start: 26, end: 30 },
    ]);
  });
});
