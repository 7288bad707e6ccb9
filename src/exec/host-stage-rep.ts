import { CUDA_ERROR } from '../cuda/error.js';
import { loadedLibraryPath } from '../cuda/load.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import type { EventHandle } from '../cuda/types.js';
import type { CpuStageTiming, RepOptions } from '../measure/runner.js';
import { onClock, type WorkerPool } from '../workers/pool.js';
import { HandoverRun } from './handover.js';
import type { PreparedRep } from './prepared-rep.js';
import { LoaderRun } from './loader.js';
import type { RepWaits } from './rep-waits.js';

// The host stage's side of a rep (exec/host-stage-issue.ts binds its ops): chunks handed to the worker pool once the
// event after their D2H completed, a loader's fills ahead of the GPU, and the CPU stage's timings once the rep ended.

export class HostStageRep {
  /** Per prepared rep, the handover each thunk's event starts (-1 for none): a typed read in the issue loop. */
  private readonly handoverThunks = new WeakMap<PreparedRep, Int32Array>();

  constructor(
    private readonly rt: CudaRuntime,
    private readonly pool: WorkerPool | null,
    private readonly waits: RepWaits,
  ) {}

  /** Each worker's busy time so far, for a rep's share of it. */
  busyMs(): readonly number[] {
    return this.pool?.busyMs() ?? [];
  }

  /**
   * Waits for the rep's end event and, where the schedule hands chunks to the worker pool, for every chunk's task:
   * the rep ends when the GPU is done and every task finished. The next rep's D2H cannot overwrite a chunk's output
   * bytes before its task read them, since the next rep is issued only after this returns.
   */
  async end(
    prepared: PreparedRep,
    deadline: number,
    options: Pick<RepOptions, 'deadlineMs' | 'signal'>,
    gpuStartMs: number,
    stage: { readonly loader: LoaderRun | null; readonly handing: HandoverRun | null; readonly busyBefore: readonly number[] },
  ): Promise<CpuStageTiming | undefined> {
    const { pool } = this;
    const { loader, handing, busyBefore } = stage;
    if (!pool || (!handing && !loader)) {
      await this.waits.waitEnd(prepared, deadline, options);
      return undefined;
    }
    // Both settle before either's error goes up: no task may still read the host memory when clean-up frees it. A
    // rep that failed abandons the tasks still waiting for their events.
    const watching = handing?.watch();
    const ended = await this.waits.waitEnd(prepared, deadline, options).then(
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
    return {
      endMs: lastEndedMs - gpuStartMs,
      gpuMs: this.rt.streams.elapsedMs(prepared.start, prepared.end),
      bytes: [...prepared.handovers, ...(loader ? (prepared.loader?.fills ?? []) : [])].reduce((sum, t) => sum + t.task.regions.reduce((s, r) => s + r.bytes, 0), 0),
      taskMs: tasks.map((t) => t.timing.endedMs - t.timing.startedMs),
      afterTasks: handed.outcome.tasks.length,
      busyMs: busyAfter.map((ms, i) => ms - (busyBefore[i] ?? 0)),
      tasks: tasks.map((t) => ({ chunk: t.chunk, ...onClock(t.timing, gpuStartMs) })),
    };
  }

  loads(prepared: PreparedRep): boolean {
    return this.pool !== null && prepared.loader !== null;
  }

  /** This rep's hand-over of chunks to the pool, each waiting in its worker for the event after its D2H; null without one. */
  handing(prepared: PreparedRep): HandoverRun | null {
    const { pool } = this;
    if (!pool || !prepared.handovers.length) return null;
    const library = loadedLibraryPath('cudart');
    if (library === null) throw new Error('a host stage hands chunks to workers, but no libcudart was loaded');
    const eventOf = (index: number) => (prepared.handovers[index] as { event: EventHandle }).event;
    return new HandoverRun(prepared.handovers, {
      submit: (task) => pool.submit(task),
      waitFor: (index, generation) => ({ kind: 'event', event: eventOf(index), library, flag: index, generation }),
      generation: pool.nextGeneration(),
      cancel: (generation) => pool.cancel(generation),
      query: (index) => this.rt.streams.eventQueryCode(eventOf(index)),
      notReady: CUDA_ERROR.notReady,
      raise: (index, generation) => pool.raise(index, generation),
    });
  }

  /** The handover whose event each thunk records, or -1: a host op of a stage on workers records one, in op order. */
  handoverAt(prepared: PreparedRep): Int32Array {
    let at = this.handoverThunks.get(prepared);
    if (!at) {
      at = new Int32Array(prepared.thunks.length).fill(-1);
      let next = 0;
      if (prepared.handovers.length) prepared.ops.forEach((op, i) => op?.kind === 'host' && ((at as Int32Array)[i] = next++));
      if (next !== prepared.handovers.length) throw new Error(`schedule ${prepared.schedule.id} has ${next} host ops for ${prepared.handovers.length} handovers`);
      this.handoverThunks.set(prepared, at);
    }
    return at;
  }

  /** The rep's loader, its first fills submitted. */
  startLoader(prepared: PreparedRep): LoaderRun {
    const pool = this.pool as WorkerPool;
    const spec = prepared.loader as NonNullable<PreparedRep['loader']>;
    return new LoaderRun(spec.fills, {
      slots: spec.slots,
      submit: (task) => pool.submit(task),
      released: (fill) => {
        const event = spec.releasedBy[fill];
        if (!event) return true;
        const code = this.rt.streams.eventQueryCode(event);
        if (code === CUDA_ERROR.notReady) return false;
        if (code !== 0) throw this.waits.repFailure(prepared, this.rt.failure(code, "waiting for a chunk's H2D"));
        return true;
      },
    });
  }
}
