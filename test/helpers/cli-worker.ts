import { type MessagePort, workerData } from 'node:worker_threads';
import { cliMain } from '../../src/cli/program.js';

// The other end of test/helpers/cli.ts's in-process runs: one command line at a time, its environment set as a
// spawned process's would be, its text collected, the answer posted back and the waiting test thread woken.

export interface CliRequest {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface CliAnswer {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The command ended the thread: the next run needs a new one. */
  readonly ended?: boolean;
}

const { port, done } = workerData as { port: MessagePort; done: Int32Array };

let out: string[] = [];
let err: string[] = [];
// Whatever writes to this thread's own streams (a cache warning, a library's console.log) is the command's output too,
// as it would be in a process of its own.
process.stdout.write = ((chunk: string | Uint8Array) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
process.stderr.write = ((chunk: string | Uint8Array) => err.push(String(chunk)) > 0) as typeof process.stderr.write;

function answer(message: CliAnswer): void {
  port.postMessage(message);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
}

// A command that ends this thread (process.exit) answers as a process that exited would.
process.on('exit', (code) => answer({ code, stdout: out.join(''), stderr: err.join(''), ended: true }));

port.on('message', async ({ argv, env }: CliRequest) => {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
  out = [];
  err = [];
  const io = {
    stdout: { write: (text: string) => out.push(text), isTTY: false },
    stderr: { write: (text: string) => err.push(text), isTTY: false },
  };
  try {
    const { code } = await cliMain(['node', 'cuda-pipe', ...argv], io);
    answer({ code, stdout: out.join(''), stderr: err.join('') });
  } catch (error) {
    answer({
      code: 1,
      stdout: out.join(''),
      stderr: `${err.join('')}${error instanceof Error ? error.stack : String(error)}\n`,
    });
  }
});
