import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HOST_WINDOW_BYTES } from '../../data/compare.js';
import { fillPattern, windowSeed, xorshiftJump } from '../../data/patterns.js';
import { ELEMENT_BYTES, ELEMENT_TYPES } from '../../vocabulary.js';
import {
  builtIn,
  checksum,
  copyRegions,
  DECODE_PATTERN_LIMIT,
  decodeRegion,
  precomputeDecode,
} from './workers/functions.js';
import type { PatternInit, StageChunk } from './workers/types.js';

const INITS: PatternInit[] = [
  { kind: 'random', seed: 5 },
  { kind: 'ramp', start: 3, step: 0.5 },
  { kind: 'constant', value: 7 },
];

/**
 * The checksum's definition, byte by byte: a view's bytes before its first aligned word and after its last one by one,
 * the words between little-endian.
 */
function referenceChecksum(views: readonly Uint8Array[]): number {
  let sum = 0;
  for (const v of views) {
    const head = Math.min(v.length, (4 - (v.byteOffset % 4)) % 4);
    let i = 0;
    for (; i < head; i++) sum = (sum + (v[i] as number)) >>> 0;
    for (; i + 4 <= v.length; i += 4)
      sum =
        (sum +
          (((v[i] as number) |
            ((v[i + 1] as number) << 8) |
            ((v[i + 2] as number) << 16) |
            ((v[i + 3] as number) << 24)) >>>
            0)) >>>
        0;
    for (; i < v.length; i++) sum = (sum + (v[i] as number)) >>> 0;
  }
  return sum;
}

