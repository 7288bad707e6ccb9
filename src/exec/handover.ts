import type { TaskResult, TaskTiming } from '../workers/pool.js';
import type { WorkerTask } from '../workers/types.js';

/** A chunk's CPU work after its D2H: the task its worker runs once the event recorded after the D2H completed. */
export interface Handover {
  readonly chunk: number | null;
  readonly task: WorkerTask;
}

/** What a rep's CPU stage did: each chunk's task, in the order handed over, and when the last one ended (performance.now()). */
export interface HandoverOutcome {
  readonly tasks: ReadonlyArray<{ readonly chunk: number | null; readonly timing: TaskTiming }>;
  readonly lastEndedMs: number;
}

export interface HandoverOptions {
  /** cudaEventQuery's raw code for handover `index`'s event: 0 done, `notReady` pending, anything else a failure. */
  readonly query: (index: number) => number;
  readonly notReady: number;
  readonly submit: (task: WorkerTask) => Promise<TaskResult>;
  /** performance.now() past which polling stops: the rep's own wait reports the timeout. */
  readonly deadline: number;
  /** True once the rep failed some other way: polling stops, and tasks already submitted are awaited. */
  readonly stopped: () => boolean;
  /** Yields to the event loop between polls; setImmediate by default. */
  readonly yieldTurn?: () => Promise<void>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Hands each chunk to the worker pool as soon as its event completed, polling every pending event once per turn of
 * the event loop (chunks on different streams finish out of order), so that no stream ever waits for CPU work and
 * the JS thread never blocks. Resolves when every task finished; rejects with the first task's failure (the chunk,
 * the worker and the message), after the others settled, so nothing still writes when the caller cleans up. Stops
 * submitting where an event failed or the deadline passed: the rep's wait for its end event names that failure.
 */
export async function handOver(handovers: readonly Handover[], options: HandoverOptions): Promise<HandoverOutcome> {
  const yieldTurn = options.yieldTurn ?? nextTurn;
  const pending = new Set(handovers.keys());
  const tasks: Promise<{ chunk: number | null; timing: TaskTiming }>[] = [];
  polling: while (pending.size && !options.stopped()) {
    let submitted = false;
    for (const index of pending) {
      const code = options.query(index);
      if (code === options.notReady) continue;
      if (code !== 0) break polling;
      pending.delete(index);
      const { chunk, task } = handovers[index] as Handover;
      tasks.push(options.submit(task).then(({ timing }) => ({ chunk, timing })));
      submitted = true;
    }
    if (!pending.size) break;
    if (!submitted && performance.now() > options.deadline) break;
    await yieldTurn();
  }
  const settled = await Promise.allSettled(tasks);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const done = settled.map((s) => (s as PromiseFulfilledResult<{ chunk: number | null; timing: TaskTiming }>).value);
  return { tasks: done, lastEndedMs: done.reduce((last, t) => Math.max(last, t.timing.endedMs), Number.NEGATIVE_INFINITY) };
}
