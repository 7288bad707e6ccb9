import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SlotTracker } from './workers/slots.js';

describe('pinned slot tracker', () => {
  it('gives chunk c slot c mod slots, and lets chunk c + slots take it only after chunk c released it', () => {
    const slots = new SlotTracker(2);
    assert.equal(slots.take(0), 0);
    assert.equal(slots.take(1), 1);
    assert.equal(slots.blocker(2), 0);
    assert.throws(() => slots.take(2), /chunk 2 cannot take slot 0: chunk 0's CPU work has not finished/);
    slots.release(0);
    assert.equal(slots.blocker(2), null);
    assert.equal(slots.take(2), 0);
    assert.deepEqual(slots.held(), [2, 1]);
  });

  it("refuses a chunk that skips its slot's earlier chunk, a release by a chunk not holding its slot, and bad sizes", () => {
    const slots = new SlotTracker(3);
    assert.throws(() => slots.take(3), /chunk 3 cannot take slot 0 before chunk 0 did/);
    slots.take(0);
    slots.release(0);
    assert.throws(() => slots.take(6), /chunk 6 cannot take slot 0 before chunk 3 did/);
    assert.throws(() => slots.release(0), /chunk 0 does not hold slot 0 \(free\)/);
    slots.take(1);
    assert.throws(() => slots.release(4), /chunk 4 does not hold slot 1 \(chunk 1 holds it\)/);
    assert.throws(() => new SlotTracker(0), /at least one slot, not 0/);
    assert.throws(() => slots.blocker(-1), /chunk -1 is not a chunk index/);
  });

  it('never lets two chunks hold one slot, however the CPU work finishes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(fc.boolean(), { maxLength: 60 }), (count, script) => {
        const slots = new SlotTracker(count);
        const running: number[] = [];
        let next = 0;
        for (const finishOne of script) {
          if (finishOne && running.length > 0) {
            slots.release(running.shift() as number);
          } else if (slots.blocker(next) === null) {
            slots.take(next);
            running.push(next++);
          } else {
            assert.throws(() => slots.take(next));
          }
          const held = slots.held().filter((chunk) => chunk !== null);
          assert.deepEqual(
            [...held].sort((a, b) => a - b),
            [...running].sort((a, b) => a - b),
          );
          assert.ok(running.length <= count);
        }
      }),
    );
  });
});
