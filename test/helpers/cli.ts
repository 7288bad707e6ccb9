import { spawnSync } from 'node:child_process';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import type { CliAnswer } from './cli-worker.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

// Compiled (`npm test` runs dist/, as does the bundle) this file is .js next to the compiled CLI. Under tsx (one test
// file run from its source) it is .ts: the CLI then runs in a process a run, from dist/ when it was built from the
// sources as they are now, which starts in half the time of compiling src/ through tsx at every spawn, and from src/
// through tsx otherwise.
const compiled = import.meta.url.endsWith('.js');

let fresh: boolean | undefined;

/** True when dist/ holds the CLI compiled from the sources as they are now. */
function compiledIsFresh(root: string): boolean {
  if (fresh !== undefined) return fresh;
  const main = join(root, 'dist', 'cli', 'cuda-pipe.js');
  if (!existsSync(main)) return (fresh = false);
  const built = statSync(main).mtimeMs;
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
      const path = join(dir, entry.name);
      return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
    }, 0);
  return (fresh = newest(join(root, 'src')) <= built);
}

/**
 * The node arguments that start the CLI, for tests that spawn it themselves. V8 collects garbage on the main thread
 * alone: on two cores running several test files, its helper threads cost more CPU than they save.
 */
export function cliEntry(): string[] {
  const root = packageRoot();
  // What bin/cuda-pipe starts: the compiled CLI built into a few modules (scripts/bundle-cli.mjs).
  const dist = join(root, 'dist', 'cli', 'cuda-pipe.js');
  if (compiled && !existsSync(dist)) throw new Error(`compiled CLI missing at ${dist}`);
  return [
    '--single-threaded-gc',
    ...(compiled || compiledIsFresh(root) ? [dist] : ['--import', 'tsx', join(root, 'src', 'cli', 'start.ts')]),
  ];
}

/** How long a CLI run may take before the test fails, unless the test gives its own `timeoutMs`. */
export const CLI_DEADLINE_MS = 120_000;

/**
 * Environment variables a run in this process may set. The others may name a library, which stays loaded in the
 * process that loaded it, so a run that sets them gets a process of its own.
 */
const IN_PROCESS_ENV = new Set(['NO_COLOR', 'FORCE_COLOR', 'COLUMNS', 'CUDA_PIPE_CACHE_DIR']);

/**
 * Runs the CLI with `args`. In the compiled tests most runs go to a worker thread of this process that keeps the
 * tool loaded (starting Node.js and loading the tool costs about 0.6 s of CPU a run, which a few hundred runs made
 * most of `npm test`).
 * A run gets a process of its own when it could not be told apart there: when it sets an environment variable
 * outside IN_PROCESS_ENV, or with `process: true`, which a run that may block in a system call (opening a FIFO)
 * asks for, as only killing a process ends that.
 *
 * `timeoutMs` ends a CLI that hangs (its thread stopped, or its process killed with SIGKILL: one that ignores SIGTERM
 * would hold spawnSync for ever), so a test of "must not hang" fails instead of stalling the suite.
 */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { timeoutMs?: number; process?: boolean } = {},
): CliRun {
  const root = packageRoot();
  const timeoutMs = options.timeoutMs ?? CLI_DEADLINE_MS;
  // Under tsx (one test file run from its source) a process each: Node.js 20 does not take `--import tsx` in a worker's
  // execArgv, so the thread could not load the sources, and the test waited out its deadline.
  const inProcess =
    compiled && !options.process && Object.keys(env).every((key) => IN_PROCESS_ENV.has(key)) && process.cwd() === root;
  if (inProcess) return runInWorker(args, { ...process.env, NO_COLOR: '1', ...env }, timeoutMs);
  const result = spawnSync(process.execPath, [...cliEntry(), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  const killed =
    result.signal === 'SIGKILL' && (result.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  const stderr = killed
    ? `${result.stderr ?? ''}\n[test] \`cuda-pipe ${args.join(' ')}\` had not ended after ${timeoutMs / 1000} s and was killed; its last output is above.`
    : result.stderr;
  return { code: result.status, stdout: result.stdout, stderr };
}

interface CliThread {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly done: Int32Array;
}

let thread: CliThread | undefined;

/** The thread that runs in-process CLI runs (compiled tests only): it loads dist/'s CLI. */
function cliThread(): CliThread {
  if (thread) return thread;
  const { port1, port2 } = new MessageChannel();
  const done = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL('./cli-worker.js', import.meta.url), {
    workerData: { port: port2, done },
    transferList: [port2],
    execArgv: [],
    stdout: false,
    stderr: false,
  });
  // The thread must not keep a test file's process alive once its tests are done.
  worker.unref();
  port1.unref();
  thread = { worker, port: port1, done };
  return thread;
}

function runInWorker(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): CliRun {
  const { worker, port, done } = cliThread();
  Atomics.store(done, 0, 0);
  port.postMessage({
    argv: args,
    env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
  });
  const woke = Atomics.wait(done, 0, 0, timeoutMs);
  const answer = receiveMessageOnPort(port)?.message as CliAnswer | undefined;
  if (woke === 'timed-out' || !answer) {
    void worker.terminate();
    thread = undefined;
    return {
      code: null,
      stdout: '',
      stderr: `[test] \`cuda-pipe ${args.join(' ')}\` had not ended after ${timeoutMs / 1000} s in its worker thread, which was stopped.`,
    };
  }
  if (answer.ended) thread = undefined;
  return { code: answer.code, stdout: answer.stdout, stderr: answer.stderr };
}
