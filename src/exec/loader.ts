import type { TaskResult, TaskTiming } from '../workers/pool.js';
import type { WorkerTask } from '../workers/types.js';

/** A chunk's fill: the loader's task over the chunk's input bytes in pinned memory, run before its ops are issued. */
export interface Fill {
  readonly chunk: number | null;
  readonly task: WorkerTask;
}

export interface LoaderOptions {
  /** Fills in flight ahead of the GPU: fill i + slots is submitted once fill i's H2D completed. */
  readonly slots: number;
  readonly submit: (task: WorkerTask) => Promise<TaskResult>;
  /** True once fill i's H2D completed (its event, recorded in this rep: asked only after `recorded(i)`); throws what failed. */
  readonly released: (fill: number) => boolean;
  /** Yields to the event loop between polls; setImmediate by default. */
  readonly yieldTurn?: () => Promise<void>;
}

type State = { readonly kind: 'waiting' } | { readonly kind: 'done'; readonly timing: TaskTiming } | { readonly kind: 'failed'; readonly error: unknown };

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One rep's loader, as PyTorch's DataLoader with workers and pinned memory: the first `slots` fills are submitted at
 * once, each later one as soon as the H2D of the fill `slots` before it completed (its pinned bytes are then free to
 * be written again), and the issue loop waits for a chunk's fill before it issues the chunk's ops. The wait polls
 * on the event loop, so the JS thread never blocks; every task's outcome is kept, so none rejects unheard.
 */
export class LoaderRun {
  private readonly states: State[];
  private readonly recordedFills = new Set<number>();
  private readonly releasedFills = new Set<number>();
  private submitted = 0;
  private readonly yieldTurn: () => Promise<void>;
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly fills: readonly Fill[],
    private readonly options: LoaderOptions,
  ) {
    if (!Number.isInteger(options.slots) || options.slots < 1) throw new Error(`a loader needs at least one slot, not ${options.slots}`);
    this.states = fills.map((): State => ({ kind: 'waiting' }));
    this.yieldTurn = options.yieldTurn ?? nextTurn;
    while (this.submitted < Math.min(options.slots, fills.length)) this.submitNext();
  }

  /** How many fills were handed to the pool so far. */
  get submittedCount(): number {
    return this.submitted;
  }

  private submitNext(): void {
    const index = this.submitted++;
    const fill = this.fills[index] as Fill;
    this.pending.push(
      this.options.submit(fill.task).then(
        ({ timing }) => {
          this.states[index] = { kind: 'done', timing };
        },
        (error: unknown) => {
          this.states[index] = { kind: 'failed', error };
        },
      ),
    );
  }

  /** Fill `index`'s H2D was issued, with the event after it: from now on its completion may be asked. */
  recorded(index: number): void {
    this.recordedFills.add(index);
  }

  /** Submits a fill for every slot an H2D freed since the last poll. */
  poll(): void {
    for (const index of this.recordedFills) {
      if (this.releasedFills.has(index) || !this.options.released(index)) continue;
      this.releasedFills.add(index);
      if (this.submitted < this.fills.length) this.submitNext();
    }
  }

  /** Resolves once fill `index` finished; rejects with its failure (the chunk, the worker, the message). */
  async ready(index: number): Promise<void> {
    for (;;) {
      this.poll();
      const state = this.states[index];
      if (!state) throw new Error(`the loader has no fill ${index}`);
      if (state.kind === 'done') return;
      if (state.kind === 'failed') throw state.error;
      await this.yieldTurn();
    }
  }

  /** Every fill's timing, once all settled, in fill order; throws the first failure. */
  async finish(): Promise<Array<{ chunk: number | null; timing: TaskTiming }>> {
    await Promise.all(this.pending);
    return this.states.map((state, index) => {
      if (state.kind === 'failed') throw state.error;
      if (state.kind === 'waiting') throw new Error(`fill ${index} of the loader never ran`);
      return { chunk: (this.fills[index] as Fill).chunk, timing: state.timing };
    });
  }
}
