import { closeSync, constants, openSync, readSync } from 'node:fs';
import { UsageError } from '../../../errors.js';
import { describeFileError } from '../../../files/errno.js';
import { checkRegularFile } from '../../../files/read.js';

// Told before anything is read through sql.js, which is loaded only for an export (./sqlite.ts).

/** The 16 bytes every SQLite 3 database file starts with (sqlite.org/fileformat.html, "The Database Header"). */
const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

export const SQLITE_HINT =
  'Pass an Nsight Systems export (nsys export --type sqlite report.nsys-rep), a PyTorch profiler trace (.json, .json.gz, .pt.trace.json.gz) or a `cuda-pipe run --trace` file.';

export interface ReadLimit {
  readonly maxBytes: number;
}

/**
 * True when `file` starts with SQLite's magic bytes, whatever its name. The file is checked as every trace is (a
 * regular file, within the size limit) before its first 16 bytes are read, so a FIFO or a device never blocks here.
 */
export function isSqliteFile(file: string, limit: ReadLimit): boolean {
  const limits = { what: 'trace', maxBytes: limit.maxBytes, hint: SQLITE_HINT };
  checkRegularFile(file, limits);
  const head = Buffer.alloc(MAGIC.length);
  let read = 0;
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new UsageError(`Cannot read trace ${file}: ${describeFileError(error)}.`, { hint: SQLITE_HINT });
  }
  return read === MAGIC.length && head.equals(MAGIC);
}
