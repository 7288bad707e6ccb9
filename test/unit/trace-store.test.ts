import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Field, NESTED_ARRAY, NESTED_OBJECT, readsOf, type TraceRecord } from '../../src/traces/chrome/record.js';
import { RecordStore } from '../../src/traces/chrome/store.js';

// The kept events of a streamed trace are held as bytes (src/traces/chrome/store.ts) and read back when a format
// iterates them: each must come back as the record it was, its keys in the same order and every value the same.

const reads = readsOf([
  {
    event: ['ph', 'cat', 'name', 'pid', 'tid', 'ts', 'dur', 'args'],
    args: ['device', 'stream', 'correlation', 'grid', 'name'],
  },
]);
const field: fc.Arbitrary<Field> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.double({ noNaN: true }),
  fc.integer(),
  fc.constantFrom<Field>(
    true,
    false,
    null,
    NESTED_OBJECT,
    NESTED_ARRAY,
    -0,
    2 ** 31,
    -(2 ** 31),
    2 ** 31 - 1,
    1.5e15 + 0.25,
  ),
);
/** Fields of a record in any order: a subset of the keys, shuffled, each with any value. */
const fields = (keys: readonly string[]) =>
  fc
    .shuffledSubarray([...keys])
    .chain((chosen) =>
      fc
        .tuple(...chosen.map((key) => field.map((value) => [key, value] as const)))
        .map((pairs) => Object.fromEntries(pairs)),
    );
const record: fc.Arbitrary<TraceRecord> = fc
  .tuple(fc.nat({ max: 2 ** 32 - 1 }), fields([...reads.event]), fields([...reads.args]))
  .map(([index, event, args]) => ({ index, event, args }));

describe('the kept events held as bytes', () => {
  it('reads every record back as it was kept, in order, keys in their order, -0 and large numbers exact', {
    timeout: 60_000,
  }, () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), (records) => {
        const store = new RecordStore(reads);
        for (const r of records) store.push(r);
        const back = [...store];
        assert.equal(store.length, records.length);
        assert.deepStrictEqual(back, records);
        back.forEach((r, i) => {
          assert.deepEqual(Object.keys(r.event), Object.keys(records[i]!.event));
          assert.deepEqual(Object.keys(r.args), Object.keys(records[i]!.args));
          for (const key of Object.keys(r.event)) assert.ok(Object.is(r.event[key], records[i]!.event[key]), key);
        });
        // A second pass reads the same records again: a format may iterate twice.
        assert.deepStrictEqual([...store], records);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps records across chunks: a million kernels read back in order', { timeout: 60_000 }, () => {
    const store = new RecordStore(reads);
    const n = 1_000_000;
    for (let i = 0; i < n; i++)
      store.push({
        index: i,
        event: { ph: 'X', cat: 'kernel', name: `k${i % 7}`, ts: 1.7e15 + i * 0.5, dur: 3 },
        args: { device: 0, stream: 7, correlation: i },
      });
    let i = 0;
    for (const r of store) {
      assert.equal(r.index, i);
      assert.equal(r.event.ts, 1.7e15 + i * 0.5);
      assert.equal(r.args.correlation, i);
      i++;
    }
    assert.equal(i, n);
  });

  it('drains: the records once more, in order, and the store empty after', { timeout: 30_000 }, () => {
    const store = new RecordStore(reads);
    const n = 200_000;
    for (let i = 0; i < n; i++)
      store.push({ index: i, event: { ph: 'X', name: 'k', ts: i + 0.25 }, args: { correlation: i } });
    let i = 0;
    for (const r of store.drain()) {
      assert.deepStrictEqual(r, { index: i, event: { ph: 'X', name: 'k', ts: i + 0.25 }, args: { correlation: i } });
      i++;
    }
    assert.equal(i, n);
    assert.equal(store.length, 0);
    assert.deepStrictEqual([...store], []);
  });

  it('refuses a field no format reads, rather than dropping it', { timeout: 5_000 }, () => {
    const store = new RecordStore(reads);
    assert.throws(
      () => store.push({ index: 0, event: { unread: 1 }, args: {} }),
      /field "unread", which no format reads/,
    );
  });
});
