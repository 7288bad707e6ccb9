import { resolve } from 'node:path';
import { type CudaPipeError, EnvironmentError, UsageError } from '../errors.js';
import { describeFileError } from '../files/errno.js';

// Why a document could not be written, in words that name the path and the errno, and whose the fault is: the
// disk's or the machine's (exit 3) or the user's (exit 2).

/**
 * Errors of the disk or the machine (full, quota, failing, read-only) are the environment's (3); the rest are the
 * user's (2).
 */
const ENVIRONMENT_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG']);

export function cannotWrite(target: string, error: unknown, path?: string, replacing = false): CudaPipeError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = path !== undefined && path !== resolve(target) ? ` (${path})` : '';
  const words =
    code === 'ETIMEDOUT'
      ? (error as Error).message
      : code === 'ENXIO'
        ? 'no such device, or no reader'
        : describeFileError(error);
  const message = `Cannot write ${target}${where}: ${words}${replacing ? '; the file there, if any, is as it was' : ''}.`;
  return code !== undefined && ENVIRONMENT_CODES.has(code)
    ? new EnvironmentError(message, {
        hint:
          code === 'ENOSPC' || code === 'EDQUOT'
            ? 'Free some space, or write somewhere else.'
            : 'Write somewhere else.',
      })
    : new UsageError(message);
}
