import { AsyncLocalStorage } from 'node:async_hooks';
import type { Terminal } from '../report/width.js';

// Where a command's text goes. The installed command writes to the process's stdout and stderr; the tests run the
// same command line inside a worker thread of their own process (test/helpers/cli.ts) and give it streams that
// collect the text, which saves starting Node.js and loading the tool for each of a few hundred runs.

/** The part of a terminal stream the commands use. */
export interface OutStream extends Terminal {
  write(text: string): unknown;
}

export interface CliIo {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  /** The command line, as process.argv gives it. */
  readonly argv: readonly string[];
}

const processIo: CliIo = { stdout: process.stdout, stderr: process.stderr, argv: process.argv };
const current = new AsyncLocalStorage<CliIo>();

/** The streams of the command running now. */
export const cliIo = (): CliIo => current.getStore() ?? processIo;

/** Runs `command` with its text going to `io`. */
export const withCliIo = <T>(io: CliIo, command: () => Promise<T>): Promise<T> => current.run(io, command);
