import { closeSync, constants, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { UsageError } from '../errors.js';
import { describeFileError } from '../files/errno.js';
import { formatByteLimit } from '../files/limits.js';
import { formatBytes } from '../format.js';
import { checkRegularFile } from '../files/read.js';
import { TRACE_HINT as HINT, traceError } from './errors.js';

// A trace streams (chrome/stream.ts): its bytes are read a chunk at a time, inflated as they come where the file starts
// with
// gzip's magic bytes, and never held whole, so its size is bounded by time rather than memory. The limits keep a
// hostile or mistaken file from taking the machine: the text streamed (after inflating) bounds the time, at about
// 10–25 MB/s on one core; the events kept bound the memory (docs/analyze.md states the budget per kept event); and a
// file that is mostly nothing is refused within its first MiBs: gzip inflating far more than any trace does (a bomb),
// or text in which no event ends (whitespace, one endless string). docs/reference/cli.md states them all.

export interface TraceLimits {
  /** The most bytes of JSON text streamed: the file's, or what a gzip file inflates to; also the file's own size. */
  readonly maxBytes: number;
  /** The most events kept (those of the kinds a format reads); every other event is dropped as it streams. */
  readonly maxEvents: number;
  /** The most ranges kept only to name the events inside them (a format's `context`), without their args. */
  readonly maxContext: number;
  /**
   * The most a gzip file may inflate, as text per compressed byte read, once past `inflationFloorBytes`: the
   * recorded PyTorch traces inflate 13.7 to 21.4 times (docs/measurements/2026-11-28-hostile/trace-inflation.tsv),
   * the synthetic 100 MB trace of docs/analyze.md 27 times, a bomb about 300 (events) to 1,000 (whitespace) times.
   */
  readonly maxInflation: number;
  readonly inflationFloorBytes: number;
  /** The most text streamed without an event (or a top-level key) ending: an event is a few hundred bytes. */
  readonly maxBytesWithoutEvent: number;
}

export const TRACE_LIMITS: TraceLimits = {
  maxBytes: 4096 * 1024 * 1024,
  maxEvents: 3_000_000,
  maxContext: 6_000_000,
  maxInflation: 100,
  inflationFloorBytes: 16 * 1024 * 1024,
  maxBytesWithoutEvent: 16 * 1024 * 1024,
};

function readError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot read trace ${file}: ${reason}.`, { hint: HINT });
}

/** An open trace: its text as a stream of bytes, and whether it was gzip. */
export interface TraceSource {
  readonly text: Readable;
  readonly gzip: boolean;
  /** The compressed bytes inflated so far (0 for a file that is not gzip). */
  compressedBytes(): number;
}

/**
 * Opens a regular file (a device, FIFO or folder is refused before a byte is read, as `files/read.ts` does) and
 * returns its text, gunzipped where its first two bytes are gzip's magic (whatever its name says). Read errors and
 * gzip errors reach the stream's consumer as they happen; `streamError` words them.
 */
export function openTrace(file: string, limits: TraceLimits): TraceSource {
  checkRegularFile(file, { what: 'trace', maxBytes: limits.maxBytes, hint: HINT });
  let fd: number;
  try {
    // O_NONBLOCK: if the path was swapped for a FIFO after the stat, the read returns at once instead of hanging.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw readError(file, describeFileError(error));
  }
  const magic = Buffer.alloc(2);
  try {
    if (!fstatSync(fd).isFile()) throw readError(file, 'it is no longer a regular file');
    readSync(fd, magic, 0, 2, 0);
  } catch (error) {
    closeSync(fd);
    throw error instanceof UsageError ? error : readError(file, describeFileError(error));
  }
  const raw = createReadStream('', { fd, start: 0, highWaterMark: 1024 * 1024 });
  const gzip = magic[0] === 0x1f && magic[1] === 0x8b;
  if (!gzip) return { text: raw, gzip, compressedBytes: () => 0 };
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  // pipeline, not pipe: a read error destroys the gunzip stream with it, so the consumer sees it.
  return { text: pipeline(raw, gunzip, () => {}), gzip, compressedBytes: () => gunzip.bytesWritten };
}

/** A read or gzip error that ended a trace's stream, in words. */
export function streamError(file: string, error: unknown): UsageError {
  if (error instanceof UsageError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === 'Z_BUF_ERROR')
    return traceError(file, 'its gzip data is truncated (the file ends before the compressed stream does)');
  if (typeof code === 'string' && code.startsWith('Z_'))
    return traceError(file, `its gzip data is corrupt (${error instanceof Error ? error.message : String(error)})`);
  return readError(file, describeFileError(error));
}

/**
 * Refuses a gzip file that inflates more than a trace does, once past the floor, or text in which no event ended for
 * `maxBytesWithoutEvent`: both are a few MiB of reading, where streaming them to `maxBytes` took minutes.
 */
export function checkProgress(
  file: string,
  limits: TraceLimits,
  read: { text: number; compressed: number; withoutEvent: number },
): void {
  const { maxInflation, inflationFloorBytes, maxBytesWithoutEvent } = limits;
  if (read.compressed > 0 && read.text > inflationFloorBytes && read.text > maxInflation * read.compressed) {
    throw traceError(
      file,
      `its gzip inflates more than ${maxInflation} times (${formatBytes(read.text)} of text from ${formatBytes(read.compressed)}), ` +
        `the most a trace may past its first ${formatByteLimit(inflationFloorBytes)} (traces inflate 10 to 30 times): a gzip bomb, or a file of repeated bytes`,
    );
  }
  if (read.withoutEvent > maxBytesWithoutEvent) {
    throw traceError(
      file,
      `${formatBytes(read.withoutEvent)} of its text went by without an event ending, more than the ${formatByteLimit(maxBytesWithoutEvent)} a trace may ` +
        '(whitespace, or one value larger than any event)',
    );
  }
}

/** The message of text past `limits.maxBytes`. */
export function tooLong(file: string, gzip: boolean, maxBytes: number): UsageError {
  return gzip
    ? traceError(file, `it inflates to more than the ${formatByteLimit(maxBytes)} a trace may be`)
    : readError(file, `it is more than the ${formatByteLimit(maxBytes)} a trace may be`);
}
