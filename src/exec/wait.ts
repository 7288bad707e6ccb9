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

/** What a wait resolves with when its deadline passed first; no cudaError_t is negative. */
export const TIMED_OUT = -1;

/**
 * Asked while a wait goes on (at most every CHECK_EVERY_MS): it throws to end the wait, for a collective whose
 * communicator failed or a signal that a rep which may never end must not outlast.
 */
export type WaitCheck = () => void;

/** How often a wait asks its check, ms: NCCL's error query is cheap, but not free in a loop that spins. */
export const CHECK_EVERY_MS = 5;

export interface Waiter {
  /** `deadline` is a performance.now() time; past it the wait resolves with TIMED_OUT. */
  event(event: EventHandle, deadline?: number, check?: WaitCheck): Promise<number>;
  /** Streams are always polled: there is no off-thread stream wait to prefer. */
  stream(stream: StreamHandle, deadline?: number, check?: WaitCheck): Promise<number>;
}

export function makeWaiter(rt: CudaRuntime, strategy: WaitStrategy): Waiter {
  return {
    event:
      strategy === 'thread'
        ? (event, deadline = Infinity, check) =>
            raceDeadline(rt.streams.eventSynchronizeOffThread(event), deadline, check)
        : (event, deadline = Infinity, check) => pollUntil(() => rt.streams.eventQueryCode(event), deadline, check),
    stream: (stream, deadline = Infinity, check) => pollUntil(() => rt.streams.queryCode(stream), deadline, check),
  };
}

/** Queries until the answer is not "not ready", yielding between queries, or until the deadline or the check throws. */
export async function pollUntil(query: () => number, deadline: number, check?: WaitCheck): Promise<number> {
  let checked = performance.now();
  for (;;) {
    const code = query();
    if (code !== CUDA_ERROR.notReady) return code;
    const now = performance.now();
    if (now >= deadline) return TIMED_OUT;
    if (check && now - checked >= CHECK_EVERY_MS) {
      checked = now;
      check();
    }
    await yieldToEventLoop();
  }
}

/**
 * The off-thread wait, or TIMED_OUT at the deadline. The worker thread stays blocked behind a runaway kernel, which
 * is why a timed-out run leaves through an exit that does not join worker threads (cuda/exit.ts).
 */
export function raceDeadline(wait: Promise<number>, deadline: number, check?: WaitCheck): Promise<number> {
  if (deadline === Infinity && !check) return wait;
  let timer: NodeJS.Timeout | undefined;
  let checking: NodeJS.Timeout | undefined;
  const expired = new Promise<number>((resolve, reject) => {
    if (deadline !== Infinity) timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - performance.now()));
    if (check)
      checking = setInterval(() => {
        try {
          check();
        } catch (error) {
          reject(error);
        }
      }, CHECK_EVERY_MS);
  });
  return Promise.race([wait, expired]).finally(() => {
    clearTimeout(timer);
    clearInterval(checking);
  });
}
