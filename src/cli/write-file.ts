import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { runIdentity } from '../api/identity.js';
import { type CudaPipeError, EnvironmentError, Interrupted, UsageError } from '../errors.js';
import { describeFileError } from '../files/errno.js';
import { processInterrupts } from './interrupt.js';
import { cliIo, type OutStream } from './io.js';

// Every document a command writes goes through here, so that no flag can destroy a file or report a write that did
// not happen. What a careful Unix tool does with each kind of target:
// - a regular file, or a new name: written whole under a temporary name in the same folder, flushed, and renamed
//   over it, so a crash, Ctrl-C or a full disk leaves the old file or the new one, never half of either;
// - a symbolic link: followed, and its final target replaced as above (the link stays a link); a loop is an error;
// - a character device (/dev/null, a terminal) or a FIFO: written to directly, as `> target` would;
// - `-`, /dev/stdout, /dev/fd/1: our own stdout (at most one document there); /dev/stderr and /dev/fd/N: that
//   descriptor, written directly, never renamed over;
// - anything else (a folder, a block device, a socket): refused before anything runs.
// Every write is checked in full, and a failure names the path and the errno in words. Bytes go out a chunk at a
// time with a turn of the event loop between chunks, so that Ctrl-C or SIGTERM mid-write is seen: the write stops,
// its temporary file is removed, and the command ends with 130 (interrupt.ts), the target as it was.

/** Where a target's bytes go, once its links are followed. */
export type Destination =
  | { readonly kind: 'fd'; readonly fd: number }
  | { readonly kind: 'direct'; readonly path: string; readonly fifo: boolean; readonly id: string }
  | { readonly kind: 'replace'; readonly path: string; readonly existing: Stats | null };

/** As many links as Linux follows (MAXSYMLINKS) before it says ELOOP. */
const MAX_LINKS = 40;
/** How long a FIFO may go without a reader before we give up, rather than hang. */
const FIFO_OPEN_WAIT_MS = 2_000;
/** How long a reader may leave a full pipe or terminal unread before we give up. */
const STALLED_WRITE_MS = 30_000;
/** Linux's NAME_MAX: a temporary name must fit in a folder entry too. */
const NAME_MAX = 255;
/** Bytes written between two looks at the signals: a few ms of disk, so that a 180 MB document stops within them. */
const WRITE_CHUNK = 1 << 20;

const STDOUT_FD = 1;

/**
 * Writes a result or report to `target`, or to stdout for `-`, as the comment at the top of this file says. A
 * missing folder is the user's to create: we say so rather than create it.
 */
export function writeOutput(target: string, text: string): Promise<void> {
  // A target that cannot be written is refused here and now, before anything waits.
  const to = destinationOf(target);
  return processInterrupts().during((signal) => writeTo(target, to, text, signal, []));
}

/** A document a command can write, by the flag that asks for it (`--json <file|->`); `target` unset: not asked. */
export interface Document {
  readonly flag: string;
  readonly target: string | undefined;
  readonly render: () => string;
}

/**
 * The one meaning of `--json`, `--md`, `--svg`… in every command: each asked-for document goes to its file, or to
 * stdout for `-` (one at most), and no two to the same file: both checked before anything is written. Returns where
 * the command's terminal view (its table) goes: stdout, or stderr when stdout carries a document, so that
 * `--json - | jq` reads JSON alone.
 */
export async function writeDocuments(documents: readonly Document[]): Promise<OutStream> {
  const planned = planDocuments(documents);
  await processInterrupts().during(async (signal) => {
    const written: string[] = [];
    for (const d of planned) {
      await writeTo(d.target, d.to, d.render(), signal, written);
      written.push(d.target);
    }
  });
  return planned.some((d) => d.to.kind === 'fd' && d.to.fd === STDOUT_FD) ? cliIo().stderr : cliIo().stdout;
}

/** What writeDocuments checks before writing anything, for commands that measure first: a clash fails before the run. */
export function checkDocuments(documents: ReadonlyArray<Pick<Document, 'flag' | 'target'>>): void {
  planDocuments(documents);
}

