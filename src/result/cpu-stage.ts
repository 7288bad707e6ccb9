import { z } from 'zod';

// A host stage on worker threads: what it did in a mode, and the term it adds to the overlap bound.

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
  /** The least CPU work of a timed rep: its tasks' times in their workers added up, ms (absent in files from before it). */
  workMinMs: z.number().optional(),
  /** Each worker's time in tasks over the timed reps, ms, by worker index. */
  busyMs: z.array(z.number()),
  /** Median over the timed reps of the GPU's own time (start to end event), ms. */
  gpuMedianMs: z.number(),
  /** Median over the timed reps of the time from the GPU's start to the last task's end (host clock), ms. */
  cpuMedianMs: z.number(),
});
export type CpuStage = z.infer<typeof CpuStageSchema>;

/**
 * The CPU stage on its own: every chunk's task spread over the workers, and one task to fill (the first chunk's task
 * cannot start before the chunk left the GPU, nor the last end before it did). `tailMs` is what the stage adds after
 * the GPU's last D2H where the GPU is the slower side: the last chunk's task (its hand-over, a turn of the JS
 * thread's poll or the worker's own query, is left out: the bound is a floor). In steady state a worker finds its
 * next chunk's event already complete, so no per-task hand-over cost adds to the steady term. From the mode's own
 * tasks, the only place they run. An estimate from the median task, for the report's line and which side limits; the
 * bound takes `cpuStageFloor`, which the median could lift above a rep.
 */
export function cpuStageMs(chunks: number, stage: Pick<CpuStage, 'workers' | 'taskMedianMs' | 'afterTasksPerRep'>): { steadyMs: number; fillMs: number; tailMs: number } {
  // A loader alone has no task after the GPU: its fills run ahead of their chunks, so nothing fills or trails.
  const after = stage.afterTasksPerRep === 0 ? 0 : stage.taskMedianMs;
  return { steadyMs: (chunks * stage.taskMedianMs) / stage.workers, fillMs: after, tailMs: after };
}

/**
 * The CPU stage's term in the overlap bound, which must be a floor. The steady term is the least CPU work of a timed
 * rep spread over the workers that could share it (no rep ends before its workers ran all of its tasks); the tail is
 * the fastest task (the last chunk's task runs after the GPU's last D2H, alone, without the contention the median
 * task saw); no fill, since the first task waits only for the first chunk to leave the GPU, which the GPU's side has.
 * Files from before `workMinMs` and `taskMinMs` keep the estimate `cpuStageMs` gives.
 */
export function cpuStageFloor(
  chunks: number,
  stage: Pick<CpuStage, 'workers' | 'tasksPerRep' | 'taskMedianMs' | 'taskMinMs' | 'workMinMs' | 'afterTasksPerRep'>,
): {
  steadyMs: number;
  fillMs: number;
  tailMs: number;
} {
  if (stage.workMinMs === undefined || stage.taskMinMs === undefined) return cpuStageMs(chunks, stage);
  const sharing = Math.max(1, Math.min(stage.workers, stage.tasksPerRep));
  const tail = stage.afterTasksPerRep === 0 ? 0 : stage.taskMinMs;
  return { steadyMs: stage.workMinMs / sharing, fillMs: 0, tailMs: tail };
}
