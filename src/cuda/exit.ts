import { createRequire } from 'node:module';
import type koffiModule from 'koffi';

/**
 * Ends the process now through libc's _exit: no atexit handlers (CUDA's own teardown, which waits on a runaway
 * kernel) and no join of libuv's worker threads (process.exit joins them, and one may be blocked for ever in
 * cudaEventSynchronize under `--wait thread`). Anything written to stdout and stderr before is already out: on
 * Linux, Node writes files, pipes and terminals synchronously.
 */
export function exitNow(code: number): never {
  try {
    // koffi is loaded here, where the process ends, not when this module is: every command imports this module
    // (interrupt.ts), and loading the native addon took 40 ms of each start (docs/measurements/2026-11-28-cli-start/).
    const koffi = createRequire(import.meta.url)('koffi') as typeof koffiModule;
    const libc = koffi.load('libc.so.6');
    const exit = libc.func('void _exit(int status)');
    exit(code);
  } catch {
    // No glibc (musl): process.exit is the best left, and is right unless a worker thread is blocked.
  }
  process.exit(code);
}
