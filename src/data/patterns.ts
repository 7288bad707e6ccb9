import type { InitSpec } from '../model/buffers.js';
import type { ElementType } from '../vocabulary.js';

// Inputs get a seeded pattern: never zeros, which hide unwritten outputs and can run faster than real data.

/**
 * Fills `bytes` (a whole number of elements of `type`) with the pattern. With `firstElement`, the bytes are those a
 * fill from element 0 would have written from that element on: a loader decoding one chunk at a time writes what
 * the whole fill would have, so its output verifies against a run whose inputs were filled at once.
 */
export function fillPattern(bytes: Uint8Array, type: ElementType, init: InitSpec, firstElement = 0): void {
  const elements = elementView(bytes, type);
  if (init.kind === 'random') {
    fillRandom(bytes, type, init.seed, firstElement * (type === 'float64' ? 2 : 1));
    return;
  }
  const encode = encoder(type);
  if (init.kind === 'constant') {
    elements.fill(encode(init.value) as never);
    return;
  }
  for (let i = 0; i < elements.length; i++) elements[i] = encode(init.start + (firstElement + i) * init.step);
}

/**
 * The pattern of the `window`-th window of a buffer filled window by window (`elementsPerWindow` elements each):
 * window 0 is the buffer's own pattern, so buffers within one window fill exactly as before; later windows continue
 * a ramp where the last stopped and give the random generator a seed of their own.
 */
export function windowSeed(init: InitSpec, window: number, elementsPerWindow: number): InitSpec {
  if (window === 0) return init;
  switch (init.kind) {
    case 'random':
      return { kind: 'random', seed: (Math.imul(init.seed ^ 0x5bd1e995, 0x9e3779b1) + window * 0x6a09e667) >>> 0 };
    case 'ramp':
      return { kind: 'ramp', start: init.start + window * elementsPerWindow * init.step, step: init.step };
    case 'constant':
      return init;
  }
}

function fillRandom(bytes: Uint8Array, type: ElementType, seed: number, skip: number): void {
  // xorshift32: fast, seedable, and the same on every machine. Floats land in [1, 2) so that no value is zero,
  // denormal, infinite or NaN, whatever the kernel does with them. The step is written out in each loop, on a local
  // state: through a closure the loop ran at about 15 ns a word, which made a loader's decode the slowest stage.
  let x = xorshiftJump(seed >>> 0 || 0x9e3779b9, skip) | 0;
  switch (type) {
    case 'float32': {
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      for (let i = 0; i < words.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i] = (x >>> 9) | 0x3f800000;
      }
      return;
    }
    case 'float64': {
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      for (let i = 0; i < words.length; i += 2) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i] = x;
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i + 1] = (x >>> 12) | 0x3ff00000;
      }
      return;
    }
    case 'int32':
    case 'uint32': {
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      for (let i = 0; i < words.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i] = x;
      }
      return;
    }
    // 16-bit floats get either sign and a magnitude in [0.125, 0.25), all mantissa bits random: a GEMM's sums over
    // k of such products grow like √k, not k, so a bf16 or fp16 product of 4096-long rows stays near 2, far from
    // fp16's 65504 and from zero.
    case 'float16': {
      const halves = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
      for (let i = 0; i < halves.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        halves[i] = ((x >>> 16) & 0x8000) | 0x3000 | (x & 0x3ff);
      }
      return;
    }
    case 'bfloat16': {
      const halves = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
      for (let i = 0; i < halves.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        halves[i] = ((x >>> 16) & 0x8000) | 0x3e00 | (x & 0x7f);
      }
      return;
    }
    case 'uint8':
      for (let i = 0; i < bytes.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        bytes[i] = x & 0xff;
      }
  }
}

function xorshift32(v: number): number {
  v ^= v << 13;
  v ^= v >>> 17;
  v ^= v << 5;
  return v >>> 0;
}

