import { CUDA_ERROR } from '../../cuda/error.js';
import { loadedLibraryPath } from '../../cuda/load.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import type { EventHandle } from '../../cuda/types.js';
import type { PlanOp } from '../../model/schedule.js';
import type { KindRep, KindRepEnd, RepHooks } from '../api/index.js';
import { type Handover, HandoverRun } from './handover.js';
import { type Fill, LoaderRun } from './loader.js';
import type { CpuStageTiming } from './section.js';
import type { WorkerPool } from './workers/pool.js';
import { onClock } from './workers/timing.js';

// The host stage's side of each rep of a schedule (binding.ts binds its ops): chunks handed to the worker pool once
// the event after their D2H completed, a loader's fills ahead of the GPU, and the CPU stage's timings once the rep
// ended (section.ts's record of a rep).

/**
 * A schedule with a loader (the host stage's `before`): each chunk's fill, the thunk that must wait for it (the
 * chunk's first op), and the thunk after which the event closing its H2D is recorded.
 */
export interface LoaderSpec {
  readonly fills: readonly Fill[];
  readonly waitAt: ReadonlyMap<number, number>;
  readonly recordedAt: ReadonlyMap<number, number>;
  readonly releasedBy: readonly (EventHandle | null)[];
  /** The ring's slots: fills in flight ahead of the GPU. */
  readonly slots: number;
}

/** What a prepared schedule's reps hand over and load. */
export interface HostRepSpec {
  /** The schedule's id, for messages. */
  readonly schedule: string;
  /** The op each thunk issues. */
  readonly ops: readonly (PlanOp | null)[];
  /** The chunks the pool takes over once their event (recorded after the chunk's D2H) completed, in issue order. */
  readonly handovers: ReadonlyArray<Handover & { readonly event: EventHandle }>;
  /** Null without a loader. */
  readonly loader: LoaderSpec | null;
  readonly start: EventHandle;
  readonly end: EventHandle;
  /** Index of the thunk that records the start event: a loader's fills start once it is issued. */
  readonly startIndex: number;
}

export class HostRep implements RepHooks {
  /** The handover whose event each thunk records, or -1: a typed read in the issue loop. */
  readonly handoverAt: Int32Array;

  constructor(
    private readonly rt: CudaRuntime,
    private readonly pool: WorkerPool,
    readonly spec: HostRepSpec,
  ) {
    // A host op of a stage on workers records one, in op order.
    const at = new Int32Array(spec.ops.length).fill(-1);
    let next = 0;
    if (spec.handovers.length) spec.ops.forEach((op, i) => op?.kind === 'host' && (at[i] = next++));
    if (next !== spec.handovers.length)
      throw new Error(`schedule ${spec.schedule} has ${next} host ops for ${spec.handovers.length} handovers`);
    this.handoverAt = at;
  }

  begin(failure: (error: unknown) => Error, deadlineMs: number): KindRep {
    return new HostRepRun(
      this.rt,
      this.pool,
      this,
      failure,
      Number.isFinite(deadlineMs) ? { timeoutMs: deadlineMs } : {},
    );
  }
}

/** One rep: its hand-over of chunks to the pool, and its loader, started with the rep's start event. */
class HostRepRun implements KindRep {
  /** Each worker's busy time before the rep, for the rep's share of it. */
  private readonly busyBefore: readonly number[];
  private readonly handing: HandoverRun | null;
  private loader: LoaderRun | null = null;

  constructor(
    private readonly rt: CudaRuntime,
    private readonly pool: WorkerPool,
    private readonly hooks: HostRep,
    private readonly failure: (error: unknown) => Error,
    /** Each task's function may run as long as the rep may (the pool ends a worker past it). */
    private readonly bound: { readonly timeoutMs?: number },
  ) {
    this.busyBefore = pool.busyMs();
    this.handing = this.handOver();
  }

  ready(i: number): Promise<void> | null {
    const fill = this.hooks.spec.loader?.waitAt.get(i);
    if (fill === undefined) return null;
    return this.startLoader().ready(fill);
  }

  issued(i: number): void {
    const { spec, handoverAt } = this.hooks;
    if (spec.loader && i === spec.startIndex) this.startLoader();
    const handover = handoverAt[i] as number;
    if (this.handing && handover >= 0) this.handing.issued(handover);
    const recorded = spec.loader?.recordedAt.get(i);
    if (recorded !== undefined) this.loader?.recorded(recorded);
  }

