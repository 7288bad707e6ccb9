import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareOutput, POISON } from '../../src/data/compare.js';
import { fillPattern, fromBfloat16Bits, fromHalfBits, toBfloat16Bits, toHalfBits } from '../../src/data/patterns.js';
import { outBuffer as buffer } from '../helpers/config-buffer.js';

describe('input patterns', () => {
  it('fills float32 with seeded values in [1, 2): never zero, repeatable, seed-dependent', () => {
    const a = new Uint8Array(4096);
    const b = new Uint8Array(4096);
    const c = new Uint8Array(4096);
    fillPattern(a, 'float32', { kind: 'random', seed: 7 });
    fillPattern(b, 'float32', { kind: 'random', seed: 7 });
    fillPattern(c, 'float32', { kind: 'random', seed: 8 });
    const values = new Float32Array(a.buffer);
    assert.ok(values.every((v) => v >= 1 && v < 2));
    assert.ok(new Set(values).size > 1000);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  it('fills ramps and constants in the element type', () => {
    const ramp = new Uint8Array(16);
    fillPattern(ramp, 'int32', { kind: 'ramp', start: 5, step: 2 });
    assert.deepEqual([...new Int32Array(ramp.buffer)], [5, 7, 9, 11]);
    const halves = new Uint8Array(4);
    fillPattern(halves, 'float16', { kind: 'constant', value: 1.5 });
    assert.deepEqual([...new Uint16Array(halves.buffer)], [0x3e00, 0x3e00]);
  });

  it('encodes float16 bits with round-to-nearest-even, infinities and subnormals', () => {
    assert.equal(toHalfBits(1), 0x3c00);
    assert.equal(toHalfBits(-2), 0xc000);
    assert.equal(toHalfBits(65504), 0x7bff);
    assert.equal(toHalfBits(1e6), 0x7c00);
    assert.equal(toHalfBits(2 ** -24), 0x0001);
    assert.equal(toHalfBits(1 + 2 ** -11), 0x3c00);
  });

  it('decodes every bfloat16 bit pattern as the float32 of its bits shifted up, and encodes each back to itself', () => {
    const reference = new DataView(new ArrayBuffer(4));
    for (let bits = 0; bits < 0x10000; bits++) {
      reference.setUint32(0, bits << 16);
      const expected = reference.getFloat32(0);
      const decoded = fromBfloat16Bits(bits);
      if (Number.isNaN(expected)) {
        assert.ok(Number.isNaN(decoded), `bits ${bits.toString(16)}`);
        continue;
      }
      assert.equal(decoded, expected, `bits ${bits.toString(16)}`);
      assert.equal(toBfloat16Bits(decoded), bits, `bits ${bits.toString(16)}`);
    }
  });

  it('decodes every float16 bit pattern, subnormals and infinities included, and encodes each back to itself', () => {
    assert.equal(fromHalfBits(0x3c00), 1);
    assert.equal(fromHalfBits(0x7bff), 65504);
    assert.equal(fromHalfBits(0x0001), 2 ** -24);
    assert.equal(fromHalfBits(0xfc00), Number.NEGATIVE_INFINITY);
    for (let bits = 0; bits < 0x10000; bits++) {
      const decoded = fromHalfBits(bits);
      if (Number.isNaN(decoded)) {
        assert.ok((bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0, `bits ${bits.toString(16)}`);
        continue;
      }
      assert.equal(toHalfBits(decoded), bits, `bits ${bits.toString(16)}`);
    }
  });
});

describe('output verification', () => {
  it('passes identical outputs', () => {
    const a = new Uint8Array(new Float32Array([1, 2, 3]).buffer);
    assert.equal(compareOutput(buffer('float32', 4, 3), a, a.slice(), POISON.overlapped), null);
  });

  it('reports the first differing element, both values and how many differ', () => {
    const expected = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
    const actual = new Uint8Array(new Float32Array([1, 2.5, 3, 9]).buffer);
    const m = compareOutput(buffer('float32', 4, 4), expected, actual, POISON.overlapped);
    assert.deepEqual(m, { buffer: 'out', index: 1, expected: '2', actual: '2.5', differing: 2, unwritten: false });
  });

  it('recognises an element the candidate never wrote by its poison', () => {
    const expected = new Uint8Array(new Float64Array([1, 2]).buffer);
    const actual = expected.slice();
    actual.fill(POISON.overlapped, 8, 16);
    const m = compareOutput(buffer('float64', 8, 2), expected, actual, POISON.overlapped);
    assert.equal(m?.index, 1);
    assert.equal(m?.unwritten, true);
  });
});
