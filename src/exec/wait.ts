import type { CudaRuntime } from '../cuda/runtime.js';
import { CUDA_ERROR } from '../cuda/error.js';
import type { EventHandle, StreamHandle } from '../cuda/types.js';

/**
 * How the host waits for GPU work without blocking the JS thread, so that host functions a rep enqueued (which
 * run on the JS thread while CUDA's own thread waits for them) can run:
 * - poll: query the event, and yield to the event loop between queries;
 * - thread: a blocking cudaEventSynchronize on one of koffi's worker threads.
 * Both resolve with the raw cudaError_t of the completed work.
 */
export const WAIT_STRATEGIES = ['poll', 'thread'] as const;
export type WaitStrategy = (typeof WAIT_STRATEGIES)[number];

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface Waiter {
  event(event: EventHandle): Promise<number>;
  /** Streams are always polled: there is no off-thread stream wait to prefer. */
  stream(stream: StreamHandle): Promise<number>;
}

export function makeWaiter(rt: CudaRuntime, strategy: WaitStrategy): Waiter {
  const poll = async (query: () => number): Promise<number> => {
    for (;;) {
      const code = query();
      if (code !== CUDA_ERROR.notReady) return code;
      await yieldToEventLoop();
    }
  };
  return {
    event: strategy === 'thread'
      ? (event) => rt.streams.eventSynchronizeOffThread(event)
      : (event) => poll(() => rt.streams.eventQueryCode(event)),
    stream: (stream) => poll(() => rt.streams.queryCode(stream)),
  };
}
