import type { TaskResult, TaskTiming } from './workers/timing.js';
import type { TaskWait, WorkerTask } from './workers/types.js';

/** A chunk's CPU work after its D2H: the task its worker runs once the event recorded after the D2H completed. */
export interface Handover {
  readonly chunk: number | null;
  readonly task: WorkerTask;
}

/**
 * What a rep's CPU stage did: each chunk's task, in the order handed over, and when the last one ended
 * (performance.now()).
 */
export interface HandoverOutcome {
  readonly tasks: ReadonlyArray<{ readonly chunk: number | null; readonly timing: TaskTiming }>;
  readonly lastEndedMs: number;
}

export interface HandoverOptions {
  readonly submit: (task: WorkerTask) => Promise<TaskResult>;
  /** What handover `index`'s task waits for in its worker, in this rep's generation (its event, or a flag). */
  readonly waitFor: (index: number, generation: number) => TaskWait;
  readonly generation: number;
  /** Abandons the tasks of a generation still waiting: their events will not complete. */
  readonly cancel: (generation: number) => void;
  /** cudaEventQuery's raw code for handover `index`'s event: 0 done, `notReady` pending, anything else a failure. */
  readonly query: (index: number) => number;
  readonly notReady: number;
  /** Wakes handover `index`'s task, its event complete. */
  readonly raise: (index: number, generation: number) => void;
  /** Yields to the event loop between polls; setImmediate by default. */
  readonly yieldTurn?: () => Promise<void>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One rep's hand-over of chunks to the worker pool. Each chunk's task is submitted as soon as the event after its
 * D2H is issued (never before: the event still holds the last rep's completion until it is recorded again) and
 * sleeps in its worker until the event completed: the JS thread, polling while it waits for the rep, wakes it
 * through shared memory (no message), and while the JS thread is busy issuing the worker queries the event itself
 * now and then. No stream ever waits for CPU work.
 */
export class HandoverRun {
  private readonly tasks: Promise<{ chunk: number | null; timing: TaskTiming }>[] = [];
  /** Issued handovers whose event the JS thread has not seen complete. */
  private readonly pending = new Set<number>();
  private raised = 0;
  private finished = false;

  constructor(
    private readonly handovers: readonly Handover[],
    private readonly options: HandoverOptions,
  ) {}

  /** Handover `index`'s event was issued: its task goes to the pool, to run once the event completed. */
  issued(index: number): void {
    const { chunk, task } = this.handovers[index] as Handover;
    const waiting = { ...task, waitFor: this.options.waitFor(index, this.options.generation) };
    this.tasks.push(this.options.submit(waiting).then(({ timing }) => ({ chunk, timing })));
    this.pending.add(index);
  }

  /**
   * Polls the issued events once per turn of the event loop and wakes each task whose event completed, until every
   * handover was woken or `finish` was called. An event that failed is left to the rep's wait for its end event,
   * which names the failure; its task is cancelled with the rep.
   */
  async watch(): Promise<void> {
    const yieldTurn = this.options.yieldTurn ?? nextTurn;
    while (!this.finished && this.raised < this.handovers.length) {
      for (const index of this.pending) {
        const code = this.options.query(index);
        if (code === this.options.notReady) continue;
        this.pending.delete(index);
        this.raised += 1;
        if (code === 0) this.options.raise(index, this.options.generation);
      }
      if (this.raised < this.handovers.length) await yieldTurn();
    }
  }

  /**
   * Resolves when every task finished; rejects with the first task's failure (the chunk, the worker and the
   * message), after the others settled, so nothing still writes when the caller cleans up. `failed`: the rep failed
   * some other way (its end event, its deadline), so tasks still waiting for their events are abandoned first.
   */
  async finish(failed = false): Promise<HandoverOutcome> {
    this.finished = true;
    if (failed) this.options.cancel(this.options.generation);
    const settled = await Promise.allSettled(this.tasks);
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (rejected) throw rejected.reason;
    const done = settled.map((s) => (s as PromiseFulfilledResult<{ chunk: number | null; timing: TaskTiming }>).value);
    return {
      tasks: done,
      lastEndedMs: done.reduce((last, t) => Math.max(last, t.timing.endedMs), Number.NEGATIVE_INFINITY),
    };
  }
}
