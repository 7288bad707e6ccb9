import { closeSync, constants, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { UsageError } from '../errors.js';
import { describeFileError } from '../files/errno.js';
import { formatByteLimit } from '../files/limits.js';
import { checkRegularFile } from '../files/read.js';

// A trace streams (stream.ts): its bytes are read a chunk at a time, inflated as they come where the file starts with
// gzip's magic bytes, and never held whole, so its size is bounded by time rather than memory. The limits keep a
// hostile or mistaken file from taking the machine: the text streamed (after inflating) bounds the time, at about
// 10–25 MB/s on one core; the events kept bound the memory (docs/analyze.md states the budget per kept event).

export interface TraceLimits {
  /** The most bytes of JSON text streamed: the file's, or what a gzip file inflates to; also the file's own size. */
  readonly maxBytes: number;
  /** The most events kept (those of the kinds a format reads); every other event is dropped as it streams. */
  readonly maxEvents: number;
}

export const TRACE_LIMITS: TraceLimits = { maxBytes: 4096 * 1024 * 1024, maxEvents: 3_000_000 };

const HINT = 'Pass a PyTorch profiler trace (.json, .json.gz, .pt.trace.json.gz) or a `cuda-pipe run --trace` file.';

/** The error every reader and parser raises about a trace: one paragraph naming the file. */
export function traceError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot analyse trace ${file}: ${reason}.`, { hint: HINT });
}

function readError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot read trace ${file}: ${reason}.`, { hint: HINT });
}

/** An open trace: its text as a stream of bytes, and whether it was gzip. */
export interface TraceSource {
  readonly text: Readable;
  readonly gzip: boolean;
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
  if (!gzip) return { text: raw, gzip };
  // pipeline, not pipe: a read error destroys the gunzip stream with it, so the consumer sees it.
  return { text: pipeline(raw, createGunzip({ chunkSize: 256 * 1024 }), () => {}), gzip };
}

/** A read or gzip error that ended a trace's stream, in words. */
export function streamError(file: string, error: unknown): UsageError {
  if (error instanceof UsageError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === 'Z_BUF_ERROR') return traceError(file, 'its gzip data is truncated (the file ends before the compressed stream does)');
  if (typeof code === 'string' && code.startsWith('Z_')) return traceError(file, `its gzip data is corrupt (${error instanceof Error ? error.message : String(error)})`);
  return readError(file, describeFileError(error));
}

/** The message of text past `limits.maxBytes`. */
export function tooLong(file: string, gzip: boolean, maxBytes: number): UsageError {
  return gzip
    ? traceError(file, `it inflates to more than the ${formatByteLimit(maxBytes)} a trace may be`)
    : readError(file, `it is more than the ${formatByteLimit(maxBytes)} a trace may be`);
}
