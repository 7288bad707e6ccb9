import { CommanderError } from 'commander';
import { CudaPipeError, type ExitCode, INTERNAL_ERROR_EXIT } from '../errors.js';
import { escapeControl } from '../format.js';
import { fitLines } from '../report/width.js';

/**
 * The top-level catch: maps an error to its exit code and prints it as one paragraph (the stack only with
 * --verbose), its lines fitted to `columns` (width.ts' paragraphColumns: the terminal's or COLUMNS, else none).
 * Anything that is not one of our error classes is a bug in cuda-pipe, shown in full under its own code.
 */
export function exitCodeFor(
  error: unknown,
  verbose: boolean,
  print: (text: string) => void,
  columns = Number.POSITIVE_INFINITY,
): ExitCode {
  // Every error paragraph passes here, and many quote a file's bytes (a trace's kernel name, a non-JSON file's first
  // characters in JSON.parse's message): whatever they hold reaches the terminal as visible escapes, never as its
  // commands (ESC, BEL, NUL, bidirectional overrides). The escapes are visible text, so the lines are fitted after.
  const write = (text: string) => print(fitLines(escapeControl(text), columns));
  if (error instanceof CommanderError) {
    // commander already printed its message; help and version end here with code 0.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof CudaPipeError) {
    write(`cuda-pipe: ${error.message}\n`);
    if (error.hint) write(`${error.hint}\n`);
    if (verbose && error.stack) write(`\n${error.stack}\n`);
    if (verbose && error.cause instanceof Error && error.cause.stack) write(`caused by: ${error.cause.stack}\n`);
    return error.exitCode;
  }
  // Not the user's doing and not CUDA's: its own code, so that a script never mistakes a crash for a CUDA failure (4).
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  write(`cuda-pipe: internal error (please report it): ${text}\n`);
  return INTERNAL_ERROR_EXIT;
}
