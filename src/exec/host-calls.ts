import type { CudaRuntime } from '../cuda/runtime.js';
import type { HostFunction } from '../cuda/host-functions.js';
import type { StreamHandle } from '../cuda/types.js';
import type { Cleanup } from './cleanup.js';

/**
 * The host functions of one runner: ONE native trampoline, registered on first use, and a table of actions that
 * each enqueued op selects by its numeric tag. Every call stamps the host time it started and ended, so a traced
 * rep can place it on the GPU's timeline. A call runs on the JS thread while CUDA's own thread waits for it, so
 * nothing may wait synchronously while one is pending: the rep runner waits without blocking.
 */
export class HostCalls {
  private fn: HostFunction | null = null;
  private readonly actions: Array<() => void> = [];
  /** performance.now() when each tag's call last started and ended; NaN until it runs. */
  readonly startedAt: number[] = [];
  readonly endedAt: number[] = [];
  private failure: unknown = null;
  /** False while calls may still be pending (a rep failed half-run): the trampoline is then never released. */
  private quiet = true;

  constructor(
    private readonly rt: CudaRuntime,
    private readonly cleanup: Cleanup,
  ) {}

  /** A thunk that enqueues `action` on `stream`; returns the tag its timings are stored under. */
  thunk(stream: StreamHandle, action: () => void): { tag: number; issue: () => number } {
    const tag = this.actions.push(action) - 1;
    this.startedAt.push(Number.NaN);
    this.endedAt.push(Number.NaN);
    // The user data is tag + 1: a zero would reach the callback as a NULL pointer rather than a number.
    return { tag, issue: this.registered().launchThunk(stream, tag + 1) };
  }

  /** Called before a rep is issued: its calls are now pending until the rep ends. */
  beginRep(): void {
    this.quiet = false;
  }

  /** Called once the rep's end event completed: every call it enqueued has run. Throws what a call threw. */
  endRep(): void {
    this.quiet = true;
    const failure = this.failure;
    this.failure = null;
    if (failure) throw failure;
  }

  /** The rep failed, but every call it enqueued has run: the trampoline may be released; the rep's error stands. */
  endRepQuietly(): void {
    this.quiet = true;
    this.failure = null;
  }

  private registered(): HostFunction {
    if (this.fn) return this.fn;
    const fn = this.rt.hostFunctions.register((userData) => {
      const tag = userData - 1;
      this.startedAt[tag] = performance.now();
      try {
        this.actions[tag]?.();
      } catch (error) {
        // Throwing into CUDA's thread would take the process down: keep it for the rep to report.
        this.failure ??= error;
      }
      this.endedAt[tag] = performance.now();
    });
    this.fn = fn;
    // Releasing the trampoline while a call is still queued would crash the process when CUDA calls it.
    this.cleanup.push(() => {
      if (this.quiet) fn.unregister();
    });
    return fn;
  }
}
