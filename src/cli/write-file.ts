import { hostname } from 'node:os';
import { runIdentity } from '../api/identity.js';
import { UsageError } from '../errors.js';
import { processInterrupts } from './interrupt.js';
import { cliIo, type OutStream } from './io.js';
import { nextTurn } from './turns.js';
import { stopIfInterrupted, writeTo } from './write-bytes.js';
import { type Destination, destinationIdentity, destinationOf, STDOUT_FD } from './write-destination.js';

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
// The target is read in write-destination.ts, the bytes written in write-bytes.ts.

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
      // Rendering a large document is synchronous: a signal that came during the one before is seen first.
      await nextTurn();
      stopIfInterrupted({
        signal,
        target: d.target === '-' ? 'stdout' : d.target,
        left: 'nothing was written to it',
        written,
      });
      await writeTo(d.target, d.to, d.render(), signal, written);
      written.push(d.target);
    }
  });
  return planned.some((d) => d.to.kind === 'fd' && d.to.fd === STDOUT_FD) ? cliIo().stderr : cliIo().stdout;
}

/**
 * What writeDocuments checks before writing anything, for commands that measure first: a clash fails before the run.
 */
export function checkDocuments(documents: ReadonlyArray<Pick<Document, 'flag' | 'target'>>): void {
  planDocuments(documents);
}

function planDocuments<D extends Pick<Document, 'flag' | 'target'>>(
  documents: readonly D[],
): Array<D & { target: string; to: Destination }> {
  const asked = documents.flatMap((d) =>
    d.target === undefined ? [] : [{ ...d, target: d.target, to: destinationOf(d.target) }],
  );
  const toStdout = asked.filter((d) => d.to.kind === 'fd' && d.to.fd === STDOUT_FD);
  if (toStdout.length > 1) {
    throw new UsageError(
      `Only one document can go to stdout (-); ${toStdout.map((d) => `--${d.flag}`).join(' and ')} ask to.`,
      {
        hint: 'Give the others a file name.',
      },
    );
  }
  const seen = new Map<string, string>();
  for (const d of asked) {
    const key = destinationIdentity(d.to);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new UsageError(
        `--${first} and --${d.flag} both name ${d.target}: the second document would replace the first.`,
        {
          hint: 'Give each document its own file.',
        },
      );
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
export function expandTarget(
  target: string,
  identity: { readonly rank: number | null; readonly hostname: string },
): string {
  return target.replace(/%(.?)/g, (all, key: string) => {
    if (key === 'r') return String(identity.rank ?? 0);
    if (key === 'h') return identity.hostname;
    if (key === '%') return '%';
    throw new UsageError(`Cannot write ${target}: "${all}" is no placeholder${key ? '' : ' (a % ends the name)'}.`, {
      hint: 'In a file name %r is the rank, %h the host name and %% a literal %.',
    });
  });
}
