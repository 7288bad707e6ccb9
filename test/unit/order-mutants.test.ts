import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { happensBefore } from '../../src/plan/order.js';
import type { Op } from '../../src/plan/types.js';

// What CUDA guarantees about the order of a rep's ops (plan/order.ts), on a small rep of two streams joined by events:
// stream a runs two ops and records e; b waits on e, then a re-records e, and c waits on the later record.

const ops: Op[] = [
  { kind: 'empty', stream: 'b' }, // 0: before any record, on b
  { kind: 'wait', stream: 'b', event: 'e' }, // 1: e not yet recorded: waits for nothing
  { kind: 'empty', stream: 'a' }, // 2
  { kind: 'record', stream: 'a', event: 'e' }, // 3
  { kind: 'wait', stream: 'c', event: 'e' }, // 4: follows 3, and so 2
  { kind: 'empty', stream: 'a' }, // 5
  { kind: 'record', stream: 'a', event: 'e' }, // 6
  { kind: 'wait', stream: 'd', event: 'e' }, // 7: follows 6, and so 5, 3, 2
  { kind: 'empty', stream: 'c' }, // 8: follows 4 on c
];

describe("the order CUDA guarantees a rep's ops (plan/order.ts)", { timeout: 10_000 }, () => {
  const before = happensBefore(ops);
  const after = (b: number) => ops.flatMap((_, a) => (before(a, b) ? [a] : []));

  it('orders each op after the earlier ops of its stream, and no op after itself', () => {
    assert.deepEqual(after(1), [0]);
    assert.deepEqual(after(5), [2, 3]);
    assert.deepEqual(after(0), []);
  });

  it('orders a wait after the last record of its event issued before it, and through it what preceded the record', () => {
    assert.deepEqual(after(4), [2, 3]);
    assert.deepEqual(after(7), [2, 3, 5, 6]);
    assert.deepEqual(after(8), [2, 3, 4]);
  });

  it('lets a wait on an event not yet recorded wait for nothing: the record that follows it is not before it', () => {
    assert.equal(before(3, 1), false);
    assert.equal(before(1, 3), false);
  });

  it('puts nothing before an index past the last op', () => {
    assert.equal(before(0, ops.length), false);
    assert.equal(before(6, ops.length + 3), false);
  });

  it('orders a record after nothing on other streams that recorded the same event before it', () => {
    const twice = happensBefore([
      { kind: 'record', stream: 'a', event: 'e' },
      { kind: 'record', stream: 'b', event: 'e' },
    ]);
    assert.equal(twice(0, 1), false);
  });

  it('orders two waits on one record after the record, not after each other', () => {
    const fan = happensBefore([
      { kind: 'record', stream: 'a', event: 'e' },
      { kind: 'wait', stream: 'b', event: 'e' },
      { kind: 'wait', stream: 'c', event: 'e' },
    ]);
    assert.deepEqual([fan(0, 1), fan(0, 2), fan(1, 2)], [true, true, false]);
  });
});
