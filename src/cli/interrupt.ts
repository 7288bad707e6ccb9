import { exitNow } from '../cuda/exit.js';
import { releaseEarlySignals } from './early-signals.js';
import { cliIo } from './io.js';
import { Interrupted } from '../errors.js';

export interface InterruptHooks {
  readonly write?: (text: string) => void;
  readonly exit?: (code: 130) => never;
  /** Where signals arrive: the process, or a stand-in in tests. */
  readonly signals?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/**
 * SIGINT and SIGTERM as one AbortSignal for the whole command, and the stretches of it that stop at their own
 * boundaries.
 */
export interface Interrupts {
  /** Aborted by the first SIGINT or SIGTERM, with the signal's name as its reason. */
  readonly signal: AbortSignal;
  /**
   * Runs `body` as a stretch that stops at its own boundaries (a rep, a chunk of a file being written) when
   * `signal` aborts, throwing Interrupted. Outside every such stretch the first signal ends the command at once.
   */
  during<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Something to undo if the process must leave at once (a temporary file); returns the function that forgets it. */
  onExit(cleanup: () => void): () => void;
  /** Removes the handlers (tests, and a stand-in's end). */
  uninstall(): void;
}

/**
 * Turns SIGINT and SIGTERM into 130 for a whole command, whatever it does: Node's default, death by signal (143
 * for SIGTERM), would skip every cleanup and leave a temporary file of a half-written output behind. Inside a
 * stretch that stops at its own boundaries (`during`: the rep loop, a file being written) the first signal only
 * aborts `signal`, so cleanup frees device and pinned memory and removes the temporary file as on any error. Outside
 * one, there is nothing half-done of ours to undo, so the command ends at once with 130. A second signal always
 * ends it at once: the first may be stuck behind a long rep.
 */
export function installInterrupts(hooks: InterruptHooks = {}): Interrupts {
  const write = hooks.write ?? ((text: string) => cliIo().stderr.write(text));
  const exit = hooks.exit ?? exitNow;
  const signals = hooks.signals ?? process;
  const controller = new AbortController();
  const cleanups = new Set<() => void>();
  let stretches = 0;
  const leave = (): never => {
    for (const cleanup of cleanups) cleanup();
    // Without releasing anything (the driver reclaims device memory when the process ends) and without waiting for
    // a worker thread that may be blocked in a CUDA wait.
    return exit(130);
  };
  const onSignal = (name: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      controller.abort(name);
      if (stretches > 0) return;
      write(`cuda-pipe: Interrupted (${name}) before the command finished.\n`);
      leave();
      return;
    }
    write(`cuda-pipe: interrupted again (${name}): exiting now, without waiting for the current rep.\n`);
    leave();
  };
  signals.on('SIGINT', onSignal);
  signals.on('SIGTERM', onSignal);
  if (signals === process) releaseEarlySignals();
  return {
    signal: controller.signal,
    async during(body) {
      stretches += 1;
      try {
        return await body(controller.signal);
      } finally {
        stretches -= 1;
      }
    },
    onExit(cleanup) {
      cleanups.add(cleanup);
      return () => cleanups.delete(cleanup);
    },
    uninstall() {
      signals.off('SIGINT', onSignal);
      signals.off('SIGTERM', onSignal);
    },
  };
}

let processWide: Interrupts | null = null;

/** The process's own handlers, installed by the first command that asks (main.ts asks before any command runs). */
export function processInterrupts(): Interrupts {
  processWide ??= installInterrupts();
  return processWide;
}

/**
 * Runs a command's measuring (it uses a GPU) as a stretch that stops at its next rep boundary on the first signal.
 * A run that finished measuring while a signal was pending writes nothing. `hooks` (tests) stand in for the
 * process: handlers of their own, removed as `body` settles unless a signal came, after which a further signal
 * must still mean "now, with 130".
 */
export async function withInterrupts<T>(body: (signal: AbortSignal) => Promise<T>, hooks?: InterruptHooks): Promise<T> {
  const interrupts = hooks ? installInterrupts(hooks) : processInterrupts();
  try {
    return await interrupts.during(async (signal) => {
      const value = await body(signal);
      if (signal.aborted)
        throw new Interrupted(`Interrupted (${String(signal.reason)}) after measuring: nothing was written.`);
      return value;
    });
  } finally {
    if (hooks && !interrupts.signal.aborted) interrupts.uninstall();
  }
}
