import type { ConfigBuffer } from '../model/buffers.js';
import type { ElementType } from '../vocabulary.js';
import type { OutputMismatch, ToleranceRule } from '../model/outputs.js';
import { describeElement, elementView, fromBfloat16Bits, fromHalfBits } from './patterns.js';

export type { OutputMismatch, ToleranceRule } from '../model/outputs.js';

// Outputs get one of two poison bytes before each verified mode. With a different poison per mode, an element that
// one mode never wrote cannot match the other mode's output.
export const POISON = { serial: 0xa5, overlapped: 0x5a } as const;

/**
 * Host buffers are read and written in windows of this many bytes: a JS typed array cannot span more than 4 GiB,
 * and a multiple of every element size keeps elements whole.
 */
export const HOST_WINDOW_BYTES = 2 ** 30;

/**
 * Byte-for-byte comparison of one output buffer. Fast path: one memcmp. Only on a difference do we walk the
 * elements to find the first one and count them.
 */
export function compareOutput(
  buffer: ConfigBuffer,
  expected: Uint8Array,
  actual: Uint8Array,
  candidatePoison: number,
): OutputMismatch | null {
  if (
    Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength).equals(
      Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength),
    )
  )
    return null;
  const width = buffer.elementBytes;
  const lanes = width === 8 ? 4 : width;
  const a = laneView(expected, lanes);
  const b = laneView(actual, lanes);
  const perElement = width / lanes;
  let first = -1;
  let differing = 0;
  for (let lane = 0; lane < a.length; lane += perElement) {
    let same = true;
    for (let k = 0; k < perElement; k++) if (a[lane + k] !== b[lane + k]) same = false;
    if (!same) {
      if (first < 0) first = lane / perElement;
      differing += 1;
    }
  }
  const poisonElement = new Uint8Array(width).fill(candidatePoison);
  const start = first * width;
  const unwritten = Buffer.from(actual.buffer, actual.byteOffset + start, width).equals(poisonElement);
  return {
    buffer: buffer.name,
    index: first,
    expected: describeElement(expected, buffer.type, first),
    actual: describeElement(actual, buffer.type, first),
    differing,
    unwritten,
  };
}

function laneView(bytes: Uint8Array, lanes: number): Uint8Array | Uint16Array | Uint32Array {
  if (lanes === 4) return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  if (lanes === 2) return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  return bytes;
}

/** The largest differences a tolerance comparison saw, over every float output it compared. */
export interface LargestError {
  readonly absolute: number;
  /** |a − b| / |b| where b is not zero. */
  readonly relative: number;
}

const FLOAT_TYPES: ReadonlySet<ElementType> = new Set(['float32', 'float64', 'float16', 'bfloat16']);

/** The number an element's stored value stands for: 16-bit floats are kept as their bits. */
function decoder(type: ElementType): (stored: number) => number {
  if (type === 'float16') return fromHalfBits;
  if (type === 'bfloat16') return fromBfloat16Bits;
  return (stored) => stored;
}

/**
 * One output buffer compared as numbers: an element matches when |a − b| ≤ absolute + relative × |b| (b: serial's),
 * or when both are the same infinity or both NaN (the same computation's NaN is no overlap bug). Integer buffers stay
 * exact: a tolerance says how far a float result may move, and an integer result has no rounding to allow for.
 * Returns the first mismatch (as compareOutput does) and the largest differences over the finite elements.
 */
export function compareWithin(
  buffer: ConfigBuffer,
  expected: Uint8Array,
  actual: Uint8Array,
  candidatePoison: number,
  tolerance: ToleranceRule,
): { mismatch: OutputMismatch | null; largest: LargestError } {
  if (!FLOAT_TYPES.has(buffer.type))
    return {
      mismatch: compareOutput(buffer, expected, actual, candidatePoison),
      largest: { absolute: 0, relative: 0 },
    };
  // Element by element, decoding as it goes: a window is up to 1 GiB, too large to copy into an array of numbers.
  const decode = decoder(buffer.type);
  const a = elementView(actual, buffer.type);
  const b = elementView(expected, buffer.type);
  let first = -1;
  let differing = 0;
  let absolute = 0;
  let relative = 0;
  for (let i = 0; i < b.length; i++) {
    const x = decode(a[i] as number);
    const y = decode(b[i] as number);
    let within: boolean;
    if (Number.isFinite(x) && Number.isFinite(y)) {
      const error = Math.abs(x - y);
      absolute = Math.max(absolute, error);
      if (y !== 0) relative = Math.max(relative, error / Math.abs(y));
      within = error <= tolerance.absolute + tolerance.relative * Math.abs(y);
    } else {
      within = Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y));
    }
    if (!within) {
      if (first < 0) first = i;
      differing += 1;
    }
  }
  if (first < 0) return { mismatch: null, largest: { absolute, relative } };
  const width = buffer.elementBytes;
  const poisonElement = new Uint8Array(width).fill(candidatePoison);
  const unwritten = Buffer.from(actual.buffer, actual.byteOffset + first * width, width).equals(poisonElement);
  const show = (bytes: Uint8Array) => {
    const raw = describeElement(bytes, buffer.type, first);
    return buffer.type === 'float16' || buffer.type === 'bfloat16'
      ? `${decode(elementView(bytes, buffer.type)[first] as number)} (${raw})`
      : raw;
  };
  return {
    mismatch: {
      buffer: buffer.name,
      index: first,
      expected: show(expected),
      actual: show(actual),
      differing,
      unwritten,
    },
    largest: { absolute, relative },
  };
}
