import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { formatByteLimit } from './limits.js';
import { describeFileError } from './errno.js';

export interface ReadLimits {
  /** What the file is, for messages: "config", "kernel source". */
  readonly what: string;
  readonly maxBytes: number;
  readonly hint?: string;
}

/**
 * Reads a regular file as UTF-8, refusing anything else before reading a byte: a device such as /dev/zero never
 * ends, a FIFO blocks until a writer appears, and a folder is not a file. The size is checked against `maxBytes`
 * both from stat and while reading, since a file can grow between the two.
 */
export function readRegularFile(path: string, limits: ReadLimits): string {
  return readRegularBytes(path, limits).toString('utf8');
}

/** readRegularFile's bytes, undecoded: for binary files such as a cached CUBIN. */
export function readRegularBytes(path: string, limits: ReadLimits): Buffer {
  const fail = failure(path, limits);
  checkRegularFile(path, limits);
  let fd: number;
  try {
    // O_NONBLOCK: if the path was swapped for a FIFO after the stat, open and read return at once instead of hanging.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw fail(describeFileError(error));
  }
  try {
    const swapped = notRegular(fstatSync(fd));
    if (swapped) throw fail(swapped);
    return readUpTo(fd, limits.maxBytes, () =>
      fail(`it is more than the ${formatByteLimit(limits.maxBytes)} a ${limits.what} may be`),
    );
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw fail(describeFileError(error));
  } finally {
    closeSync(fd);
  }
}

/**
 * Why `path` is not a regular file ("no such file", "is a named pipe (FIFO), not a regular file"), or null when it is
 * one; links are followed. For files handed to something that would block on a FIFO or read a device for ever, such
 * as dlopen or import(), which cannot be given O_NONBLOCK.
 */
export function notRegularFile(path: string): string | null {
  try {
    return notRegular(statSync(path));
  } catch (error) {
    return describeFileError(error);
  }
}

const failure =
  (path: string, limits: ReadLimits) =>
  (reason: string): UsageError =>
    new UsageError(
      `Cannot read ${limits.what} ${path}: ${reason}.`,
      limits.hint === undefined ? {} : { hint: limits.hint },
    );

/**
 * What readRegularFile checks before it reads, for a file that something else reads (import() of a module): a
 * regular file, within the size limit. A UsageError naming the file otherwise.
 */
export function checkRegularFile(path: string, limits: ReadLimits): void {
  const fail = failure(path, limits);
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw fail(describeFileError(error));
  }
  const kind = notRegular(stats);
  if (kind) throw fail(kind);
  if (stats.size > limits.maxBytes)
    throw fail(`it is ${stats.size} bytes, more than the ${formatByteLimit(limits.maxBytes)} a ${limits.what} may be`);
}

function notRegular(stats: Stats): string | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return 'is a folder, not a file';
  if (stats.isFIFO()) return 'is a named pipe (FIFO), not a regular file';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'is a device, not a regular file';
  if (stats.isSocket()) return 'is a socket, not a regular file';
  return 'is not a regular file';
}

function readUpTo(fd: number, maxBytes: number, tooLarge: () => Error): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const read = readSync(fd, buffer, 0, buffer.length, null);
    if (read === 0) break;
    total += read;
    if (total > maxBytes) throw tooLarge();
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks, total);
}
