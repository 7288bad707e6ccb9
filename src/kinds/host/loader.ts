import type { TaskResult, TaskTiming } from './workers/timing.js';
import type { WorkerTask } from './workers/types.js';

/** A chunk's fill: the loader's task over the chunk's input bytes in pinned memory, run before its ops are issued. */
export interface Fill {
  readonly chunk: number | null;
  readonly task: WorkerTask;
}

export interface LoaderOptions {
  /** Fills in flight ahead of the GPU: fill i + slots is submitted once fill i's H2D completed. */
  readonly slots: number;
  readonly submit: (task: WorkerTask) => Promise<TaskResult>;
  /**
   * True once fill i's H2D completed (its event, recorded in this rep: asked only after `recorded(i)`); throws what
   * failed.
   */
  readonly released: (fill: number) => boolean;
  /** Yields to the event loop between polls; setImmediate by default. */
  readonly yieldTurn?: () => Promise<void>;
}

type State =
  | { readonly kind: 'waiting' }
  | { readonly kind: 'done'; readonly timing: TaskTiming }
  | { readonly kind: 'failed'; readonly error: unknown };

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
    if (!Number.isInteger(options.slots) || options.slots < 1)
      throw new Error(`a loader needs at least one slot, not ${options.slots}`);
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

/** How many slots a loader's ring has: `host.slots`, else two per worker, never more than there are fills. */
export function loaderSlots(asked: number | null, workers: number, fills: number): number {
  return Math.max(1, Math.min(fills, asked ?? 2 * workers));
}

/**
 * A loader's pinned memory: per input buffer, a ring of `slots` slots each as large as the buffer's largest chunk.
 * Fill i writes slot i mod slots and its chunk's H2D reads it there, so the loader's host memory is its ring, as a
 * DataLoader's pinned batches are, not the whole input. `fills[i]` is fill i's regions (each buffer's bytes of the
 * chunk, where they sit in the buffer); `base` is each buffer's ring in native memory, by buffer name.
 */
export class LoaderRing {
  /** Each buffer's slot size in bytes. */
  readonly slotBytes: ReadonlyMap<string, number>;

  constructor(
    readonly slots: number,
    private readonly fills: ReadonlyArray<
      ReadonlyArray<{ readonly buffer: string; readonly offset: number; readonly bytes: number }>
    >,
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a loader's ring needs at least one slot, not ${slots}`);
    const sizes = new Map<string, number>();
    for (const regions of fills)
      for (const r of regions) sizes.set(r.buffer, Math.max(sizes.get(r.buffer) ?? 0, r.bytes));
    this.slotBytes = sizes;
  }

  /** The ring's bytes for each buffer: what to allocate. */
  bytes(buffer: string): number {
    return this.slots * (this.slotBytes.get(buffer) ?? 0);
  }

  /** The fill whose chunk holds bytes `place` to `place + bytes` of `buffer` (chunks do not overlap), or null. */
  fillAt(buffer: string, place: number, bytes: number): number | null {
    const fill = this.fills.findIndex((regions) =>
      regions.some((r) => r.buffer === buffer && place >= r.offset && place + bytes <= r.offset + r.bytes),
    );
    return fill < 0 ? null : fill;
  }

  /**
   * Where in `buffer`'s ring the byte at `place` in the buffer sits while fill `fill` holds its slot: the slot's start
   * plus the byte's distance from the chunk's first byte. Throws for a byte outside the fill's region.
   */
  offset(fill: number, buffer: string, place: number): number {
    const region = this.fills[fill]?.find((r) => r.buffer === buffer);
    if (!region || place < region.offset || place > region.offset + region.bytes) {
      throw new Error(`fill ${fill} has no byte ${place} of buffer '${buffer}' in its slot`);
    }
    return (fill % this.slots) * (this.slotBytes.get(buffer) ?? 0) + (place - region.offset);
  }
}
