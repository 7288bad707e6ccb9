import { HOST_WINDOW_BYTES } from '../../../data/compare.js';
import { fillPattern, windowSeed } from '../../../data/patterns.js';
import { ELEMENT_BYTES } from '../../../vocabulary.js';
import type { RegionView, StageChunk, StageFunction, StageFunctionSpec } from './types.js';

const MiB = 2 ** 20;

/**
 * The host stage's checksum: the sum of a chunk's aligned 32-bit words, wrapping, plus any bytes before the first
 * and after the last (a chunk of 1- or 2-byte elements may start off a word boundary). The JS thread's host stage
 * (thread: js) runs this one too.
 */
export function checksum(views: readonly Uint8Array[]): number {
  let sum = 0;
  for (const view of views) {
    const head = Math.min(view.byteLength, (4 - (view.byteOffset % 4)) % 4);
    // A view shorter than its unaligned head has no aligned word (and no aligned place to start a word view at).
    const words =
      head < view.byteLength
        ? new Uint32Array(view.buffer, view.byteOffset + head, (view.byteLength - head) >>> 2)
        : new Uint32Array(0);
    for (let i = 0; i < head; i++) sum = (sum + (view[i] as number)) >>> 0;
    for (let i = 0; i < words.length; i++) sum = (sum + (words[i] as number)) >>> 0;
    for (let i = head + words.length * 4; i < view.byteLength; i++) sum = (sum + (view[i] as number)) >>> 0;
  }
  return sum;
}

/** Copies the bytes of `from`, in order, into `to`; both must hold the same number of bytes. */
export function copyRegions(from: readonly Uint8Array[], to: readonly Uint8Array[]): void {
  const total = (views: readonly Uint8Array[]) => views.reduce((sum, view) => sum + view.byteLength, 0);
  if (total(from) !== total(to))
    throw new Error(`copy: the chunk has ${total(from)} bytes but its targets ${total(to)}`);
  let target = 0;
  let at = 0;
  for (const source of from) {
    for (let done = 0; done < source.byteLength; ) {
      const into = to[target] as Uint8Array;
      const n = Math.min(source.byteLength - done, into.byteLength - at);
      into.set(source.subarray(done, done + n), at);
      done += n;
      at += n;
      if (at === into.byteLength) {
        target += 1;
        at = 0;
      }
    }
  }
}

/**
 * Keeps this thread busy for `ms` milliseconds: a model of CPU work that a sleep would not be, since a sleeping
 * worker leaves its core to the others and the pool would scale past the machine's cores.
 */
export function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * Fills a region with what the run's own fill writes there: the buffer is filled window by window (HOST_WINDOW_BYTES
 * each, each window's pattern seeded on its own), so a region is cut at window boundaries and each piece filled
 * from its first element's place in its window.
 */
export function decodeRegion(region: RegionView, spec: Extract<StageFunctionSpec, { kind: 'decode' }>): void {
  const source = spec.buffers[region.buffer];
  if (!source)
    throw new Error(
      `decode: no pattern for buffer '${region.buffer}' (it has patterns for ${Object.keys(spec.buffers).join(', ') || 'none'})`,
    );
  const elementBytes = ELEMENT_BYTES[source.type];
  if (region.offset % elementBytes !== 0 || region.bytes.byteLength % elementBytes !== 0) {
    throw new Error(
      `decode: buffer '${region.buffer}' bytes ${region.offset}+${region.bytes.byteLength} are not whole ${source.type} elements`,
    );
  }
  if (source.pattern) {
    if (region.offset + region.bytes.byteLength > source.pattern.byteLength) {
      throw new Error(
        `decode: buffer '${region.buffer}' bytes ${region.offset}+${region.bytes.byteLength} run past its ${source.pattern.byteLength} bytes`,
      );
    }
    region.bytes.set(new Uint8Array(source.pattern, region.offset, region.bytes.byteLength));
    return;
  }
  for (let at = 0; at < region.bytes.byteLength; ) {
    const place = region.offset + at;
    const window = Math.floor(place / HOST_WINDOW_BYTES);
    const end = Math.min(region.bytes.byteLength, (window + 1) * HOST_WINDOW_BYTES - region.offset);
    const init = windowSeed(source.init, window, HOST_WINDOW_BYTES / elementBytes);
    fillPattern(region.bytes.subarray(at, end), source.type, init, (place - window * HOST_WINDOW_BYTES) / elementBytes);
    at = end;
  }
}

/**
 * Inputs up to this many bytes in all get their pattern computed once for decode; larger ones are generated chunk by
 * chunk.
 */
export const DECODE_PATTERN_LIMIT = 2 ** 30;

/**
 * A decode spec whose buffers carry their whole pattern, computed once here in shared memory, so that a fill is a
 * copy at memory speed (the seeded generator runs at about 1 GB/s in JavaScript, a step depending on the last) and
 * `msPerMiB` alone is the decode's cost. Inputs over DECODE_PATTERN_LIMIT in all stay generated chunk by chunk.
 */
export function precomputeDecode(
  spec: Extract<StageFunctionSpec, { kind: 'decode' }>,
  bytes: Readonly<Record<string, number>>,
): Extract<StageFunctionSpec, { kind: 'decode' }> {
  const total = Object.keys(spec.buffers).reduce((sum, name) => sum + (bytes[name] ?? 0), 0);
  if (total > DECODE_PATTERN_LIMIT) return spec;
  const buffers = Object.fromEntries(
    Object.entries(spec.buffers).map(([name, source]) => {
      const pattern = new SharedArrayBuffer(bytes[name] ?? 0);
      decodeRegion({ buffer: name, offset: 0, bytes: new Uint8Array(pattern) }, spec);
      return [name, { ...source, pattern }];
    }),
  );
  return { ...spec, buffers };
}

const chunkMiB = (chunk: StageChunk) => chunk.regions.reduce((sum, region) => sum + region.bytes.byteLength, 0) / MiB;

/** The function a built-in spec names; a module spec is loaded by the worker itself. */
export function builtIn(spec: Exclude<StageFunctionSpec, { kind: 'module' }>): StageFunction {
  switch (spec.kind) {
    case 'checksum':
      return (chunk) => checksum(chunk.regions.map((region) => region.bytes));
    case 'copy':
      return (chunk) =>
        copyRegions(
          chunk.regions.map((region) => region.bytes),
          chunk.targets.map((region) => region.bytes),
        );
    case 'cost':
      return (chunk) => spin(spec.msPerMiB * chunkMiB(chunk));
    case 'decode':
      return (chunk) => {
        // The cost first, as a decoder spends it before it has the bytes to write.
        spin(spec.msPerMiB * chunkMiB(chunk));
        for (const region of chunk.regions) decodeRegion(region, spec);
      };
  }
}
