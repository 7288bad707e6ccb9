import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  openSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Interrupted, UsageError } from '../errors.js';
import { processInterrupts } from './interrupt.js';
import { cliIo } from './io.js';
import { type Destination, STDOUT_FD } from './write-destination.js';
import { cannotWrite } from './write-error.js';

// Getting a document's bytes to its destination: every byte or an error, a file replaced by a rename so it is never
// half written, and a look at the signals between chunks, so that Ctrl-C stops a long write and leaves the target as
// it was.

/** How long a FIFO may go without a reader before we give up, rather than hang. */
const FIFO_OPEN_WAIT_MS = 2_000;
/** How long a reader may leave a full pipe or terminal unread before we give up. */
const STALLED_WRITE_MS = 30_000;
/** Linux's NAME_MAX: a temporary name must fit in a folder entry too. */
const NAME_MAX = 255;
/** Bytes written between two looks at the signals: a few ms of disk, so that a 180 MB document stops within them. */
const WRITE_CHUNK = 1 << 20;

/** Where a write stands when a signal stops it, for the Interrupted error that says so. */
export interface Progress {
  readonly signal: AbortSignal;
  readonly target: string;
  /** What became of the target: "the file there, if any, is as it was", "the reader got part of it". */
  readonly left: string;
  /** Targets written in full before this one. */
  readonly written: readonly string[];
}

export async function writeTo(
  target: string,
  to: Destination,
  text: string,
  signal: AbortSignal,
  written: readonly string[],
): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  const progress = (left: string): Progress => ({ signal, target: target === '-' ? 'stdout' : target, left, written });
  stopIfInterrupted(progress('nothing was written to it'));
  const io = cliIo();
  // A command whose stdout is not the process's (a test collecting its text) gets the document there too.
  if (to.kind === 'fd' && to.fd === STDOUT_FD && io.stdout !== process.stdout) io.stdout.write(text);
  else if (to.kind === 'fd') await writeDescriptor(target, to.fd, bytes, progress('the reader got part of it'));
  else if (to.kind === 'direct') await writeDirect(target, to, bytes, progress('the reader got part of it'));
  else
    await replaceFile(
      target,
      to,
      bytes,
      progress('its temporary file was removed and the file there, if any, is as it was'),
    );
}

export function stopIfInterrupted(progress: Progress): void {
  if (!progress.signal.aborted) return;
  const before = progress.written.length ? ` (${progress.written.join(', ')} had been written in full)` : '';
  throw new Interrupted(
    `Interrupted (${String(progress.signal.reason)}) while writing ${progress.target}: ${progress.left}${before}.`,
  );
}

async function writeDescriptor(target: string, fd: number, bytes: Buffer, progress: Progress): Promise<void> {
  try {
    await writeAll(fd, bytes, progress);
  } catch (error) {
    if (error instanceof Interrupted) throw error;
    // `| head` closing stdout is the reader's choice, not a failure of ours (see broken-pipe.ts).
    if (fd === STDOUT_FD && (error as NodeJS.ErrnoException).code === 'EPIPE')
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw cannotWrite(target === '-' ? 'stdout' : target, error);
  }
}

/** A device or a FIFO: opened without creating or truncating anything, and without blocking for ever. */
async function writeDirect(
  target: string,
  to: Extract<Destination, { kind: 'direct' }>,
  bytes: Buffer,
  progress: Progress,
): Promise<void> {
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
        throw new UsageError(
          `Cannot write ${target}: no process opened the named pipe for reading within ${FIFO_OPEN_WAIT_MS / 1000} s.`,
          {
            hint: 'Start its reader first, or write to a file.',
          },
        );
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
async function replaceFile(
  target: string,
  to: Extract<Destination, { kind: 'replace' }>,
  bytes: Buffer,
  progress: Progress,
): Promise<void> {
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

/**
 * The rename is durable only once the folder is flushed too; a file system that cannot flush folders has nothing to
 * lose.
 */
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
