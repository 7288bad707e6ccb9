import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clip, intersect, type IntervalSet, measure, subtract, union } from '../../src/analysis/intervals.js';

// Interval arithmetic (analysis/intervals.ts): the time one set of intervals leaves of another, piece by piece, where
// a cut meets a piece's start, its end, several pieces, or nothing.

const set = (...pairs: (readonly [number, number])[]): IntervalSet => pairs.map(([start, end]) => ({ start, end }));

describe('subtract: the part of one interval set outside another', { timeout: 5_000 }, () => {
  it('cuts holes where the other set falls inside a piece', () => {
    assert.deepEqual(subtract(set([0, 10]), set([2, 3], [5, 6])), set([0, 2], [3, 5], [6, 10]));
  });

  it('trims a piece where a cut covers its start or its end, and removes one a cut covers whole', () => {
    assert.deepEqual(subtract(set([0, 10]), set([-1, 2])), set([2, 10]));
    assert.deepEqual(subtract(set([0, 10]), set([8, 12])), set([0, 8]));
    assert.deepEqual(subtract(set([0, 10]), set([-1, 11])), []);
    assert.deepEqual(subtract(set([0, 10]), set([0, 10])), []);
  });

  it('leaves no empty piece where a cut starts where a piece starts or ends where it ends', () => {
    assert.deepEqual(subtract(set([0, 4]), set([0, 1])), set([1, 4]));
    assert.deepEqual(subtract(set([0, 4]), set([3, 4])), set([0, 3]));
  });

  it('keeps a piece whole that a cut only touches, before or after', () => {
    assert.deepEqual(subtract(set([2, 4]), set([0, 2])), set([2, 4]));
    assert.deepEqual(subtract(set([0, 2]), set([2, 3])), set([0, 2]));
    assert.deepEqual(subtract(set([0, 2]), []), set([0, 2]));
    assert.deepEqual(subtract(set([0, 2]), set([3, 4])), set([0, 2]));
    assert.deepEqual(subtract(set([0, 2], [5, 6]), set([3, 4])), set([0, 2], [5, 6]));
    assert.deepEqual(subtract([], set([0, 2])), []);
  });

  it('lets one cut reach across two pieces, and passes over cuts that end before a piece', () => {
    assert.deepEqual(subtract(set([0, 2], [3, 5]), set([1, 4])), set([0, 1], [4, 5]));
    assert.deepEqual(
      subtract(set([5, 6], [7, 9]), set([0, 1], [2, 3], [5.5, 7.5], [8, 8.5])),
      set([5, 5.5], [7.5, 8], [8.5, 9]),
    );
  });

  it('leaves as much time as the two sets do not share', () => {
    const a = set([0, 3], [4, 8], [10, 11]);
    const b = set([1, 2], [3, 5], [7, 12]);
    assert.equal(measure(subtract(a, b)), measure(a) - measure(intersect(a, b)));
    assert.equal(measure(subtract(a, b)), 4);
  });
});

describe('union, intersect and clip at their edges', { timeout: 5_000 }, () => {
  it('merges pieces that touch, drops empty and reversed ones, and keeps pieces apart that do not meet', () => {
    assert.deepEqual(union(set([3, 4], [0, 1], [1, 2], [5, 5], [7, 6])), set([0, 2], [3, 4]));
    assert.deepEqual(union(set([0, 5], [1, 2])), set([0, 5]));
    assert.deepEqual(union(set([0, 5], [0, 1], [6, 7])), set([0, 5], [6, 7]));
  });

  it('intersects pieces that share time, however they line up', () => {
    assert.deepEqual(intersect(set([0, 4], [5, 9]), set([3, 6], [8, 10])), set([3, 4], [5, 6], [8, 9]));
    assert.deepEqual(intersect(set([0, 2], [3, 4]), set([0, 2], [3, 5])), set([0, 2], [3, 4]));
    assert.deepEqual(intersect(set([0, 2]), set([2, 4])), []);
  });

  it('clips a set to a window', () => {
    assert.deepEqual(clip(set([0, 2], [3, 6]), 1, 4), set([1, 2], [3, 4]));
    assert.deepEqual(clip(set([0, 2]), 2, 2), []);
  });
});
