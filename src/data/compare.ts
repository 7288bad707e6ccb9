import type { ConfigBuffer } from '../config/types.js';
import { describeElement } from './patterns.js';

// Outputs get one of two poison bytes before each verified mode. With a different poison per mode, an element that
// one mode never wrote cannot match the other mode's output.
export const POISON = { serial: 0xa5, overlapped: 0x5a } as const;

/**
 * Host buffers are read and written in windows of this many bytes: a JS typed array cannot span more than 4 GiB,
 * and a multiple of every element size keeps elements whole.
 */
export const HOST_WINDOW_BYTES = 2 ** 30;

export interface OutputMismatch {
  readonly buffer: string;
  readonly index: number;
  readonly expected: string;
  readonly actual: string;
  readonly differing: number;
  /** The candidate's element still holds its poison: the candidate mode never wrote it. */
  readonly unwritten: boolean;
}

/**
 * Byte-for-byte comparison of one output buffer. Fast path: one memcmp. Only on a difference do we walk the
 * elements to find the first one and count them.
 */
export function compareOutput(buffer: ConfigBuffer, expected: Uint8Array, actual: Uint8Array, candidatePoison: number): OutputMismatch | null {
  if (Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength).equals(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength))) return null;
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