function planDocuments<D extends Pick<Document, 'flag' | 'target'>>(documents: readonly D[]): Array<D & { target: string; to: Destination }> {
  const asked = documents.flatMap((d) => (d.target === undefined ? [] : [{ ...d, target: d.target, to: destinationOf(d.target) }]));
  const toStdout = asked.filter((d) => d.to.kind === 'fd' && d.to.fd === STDOUT_FD);
  if (toStdout.length > 1) {
    throw new UsageError(`Only one document can go to stdout (-); ${toStdout.map((d) => `--${d.flag}`).join(' and ')} ask to.`, {
      hint: 'Give the others a file name.',
    });
  }
  const seen = new Map<string, string>();
  for (const d of asked) {
    const key = identity(d.to);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new UsageError(`--${first} and --${d.flag} both name ${d.target}: the second document would replace the first.`, {
        hint: 'Give each document its own file.',
      });
    }
    seen.set(key, d.flag);
  }
  return asked;
}

/**
 * Checks that `target` could be written, for flags such as --json: a run that measures for minutes should fail on a
 * mistyped folder before it starts, not after. Returns the target with its placeholders expanded (`expandTarget`).
 */
export function checkOutputTarget(target: string): string {
  if (target === '-') return target;
  const expanded = expandTarget(target, runIdentity(process.env, hostname()));
  destinationOf(expanded);
  return expanded;
}

/**
 * Each rank of `mpirun` or `srun` gets the same command line, so a file name must differ by rank: `%r` is the
 * launcher's rank (0 without a launcher), `%h` the host name, `%%` a literal %. Any other `%` is a mistake we name,
 * rather than a file called `%x.json` that every rank overwrites.
 */
export function expandTarget(target: string, identity: { readonly rank: number | null; readonly hostname: string }): string {
  return target.replace(/%(.?)/g, (all, key: string) => {
    if (key === 'r') return String(identity.rank ?? 0);
    if (key === 'h') return identity.hostname;
    if (key === '%') return '%';
    throw new UsageError(`Cannot write ${target}: "${all}" is no placeholder${key ? '' : ' (a % ends the name)'}.`, {
      hint: 'In a file name %r is the rank, %h the host name and %% a literal %.',
    });
  });
}

/** Follows `target`'s links to what will be written, refusing what cannot be written safely. */
export function destinationOf(target: string): Destination {
  if (target === '-') return { kind: 'fd', fd: STDOUT_FD };
  if (target === '') throw new UsageError('An output file name is empty.', { hint: 'Name a file, or - for stdout.' });
  if (target.includes('\0')) throw new UsageError(`Cannot write ${JSON.stringify(target)}: a file name cannot hold a NUL byte.`);
  let path = resolve(target);
  for (let hops = 0; ; hops += 1) {
    // The folder's own links resolved first, so that /dev/fd/1 reads as /proc/<pid>/fd/1 and a loop among folders is named.
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
      if (hops >= MAX_LINKS) throw new UsageError(`Cannot write ${target}: its symbolic links form a loop (or a chain longer than ${MAX_LINKS}).`);
      path = resolve(dirname(path), readLink(target, path));
      continue;
    }
    if (stats.isFile()) return { kind: 'replace', path, existing: stats };
    if (stats.isCharacterDevice() || stats.isFIFO()) return { kind: 'direct', path, fifo: stats.isFIFO(), id: `${stats.dev}:${stats.ino}` };
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
function identity(to: Destination): string {
  if (to.kind === 'fd') return `fd:${to.fd}`;
  if (to.kind === 'direct') return `node:${to.id}`;
  return to.existing ? `node:${to.existing.dev}:${to.existing.ino}` : `path:${to.path}`;
}

/** Where a write stands when a signal stops it, for the Interrupted error that says so. */
interface Progress {
  readonly signal: AbortSignal;
  readonly target: string;
  /** What became of the target: "the file there, if any, is as it was", "the reader got part of it". */
  readonly left: string;
  /** Targets written in full before this one. */
  readonly written: readonly string[];
}

async function writeTo(target: string, to: Destination, text: string, signal: AbortSignal, written: readonly string[]): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  const progress = (left: string): Progress => ({ signal, target: target === '-' ? 'stdout' : target, left, written });
  stopIfInterrupted(progress('nothing was written to it'));
  const io = cliIo();
  // A command whose stdout is not the process's (a test collecting its text) gets the document there too.
  if (to.kind === 'fd' && to.fd === STDOUT_FD && io.stdout !== process.stdout) io.stdout.write(text);
  else if (to.kind === 'fd') await writeDescriptor(target, to.fd, bytes, progress('the reader got part of it'));
  else if (to.kind === 'direct') await writeDirect(target, to, bytes, progress('the reader got part of it'));
  else await replaceFile(target, to, bytes, progress('its temporary file was removed and the file there, if any, is as it was'));
}