  async abandon(): Promise<void> {
    // Tasks already handed over stop waiting for events that may never complete, and end before clean-up.
    await this.handing?.finish(true).catch(() => undefined);
  }

  /**
   * Waits for the rep's end event and, where the schedule hands chunks to the worker pool, for every chunk's task:
   * the rep ends when the GPU is done and every task finished. The next rep's D2H cannot overwrite a chunk's output
   * bytes before its task read them, since the next rep is issued only after this returns.
   */
  async end(waitEnd: () => Promise<void>, gpuStartMs: number): Promise<KindRepEnd> {
    const { pool, handing } = this;
    const { spec } = this.hooks;
    // Every fill was submitted by the end of issue.
    const loader = spec.loader ? this.startLoader() : null;
    // Both settle before either's error goes up: no task may still read the host memory when clean-up frees it. A
    // rep that failed abandons the tasks still waiting for their events.
    const watching = handing?.watch();
    const ended = await waitEnd().then(
      () => null,
      (error: unknown) => ({ error }),
    );
    const handed = await (handing?.finish(ended !== null) ?? Promise.resolve({ tasks: [] })).then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
    await watching;
    if (ended) throw ended.error;
    if ('error' in handed) throw handed.error;
    // Every fill finished before its chunk was issued: this only collects their timings.
    const tasks = [...((await loader?.finish()) ?? []), ...handed.outcome.tasks];
    const lastEndedMs = tasks.reduce((last, t) => Math.max(last, t.timing.endedMs), Number.NEGATIVE_INFINITY);
    const busyAfter = pool.busyMs();
    const record: CpuStageTiming = {
      endMs: lastEndedMs - gpuStartMs,
      gpuMs: this.rt.streams.elapsedMs(spec.start, spec.end),
      bytes: [...spec.handovers, ...(spec.loader?.fills ?? [])].reduce(
        (sum, t) => sum + t.task.regions.reduce((s, r) => s + r.bytes, 0),
        0,
      ),
      taskMs: tasks.map((t) => t.timing.endedMs - t.timing.startedMs),
      afterTasks: handed.outcome.tasks.length,
      busyMs: busyAfter.map((ms, i) => ms - (this.busyBefore[i] ?? 0)),
      tasks: tasks.map((t) => ({ chunk: t.chunk, ...onClock(t.timing, gpuStartMs) })),
    };
    return {
      kind: 'host',
      endMs: record.endMs,
      record,
      workerTasks: record.tasks.map((t) => ({
        worker: t.worker,
        chunk: t.chunk,
        startMs: t.startedMs,
        endMs: t.endedMs,
      })),
    };
  }

  /**
   * This rep's hand-over of chunks to the pool, each waiting in its worker for the event after its D2H; null without
   * one.
   */
  private handOver(): HandoverRun | null {
    const { pool } = this;
    const { handovers } = this.hooks.spec;
    if (!handovers.length) return null;
    const library = loadedLibraryPath('cudart');
    if (library === null) throw new Error('a host stage hands chunks to workers, but no libcudart was loaded');
    const eventOf = (index: number) => (handovers[index] as { event: EventHandle }).event;
    return new HandoverRun(handovers, {
      submit: (task) => pool.submit(task, this.bound),
      waitFor: (index, generation) => ({ kind: 'event', event: eventOf(index), library, flag: index, generation }),
      generation: pool.nextGeneration(),
      cancel: (generation) => pool.cancel(generation),
      query: (index) => this.rt.streams.eventQueryCode(eventOf(index)),
      notReady: CUDA_ERROR.notReady,
      raise: (index, generation) => pool.raise(index, generation),
    });
  }

  /** The rep's loader, its first fills submitted when it is first asked for. */
  private startLoader(): LoaderRun {
    if (this.loader) return this.loader;
    const spec = this.hooks.spec.loader as LoaderSpec;
    this.loader = new LoaderRun(spec.fills, {
      slots: spec.slots,
      submit: (task) => this.pool.submit(task, this.bound),
      released: (fill) => {
        const event = spec.releasedBy[fill];
        if (!event) return true;
        const code = this.rt.streams.eventQueryCode(event);
        if (code === CUDA_ERROR.notReady) return false;
        if (code !== 0) throw this.failure(this.rt.failure(code, "waiting for a chunk's H2D"));
        return true;
      },
    });
    return this.loader;
  }
}
