import { z } from 'zod';

// A host stage on worker threads: what it did in a mode (its term in the overlap bound is the host kind's,
// src/kinds/host/cpu-stage.ts).

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
