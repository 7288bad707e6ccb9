import { z } from 'zod';
import type { ModeResult } from '../../model/mode.js';
import { median } from '../../quantile.js';

// A host stage on worker threads: what each rep's tasks did (`CpuStageTiming`, which rep.ts measures), and what they
// did over a mode's timed reps, the mode's `cpuStage` in the Result (the contract's `reps`). Its term in the overlap
// bound is cpu-stage.ts's.

export const CpuStageSchema = z.object({
  /** Worker threads in the pool. */
  workers: z.number().int().min(1),
  /** Tasks a rep ran (one per chunk and side). */
  tasksPerRep: z.number().int(),
  /** Of those, the tasks after a chunk's D2H (the others are a loader's fills); absent in files from before it: all. */
  afterTasksPerRep: z.number().int().optional(),
  /** The bytes a rep's tasks were handed: the CPU stage's throughput is these over its time. */
  bytesPerRep: z.number(),
  /** Median of every task's time in its worker, ms. */
  taskMedianMs: z.number(),
  /** The fastest task's time in its worker, ms (absent in files from before it). */
  taskMinMs: z.number().optional(),
  /**
   * The least CPU work of a timed rep: its tasks' times in their workers added up, ms (absent in files from before it).
   */
  workMinMs: z.number().optional(),
  /** Each worker's time in tasks over the timed reps, ms, by worker index. */
  busyMs: z.array(z.number()),
  /** Median over the timed reps of the GPU's own time (start to end event), ms. */
  gpuMedianMs: z.number(),
  /** Median over the timed reps of the time from the GPU's start to the last task's end (host clock), ms. */
  cpuMedianMs: z.number(),
});
export type CpuStage = z.infer<typeof CpuStageSchema>;

/** One rep's CPU-stage timing, as the rep hooks measure it (the Result's `cpuStage` summarises them). */
export interface CpuStageTiming {
  /** From the rep's GPU start (host clock) to the last task's end. */
  readonly endMs: number;
  /** The GPU's own time, start to end event. */
  readonly gpuMs: number;
  /** The bytes the rep's tasks were handed (every chunk's inputs for a loader, outputs after the D2H). */
  readonly bytes: number;
  /** Each task's run time in a worker, in issue order of the chunks' events. */
  readonly taskMs: readonly number[];
  /** How many of the tasks ran after a chunk's D2H (the rest are a loader's fills, before its H2D). */
  readonly afterTasks: number;
  /** Each worker's time spent in tasks this rep, by worker index. */
  readonly busyMs: readonly number[];
  /** Each task on the rep's clock (ms from the GPU's start): which worker, when it was queued, started and ended. */
  readonly tasks: ReadonlyArray<{
    readonly chunk: number | null;
    readonly worker: number;
    readonly queuedMs: number;
    readonly startedMs: number;
    readonly endedMs: number;
  }>;
}

/**
 * The fields the host stage adds to a mode of the Result. A host stage on worker threads: what it did over the timed
 * reps. `samplesMs` are then each rep's GPU work and CPU work together (until the last task ended, where that is later
 * than the end event).
 */
export const HOST_MODE_FIELDS = { cpuStage: CpuStageSchema.optional() };

/** A mode's CPU stage, where a host stage on workers ran in it (the Result's schema checked it as the kind's field). */
export const cpuStageOf = (mode: ModeResult): CpuStage | undefined =>
  (mode as ModeResult & { readonly cpuStage?: CpuStage }).cpuStage;

/**
 * A host stage on workers over the timed reps: each worker's busy time, the tasks' median, the GPU's and the CPU's
 * side.
 */
export function cpuStageSummary(reps: readonly CpuStageTiming[]): CpuStage {
  const workers = Math.max(1, ...reps.map((r) => r.busyMs.length));
  const busyMs = Array.from({ length: workers }, (_, w) => reps.reduce((sum, r) => sum + (r.busyMs[w] ?? 0), 0));
  return {
    workers,
    tasksPerRep: reps[0]?.taskMs.length ?? 0,
    afterTasksPerRep: reps[0]?.afterTasks ?? 0,
    bytesPerRep: reps[0]?.bytes ?? 0,
    taskMedianMs: median(reps.flatMap((r) => r.taskMs)),
    // Where reps ran tasks (a JSON document holds no Infinity).
    ...(reps.some((r) => r.taskMs.length)
      ? {
          taskMinMs: reps.reduce(
            (least, r) => r.taskMs.reduce((a, b) => Math.min(a, b), least),
            Number.POSITIVE_INFINITY,
          ),
          workMinMs: reps.reduce(
            (least, r) =>
              Math.min(
                least,
                r.taskMs.reduce((a, b) => a + b, 0),
              ),
            Number.POSITIVE_INFINITY,
          ),
        }
      : {}),
    busyMs,
    gpuMedianMs: median(reps.map((r) => r.gpuMs)),
    cpuMedianMs: median(reps.map((r) => r.endMs)),
  };
}