describe('host stage functions', () => {
  it('checksum every 32-bit word of a chunk, wrapping, across windows', () => {
    const words = new Uint32Array([0xffffffff, 2, 3]);
    const bytes = new Uint8Array(words.buffer);
    assert.equal(checksum([bytes]), 4);
    assert.equal(checksum([bytes.subarray(0, 4), bytes.subarray(4)]), 4);
    assert.equal(checksum([bytes.subarray(1, 6)]), 0xff * 3 + 2);
  });

  it('checksum gives the byte-by-byte definition over the same views, whatever their offsets (each at least a word long)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 12, maxLength: 64 }), fc.nat(7), fc.nat(4), (data, start, cut) => {
        const bytes = new Uint8Array(72);
        bytes.set(data, start);
        const split = start + data.length - 4 - cut;
        const views = [bytes.subarray(start, split), bytes.subarray(split, start + data.length)];
        assert.equal(checksum(views), referenceChecksum(views));
      }),
    );
  });

  it('checksum sums the bytes of a view shorter than its unaligned head, empty included', () => {
    const bytes = Uint8Array.of(9, 1, 2, 9);
    assert.equal(checksum([bytes.subarray(1, 3), bytes.subarray(1, 1)]), 3);
  });

  it('checksum wraps at 2^32', () => {
    assert.equal(checksum([new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0x01])]), 2);
  });

  it('copy moves the bytes in order across regions cut at different places, and refuses different sizes', () => {
    const from = [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5)];
    const to = [new Uint8Array(1), new Uint8Array(4)];
    copyRegions(from, to);
    assert.deepEqual([...to[0]!, ...to[1]!], [1, 2, 3, 4, 5]);
    assert.throws(() => copyRegions(from, [new Uint8Array(4)]), /the chunk has 5 bytes but its targets 4/);
  });

  it('xorshiftJump lands where stepping one at a time does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0xffffffff }), fc.nat(300), (state, steps) => {
        let x = state;
        for (let i = 0; i < steps; i++) {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          x >>>= 0;
        }
        assert.equal(xorshiftJump(state, steps), x);
      }),
    );
  });

  it("decode writes, chunk by chunk, the bytes the run's fill writes over the whole buffer, for every type and pattern", () => {
    for (const type of ELEMENT_TYPES) {
      for (const init of INITS) {
        const elements = 96;
        const whole = new Uint8Array(elements * ELEMENT_BYTES[type]);
        fillPattern(whole, type, init);
        const decoded = new Uint8Array(whole.byteLength);
        const spec = { kind: 'decode', msPerMiB: 0, buffers: { input: { type, init } } } as const;
        for (const [first, count] of [
          [0, 17],
          [17, 40],
          [57, 39],
        ] as const) {
          const at = first * ELEMENT_BYTES[type];
          decodeRegion(
            { buffer: 'input', offset: at, bytes: decoded.subarray(at, at + count * ELEMENT_BYTES[type]) },
            spec,
          );
        }
        assert.deepEqual(decoded, whole, `${type} ${init.kind}`);
      }
    }
  });

  it("decode copies from the pattern computed once, equal to the run's fill, and leaves inputs over the limit to be generated per chunk", () => {
    for (const type of ELEMENT_TYPES) {
      const whole = new Uint8Array(64 * ELEMENT_BYTES[type]);
      fillPattern(whole, type, { kind: 'random', seed: 9 });
      const spec = precomputeDecode(
        { kind: 'decode', msPerMiB: 0, buffers: { input: { type, init: { kind: 'random', seed: 9 } } } },
        { input: whole.byteLength },
      );
      const pattern = spec.buffers.input?.pattern;
      assert.ok(pattern, type);
      assert.deepEqual(new Uint8Array(pattern), whole, type);
      const chunk = new Uint8Array(24 * ELEMENT_BYTES[type]);
      decodeRegion({ buffer: 'input', offset: 8 * ELEMENT_BYTES[type], bytes: chunk }, spec);
      assert.deepEqual(chunk, whole.subarray(8 * ELEMENT_BYTES[type], 32 * ELEMENT_BYTES[type]), type);
      assert.throws(
        () => decodeRegion({ buffer: 'input', offset: 48 * ELEMENT_BYTES[type], bytes: chunk }, spec),
        /run past its/,
      );
    }
    const big = {
      kind: 'decode',
      msPerMiB: 0,
      buffers: { input: { type: 'float32', init: { kind: 'random', seed: 1 } } },
    } as const;
    assert.equal(precomputeDecode(big, { input: DECODE_PATTERN_LIMIT + 4 }), big);
  });

  it('the seeded random pattern is xorshift32 from the seed, each type built from its steps as before', () => {
    const step = (v: number) => {
      let x = v;
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x >>> 0;
    };
    const steps = (n: number) => {
      const out: number[] = [];
      for (let x = 7, i = 0; i < n; i++) out.push((x = step(x)));
      return out;
    };
    const r = steps(16);
    const bytesOf = (type: (typeof ELEMENT_TYPES)[number], n: number) => {
      const bytes = new Uint8Array(n * ELEMENT_BYTES[type]);
      fillPattern(bytes, type, { kind: 'random', seed: 7 });
      return bytes;
    };
    assert.deepEqual(
      [...new Uint32Array(bytesOf('float32', 4).buffer)],
      r.slice(0, 4).map((v) => ((v >>> 9) | 0x3f800000) >>> 0),
    );
    assert.deepEqual([...new Uint32Array(bytesOf('uint32', 4).buffer)], r.slice(0, 4));
    assert.deepEqual(
      [...new Uint32Array(bytesOf('float64', 2).buffer)],
      [r[0], ((r[1]! >>> 12) | 0x3ff00000) >>> 0, r[2], ((r[3]! >>> 12) | 0x3ff00000) >>> 0],
    );
    assert.deepEqual(
      [...new Uint16Array(bytesOf('float16', 3).buffer)],
      r.slice(0, 3).map((v) => ((v >>> 16) & 0x8000) | 0x3000 | (v & 0x3ff)),
    );
    assert.deepEqual(
      [...new Uint16Array(bytesOf('bfloat16', 3).buffer)],
      r.slice(0, 3).map((v) => ((v >>> 16) & 0x8000) | 0x3e00 | (v & 0x7f)),
    );
    assert.deepEqual(
      [...bytesOf('uint8', 5)],
      r.slice(0, 5).map((v) => v & 0xff),
    );
  });

  it("decode continues a region across a window boundary with the next window's own pattern", () => {
    const init: PatternInit = { kind: 'random', seed: 11 };
    const perWindow = HOST_WINDOW_BYTES / 4;
    const region = new Uint8Array(32);
    decodeRegion(
      { buffer: 'b', offset: HOST_WINDOW_BYTES - 16, bytes: region },
      { kind: 'decode', msPerMiB: 0, buffers: { b: { type: 'float32', init } } },
    );
    const tail = new Uint8Array(16);
    fillPattern(tail, 'float32', init, perWindow - 4);
    const head = new Uint8Array(16);
    fillPattern(head, 'float32', windowSeed(init, 1, perWindow));
    assert.deepEqual(region, new Uint8Array([...tail, ...head]));
  });

  it('decode names a buffer it has no pattern for, and bytes that are not whole elements', () => {
    const spec = { kind: 'decode', msPerMiB: 0, buffers: { input: { type: 'float32', init: INITS[0]! } } } as const;
    assert.throws(
      () => decodeRegion({ buffer: 'other', offset: 0, bytes: new Uint8Array(4) }, spec),
      /no pattern for buffer 'other' \(it has patterns for input\)/,
    );
    assert.throws(
      () => decodeRegion({ buffer: 'input', offset: 2, bytes: new Uint8Array(4) }, spec),
      /buffer 'input' bytes 2\+4 are not whole float32 elements/,
    );
  });

  it("a built-in function sees the chunk's regions: checksum returns the sum, cost writes nothing", () => {
    const bytes = Uint8Array.of(1, 0, 0, 0, 2);
    const chunk: StageChunk = { chunk: 0, worker: 0, regions: [{ buffer: 'out', offset: 0, bytes }], targets: [] };
    assert.equal(builtIn({ kind: 'checksum' })(chunk), 3);
    assert.equal(builtIn({ kind: 'cost', msPerMiB: 1 })(chunk), undefined);
    assert.deepEqual(bytes, Uint8Array.of(1, 0, 0, 0, 2));
  });
});
