import { UsageError } from '../../../errors.js';
import { MODULE_HINT } from './modules.js';
import type { Worker } from 'node:worker_threads';
import type { WorkerMessage } from './types.js';

// A pool's workers while they load their functions: what each is loading, and the words for one that does not load.

/** What loading reads and writes of a pool's thread (./pool.ts's Thread). */
interface LoadingThread {
  readonly index: number;
  readonly worker: Worker;
  /** The user's module the worker is loading, from its 'loading' message; null before and after. */
  loading: { readonly fn: string; readonly path: string } | null;
}

/** Node's exit code for a top-level await that can never settle (the module's event loop emptied). */
const UNSETTLED_TOP_LEVEL_AWAIT = 13;

/** The deadline's error: the module each unready worker is still loading. */
export function tooSlow(threads: readonly LoadingThread[], timeoutMs: number): UsageError {
  const stuck = threads.find((thread) => thread.loading !== null);
  const seconds = `${timeoutMs / 1000} s`;
  if (!stuck?.loading) return new UsageError(`the host stage's workers did not start within ${seconds}.`);
  return new UsageError(
    `host stage function '${stuck.loading.fn}': module ${stuck.loading.path} did not load in worker ${stuck.index} within ${seconds}: ` +
      'its top-level code is still running (a loop, or a wait that never ends); the workers were ended.',
    { hint: 'A module should only define its functions when it loads; do the work in the exported function.' },
  );
}

/** Resolves once the worker loaded its functions; rejects with what stopped it. */
export function loadedIn(thread: LoadingThread): Promise<void> {
  const { worker } = thread;
  return new Promise<void>((resolve, reject) => {
    const done = () => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    };
    const onMessage = (message: WorkerMessage) => {
      if (message.kind === 'loading') {
        thread.loading = { fn: message.fn, path: message.path };
        return;
      }
      done();
      thread.loading = null;
      if (message.kind === 'ready') return resolve();
      if (message.kind === 'load-failed') {
        return reject(
          new UsageError(
            `host stage function '${message.fn}': module ${message.path} did not load in worker ${thread.index}: ${message.message}`,
            { hint: MODULE_HINT },
          ),
        );
      }
      reject(new Error(`worker ${thread.index} sent ${message.kind} before it was ready`));
    };
    const onError = (error: Error) => {
      done();
      const loading = thread.loading;
      thread.loading = null;
      // A module's top-level throw arrives as load-failed; what comes here was thrown later, by a callback it left.
      if (loading)
        reject(
          new UsageError(
            `host stage function '${loading.fn}': module ${loading.path} threw in worker ${thread.index} while it loaded: ${error.message}`,
            { hint: MODULE_HINT },
          ),
        );
      else reject(error);
    };
    const onExit = (code: number) => {
      done();
      const loading = thread.loading;
      thread.loading = null;
      if (!loading)
        return reject(new Error(`worker ${thread.index} exited with code ${code} while loading its functions`));
      reject(
        new UsageError(
          `host stage function '${loading.fn}': module ${loading.path} ended worker ${thread.index} while it loaded (exit code ${code}): ` +
            (code === UNSETTLED_TOP_LEVEL_AWAIT
              ? 'its top-level code awaits something that never settles.'
              : `its top-level code calls process.exit(${code}).`),
          { hint: 'A module should only define its functions when it loads; do the work in the exported function.' },
        ),
      );
    };
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}