/**
 * The xorshift32 state `steps` steps after `state`, in 33 × log2(steps) matrix-vector products rather than `steps`
 * steps: a step is linear over GF(2), so the state jumps by the step's 32×32 bit matrix (each column the step
 * applied to one bit) squared once per bit of `steps`.
 */
export function xorshiftJump(state: number, steps: number): number {
  const apply = (columns: readonly number[], v: number) => {
    let out = 0;
    for (let bit = 0; bit < 32; bit++) if ((v >>> bit) & 1) out ^= columns[bit] as number;
    return out >>> 0;
  };
  let columns = Array.from({ length: 32 }, (_, bit) => xorshift32((1 << bit) >>> 0));
  let x = state >>> 0;
  for (let rest = steps; rest > 0; rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) x = apply(columns, x);
    columns = columns.map((column) => apply(columns, column));
  }
  return x;
}

type ElementArray = Float32Array | Float64Array | Int32Array | Uint32Array | Uint8Array | Uint16Array;

export function elementView(bytes: Uint8Array, type: ElementType): ElementArray {
  const { buffer, byteOffset, byteLength } = bytes;
  switch (type) {
    case 'float32':
      return new Float32Array(buffer, byteOffset, byteLength / 4);
    case 'float64':
      return new Float64Array(buffer, byteOffset, byteLength / 8);
    case 'int32':
      return new Int32Array(buffer, byteOffset, byteLength / 4);
    case 'uint32':
      return new Uint32Array(buffer, byteOffset, byteLength / 4);
    case 'uint8':
      return new Uint8Array(buffer, byteOffset, byteLength);
    case 'float16':
    case 'bfloat16':
      return new Uint16Array(buffer, byteOffset, byteLength / 2);
  }
}

function encoder(type: ElementType): (value: number) => number {
  if (type === 'float16') return toHalfBits;
  return type === 'bfloat16' ? toBfloat16Bits : (value) => value;
}

// One four-byte word seen as both float32 and uint32, shared by the 16-bit conversions: a fresh pair of typed arrays
// per element made verifying 8 million bfloat16 logits take 13 s (docs/measurements/2026-11-26-verify-speed/).
const word = new ArrayBuffer(4);
const wordBits = new Uint32Array(word);
const wordFloat = new Float32Array(word);

/** The float32 bits of a number (rounded to float32 first). */
function float32Bits(value: number): number {
  wordFloat[0] = value;
  return wordBits[0] as number;
}

/** bfloat16 bits of a number: the top half of its float32 bits, rounded to nearest even (NaN kept a NaN). */
export function toBfloat16Bits(value: number): number {
  const bits = float32Bits(value);
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x7fffff) return (bits >>> 16) | 0x40;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

// 2^(e − 15) for each float16 exponent e: `**` per element made decoding a float16 output five times slower.
const HALF_SCALE = Float64Array.from({ length: 32 }, (_, e) => 2 ** (e - 15));

/** The number a float16's bits stand for. */
export function fromHalfBits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  return sign * (1 + mantissa / 1024) * (HALF_SCALE[exponent] as number);
}

/** The number a bfloat16's bits stand for. */
export function fromBfloat16Bits(bits: number): number {
  wordBits[0] = (bits & 0xffff) << 16;
  return wordFloat[0] as number;
}

/** IEEE 754 binary16 bits of a number, rounded to nearest even. */
export function toHalfBits(value: number): number {
  const bits = float32Bits(value);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    const half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    return sign | (rest > midpoint || (rest === midpoint && half & 1) ? half + 1 : half);
  }
  const half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  return sign | (rest > 0x1000 || (rest === 0x1000 && half & 1) ? half + 1 : half);
}

/** The value of element `index` as the user would read it (float16 and bfloat16 stay raw bits, shown in hex). */
export function describeElement(bytes: Uint8Array, type: ElementType, index: number): string {
  const value = elementView(bytes, type)[index];
  if (value === undefined) return 'out of range';
  return type === 'float16' || type === 'bfloat16' ? `0x${value.toString(16).padStart(4, '0')}` : String(value);
}
