import { exitNow } from '../cuda/exit.js';
import { Interrupted } from '../errors.js';

export interface InterruptHooks {
  readonly write?: (text: string) => void;
  readonly exit?: (code: 130) => never;
  /** Where signals arrive: the process, or a stand-in in tests. */
  readonly signals?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/**
 * Runs a command that uses a GPU with SIGINT and SIGTERM turned into an AbortSignal: the first one asks the rep
 * loop to stop at its next rep boundary (so cleanup frees device and pinned memory as on any error), a second one
 * exits at once. When no signal came the handlers are removed as `body` settles, so writing outputs is never caught
 * half-way by one of ours. Once one came they stay: the process is on its way out with 130, and a second signal
 * must still mean "now, with 130", not the default death by signal. A run that finished measuring while a signal
 * was pending writes nothing.
 */
export async function withInterrupts<T>(body: (signal: AbortSignal) => Promise<T>, hooks: InterruptHooks = {}): Promise<T> {
  const write = hooks.write ?? ((text: string) => process.stderr.write(text));
  const exit = hooks.exit ?? exitNow;
  const signals = hooks.signals ?? process;
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      controller.abort(name);
      return;
    }
    // The first signal may be stuck behind a long rep; the user asked twice, so leave without releasing anything
    // (the driver reclaims device memory when the process ends) and without waiting for a worker thread.
    write(`cuda-pipe: interrupted again (${name}): exiting now, without waiting for the current rep.\n`);
    exit(130);
  };
  signals.on('SIGINT', onSignal);
  signals.on('SIGTERM', onSignal);
  try {
    const value = await body(controller.signal);
    if (controller.signal.aborted) {
      throw new Interrupted(`Interrupted (${String(controller.signal.reason)}) after measuring: nothing was written.`);
    }
    return value;
  } finally {
    if (!controller.signal.aborted) {
      signals.off('SIGINT', onSignal);
      signals.off('SIGTERM', onSignal);
    }
  }
}
