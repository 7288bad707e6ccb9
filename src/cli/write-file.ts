import { closeSync, fsyncSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { runIdentity } from '../api/identity.js';
import { UsageError } from '../errors.js';
import { describeFileError } from '../files/errno.js';

/**
 * Writes a result or report to `target`, or to stdout for `-`. A file is written under a temporary name in the same
 * folder and renamed over the target once complete, so a crash or Ctrl-C leaves the old file or the new one, never
 * half a JSON document. A missing folder is the user's to create: we say so rather than create it.
 */
export function writeOutput(target: string, text: string): void {
  if (target === '-') {
    process.stdout.write(text);
    return;
  }
  const folder = dirname(resolve(target));
  checkFolder(target, folder);
  const temporary = join(folder, `.${basename(target)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  try {
    const fd = openSync(temporary, 'wx');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, target);
  } catch (error) {
    removeQuietly(temporary);
    throw new UsageError(`Cannot write ${target}: ${describeFileError(error)}.`);
  }
}

/** A document a command can write, by the flag that asks for it (`--json <file|->`); `target` unset: not asked. */
export interface Document {
  readonly flag: string;
  readonly target: string | undefined;
  readonly render: () => string;
}

/**
 * The one meaning of `--json`, `--md`, `--svg`… in every command: each asked-for document goes to its file, or to
 * stdout for `-` (one at most, checked before anything is written). Returns where the command's terminal view (its
 * table) goes: stdout, or stderr when stdout carries a document, so that `--json - | jq` reads JSON alone.
 */
export function writeDocuments(documents: readonly Document[]): NodeJS.WriteStream {
  const asked = documents.filter((d): d is Document & { target: string } => Boolean(d.target));
  const toStdout = asked.filter((d) => d.target === '-');
  if (toStdout.length > 1) {
    throw new UsageError(`Only one document can go to stdout (-); ${toStdout.map((d) => `--${d.flag}`).join(' and ')} ask to.`, {
      hint: 'Give the others a file name.',
    });
  }
  for (const { target, render } of asked) writeOutput(target, render());
  return toStdout.length ? process.stderr : process.stdout;
}

/**
 * Checks that `target` could be written, for flags such as --json: a run that measures for minutes should fail on a
 * mistyped folder before it starts, not after. Returns the target with its placeholders expanded (`expandTarget`).
 */
export function checkOutputTarget(target: string): string {
  if (target === '-') return target;
  const expanded = expandTarget(target, runIdentity(process.env, hostname()));
  checkFolder(expanded, dirname(resolve(expanded)));
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
  try {
    if (statSync(target).isDirectory()) throw new UsageError(`Cannot write ${target}: it is a folder; name a file inside it.`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // A target that does not exist yet is the usual case.
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Nothing was left behind, or there is nothing more we can do about it.
  }
}