function stopIfInterrupted(progress: Progress): void {
  if (!progress.signal.aborted) return;
  const before = progress.written.length ? ` (${progress.written.join(', ')} had been written in full)` : '';
  throw new Interrupted(`Interrupted (${String(progress.signal.reason)}) while writing ${progress.target}: ${progress.left}${before}.`);
}

async function writeDescriptor(target: string, fd: number, bytes: Buffer, progress: Progress): Promise<void> {
  try {
    await writeAll(fd, bytes, progress);
  } catch (error) {
    if (error instanceof Interrupted) throw error;
    // `| head` closing stdout is the reader's choice, not a failure of ours (see broken-pipe.ts).
    if (fd === STDOUT_FD && (error as NodeJS.ErrnoException).code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw cannotWrite(target === '-' ? 'stdout' : target, error);
  }
}

/** A device or a FIFO: opened without creating or truncating anything, and without blocking for ever. */
async function writeDirect(target: string, to: Extract<Destination, { kind: 'direct' }>, bytes: Buffer, progress: Progress): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
  let fd: number;
  const deadline = Date.now() + FIFO_OPEN_WAIT_MS;
  for (;;) {
    try {
      fd = openSync(to.path, flags);
      break;
    } catch (error) {
      // A FIFO with no reader yet: one may be on its way (`cat fifo & cuda-pipe … --json fifo`), so wait a little.
      if (to.fifo && (error as NodeJS.ErrnoException).code === 'ENXIO') {
        if (Date.now() < deadline) {
          await sleep(50);
          stopIfInterrupted({ ...progress, left: 'nothing was written to it' });
          continue;
        }
        throw new UsageError(`Cannot write ${target}: no process opened the named pipe for reading within ${FIFO_OPEN_WAIT_MS / 1000} s.`, {
          hint: 'Start its reader first, or write to a file.',
        });
      }
      throw cannotWrite(target, error, to.path);
    }
  }
  try {
    await writeAll(fd, bytes, progress);
    closeSync(fd);
  } catch (error) {
    closeQuietly(fd);
    if (error instanceof Interrupted) throw error;
    throw cannotWrite(target, error, to.path);
  }
}

/**
 * A regular file or a new name: a temporary file beside it, written in full, with the old file's owner and mode,
 * flushed to the disk and renamed over the target, so the target is the old file or the new one at every moment.
 */
async function replaceFile(target: string, to: Extract<Destination, { kind: 'replace' }>, bytes: Buffer, progress: Progress): Promise<void> {
  const folder = dirname(to.path);
  const temporary = join(folder, temporaryName(basename(to.path)));
  let fd: number | null = null;
  // A second signal leaves at once, without unwinding to the catch below: the temporary file goes first.
  const forget = processInterrupts().onExit(() => removeQuietly(temporary));
  try {
    fd = openSync(temporary, 'wx', to.existing ? to.existing.mode & 0o7777 : 0o666);
    if (to.existing) keepOwnerAndMode(fd, to.existing);
    await writeAll(fd, bytes, progress);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    // The last moment a signal can keep the old file: after the rename the new one is whole and in place.
    stopIfInterrupted(progress);
    renameSync(temporary, to.path);
  } catch (error) {
    if (fd !== null) closeQuietly(fd);
    removeQuietly(temporary);
    if (error instanceof Interrupted) throw error;
    throw cannotWrite(target, error, to.path, true);
  } finally {
    forget();
  }
  syncFolder(folder);
}

