import koffi from 'koffi';
import { HostFn } from './bindings.js';
import type { Calls } from './calls.js';
import type { StreamHandle } from './types.js';

/** A JS function registered once as a native trampoline, enqueued on streams as often as needed. */
export interface HostFunction {
  /**
   * Enqueues the function on `stream` with `tag` as its user data; returns the raw cudaError_t. The callback runs
   * on the JS thread when the event loop turns, and CUDA's thread waits for it: never block synchronously on a
   * stream with a pending host function (poll, or wait off the JS thread).
   */
  launchThunk(stream: StreamHandle, tag: number): () => number;
  /** Releases the trampoline; only once every stream has passed every enqueued call. */
  unregister(): void;
}

export class CudaHostFunctions {
  constructor(private readonly calls: Calls) {}

  /** Registers `callback` once; each launch passes a numeric tag that says which op it is. */
  register(callback: (tag: number) => void): HostFunction {
    const trampoline = koffi.register(
      (userData: unknown) => callback(Number(typeof userData === 'bigint' ? userData : koffi.address(userData))),
      koffi.pointer(HostFn),
    );
    const launchHostFunc = this.calls.fn.launchHostFunc;
    let registered = true;
    return {
      launchThunk: (stream, tag) => {
        const userData = BigInt(tag);
        return () => launchHostFunc(stream, trampoline, userData) as number;
      },
      unregister: () => {
        if (!registered) return;
        registered = false;
        koffi.unregister(trampoline);
      },
    };
  }

  /** One host function, checked: for tests and set-up, not the timed loop. */
  launch(stream: StreamHandle, fn: HostFunction, tag: number): void {
    this.calls.check(fn.launchThunk(stream, tag)(), 'cudaLaunchHostFunc');
  }
}
