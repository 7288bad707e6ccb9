import { lstatSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { describeFileError } from '../files/errno.js';
import { cannotWrite } from './write-error.js';

// What a target names once its links are followed: our own descriptor, a device or FIFO written directly, or a file
// replaced whole; anything else is refused here, before a command measures anything.

/** Where a target's bytes go, once its links are followed. */
export type Destination =
  | { readonly kind: 'fd'; readonly fd: number }
  | { readonly kind: 'direct'; readonly path: string; readonly fifo: boolean; readonly id: string }
  | { readonly kind: 'replace'; readonly path: string; readonly existing: Stats | null };

/** As many links as Linux follows (MAXSYMLINKS) before it says ELOOP. */
const MAX_LINKS = 40;

export const STDOUT_FD = 1;

/** Follows `target`'s links to what will be written, refusing what cannot be written safely. */
export function destinationOf(target: string): Destination {
  if (target === '-') return { kind: 'fd', fd: STDOUT_FD };
  if (target === '') throw new UsageError('An output file name is empty.', { hint: 'Name a file, or - for stdout.' });
  if (target.includes('\0'))
    throw new UsageError(`Cannot write ${JSON.stringify(target)}: a file name cannot hold a NUL byte.`);
  let path = resolve(target);
  for (let hops = 0; ; hops += 1) {
    // The folder's own links resolved first, so that /dev/fd/1 reads as /proc/<pid>/fd/1 and a loop among folders is
    // named.
    path = join(realFolder(target, dirname(path)), basename(path));
    const fd = ownDescriptor(path);
    if (fd !== null) return { kind: 'fd', fd };
    let stats: Stats;
    try {
      stats = lstatSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw cannotWrite(target, error, path);
      // A new name: its folder must exist (a missing one and a file in its place get their own words).
      checkFolder(target, dirname(path));
      if (code === 'ENOTDIR') throw cannotWrite(target, error, path);
      return { kind: 'replace', path, existing: null };
    }
    if (stats.isSymbolicLink()) {
      if (hops >= MAX_LINKS)
        throw new UsageError(
          `Cannot write ${target}: its symbolic links form a loop (or a chain longer than ${MAX_LINKS}).`,
        );
      path = resolve(dirname(path), readLink(target, path));
      continue;
    }
    if (stats.isFile()) return { kind: 'replace', path, existing: stats };
    if (stats.isCharacterDevice() || stats.isFIFO())
      return { kind: 'direct', path, fifo: stats.isFIFO(), id: `${stats.dev}:${stats.ino}` };
    const what = stats.isDirectory()
      ? 'it is a folder; name a file inside it'
      : stats.isBlockDevice()
        ? 'it is a block device, which a report would overwrite'
        : stats.isSocket()
          ? 'it is a socket'
          : 'it is not a file, a character device or a FIFO';
    throw new UsageError(`Cannot write ${target}${path === resolve(target) ? '' : ` (${path})`}: ${what}.`);
  }
}

/** /proc/self/fd/N (where /dev/stdout, /dev/stderr and /dev/fd/N lead): our own descriptor N, written as it is. */
function ownDescriptor(path: string): number | null {
  const match = /^\/proc\/(?:self|thread-self|(\d+))(?:\/task\/\d+)?\/fd\/(\d+)$/.exec(path);
  if (!match || (match[1] !== undefined && Number(match[1]) !== process.pid)) return null;
  return Number(match[2]);
}

function realFolder(target: string, folder: string): string {
  try {
    return realpathSync(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') checkFolder(target, folder);
    throw cannotWrite(target, error, folder);
  }
}

function readLink(target: string, path: string): string {
  try {
    return readlinkSync(path);
  } catch (error) {
    throw cannotWrite(target, error, path);
  }
}

/** Two documents meet here when they would write the same bytes over each other. */
export function destinationIdentity(to: Destination): string {
  if (to.kind === 'fd') return `fd:${to.fd}`;
  if (to.kind === 'direct') return `node:${to.id}`;
  return to.existing ? `node:${to.existing.dev}:${to.existing.ino}` : `path:${to.path}`;
}

function checkFolder(target: string, folder: string): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new UsageError(
      `Cannot write ${target}: ${missing ? `the folder ${folder} does not exist` : `${folder}: ${describeFileError(error)}`}.`,
      {
        hint: missing ? `Create it first (mkdir -p ${folder}), or write somewhere else.` : undefined,
      },
    );
  }
  if (!isFolder) throw new UsageError(`Cannot write ${target}: ${folder} is not a folder.`);
}