/** `.name.<pid>.<random>.tmp`, shortened so that it fits in a folder entry whatever the target's name. */
function temporaryName(name: string): string {
  const suffix = `.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  const room = NAME_MAX - suffix.length - 1;
  let head = name;
  while (Buffer.byteLength(head) > room) head = head.slice(0, -1);
  return `.${head}${suffix}`;
}

/** As root, the new file keeps the old one's owner; as anyone, its permissions (umask does not apply to fchmod). */
function keepOwnerAndMode(fd: number, old: Stats): void {
  try {
    fchownSync(fd, old.uid, old.gid);
  } catch {
    // Only root may give a file away; anyone else's new file is theirs, as with any editor that saves by renaming.
  }
  fchmodSync(fd, old.mode & 0o7777);
}

/**
 * Writes every byte, or throws: a short write (a full disk, a signal) is continued until the system says why it
 * cannot, and a descriptor that would block (a full pipe, a terminal on hold) is waited on, for a bounded time.
 */
async function writeAll(fd: number, bytes: Buffer, progress: Progress): Promise<void> {
  let offset = 0;
  let stalledSince = Date.now();
  while (offset < bytes.length) {
    stopIfInterrupted(progress);
    let written: number;
    try {
      written = writeSync(fd, bytes, offset, Math.min(WRITE_CHUNK, bytes.length - offset));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      written = 0;
    }
    if (written > 0) {
      offset += written;
      stalledSince = Date.now();
      // A turn of the event loop, where a signal's handler runs: synchronous writes would hold it off to the end.
      if (offset < bytes.length) await new Promise((next) => setImmediate(next));
      continue;
    }
    if (Date.now() - stalledSince > STALLED_WRITE_MS) {
      throw Object.assign(new Error(`nothing read it for ${STALLED_WRITE_MS / 1000} s`), { code: 'ETIMEDOUT' });
    }
    await sleep(10);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Errors of the disk or the machine (full, quota, failing, read-only) are the environment's (3); the rest are the user's (2). */
const ENVIRONMENT_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG']);

function cannotWrite(target: string, error: unknown, path?: string, replacing = false): CudaPipeError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = path !== undefined && path !== resolve(target) ? ` (${path})` : '';
  const words = code === 'ETIMEDOUT' ? (error as Error).message : code === 'ENXIO' ? 'no such device, or no reader' : describeFileError(error);
  const message = `Cannot write ${target}${where}: ${words}${replacing ? '; the file there, if any, is as it was' : ''}.`;
  return code !== undefined && ENVIRONMENT_CODES.has(code)
    ? new EnvironmentError(message, { hint: code === 'ENOSPC' || code === 'EDQUOT' ? 'Free some space, or write somewhere else.' : 'Write somewhere else.' })
    : new UsageError(message);
}

function checkFolder(target: string, folder: string): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new UsageError(`Cannot write ${target}: ${missing ? `the folder ${folder} does not exist` : `${folder}: ${describeFileError(error)}`}.`, {
      hint: missing ? `Create it first (mkdir -p ${folder}), or write somewhere else.` : undefined,
    });
  }
  if (!isFolder) throw new UsageError(`Cannot write ${target}: ${folder} is not a folder.`);
}

/** The rename is durable only once the folder is flushed too; a file system that cannot flush folders has nothing to lose. */
function syncFolder(folder: string): void {
  try {
    const fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Renamed already; some file systems refuse fsync on a folder.
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing with a better reason.
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Nothing was left behind, or there is nothing more we can do about it.
  }
}
