import type { CpuStage } from './schema.js';

/**
 * The CPU stage on its own: every chunk's task spread over the workers, and one task to fill (the first chunk's task
 * cannot start before the chunk left the GPU, nor the last end before it did). `tailMs` is what the stage adds after
 * the GPU's last D2H where the GPU is the slower side: the last chunk's task (its hand-over, a turn of the JS
 * thread's poll or the worker's own query, is left out: the bound is a floor). In steady state a worker finds its
 * next chunk's event already complete, so no per-task hand-over cost adds to the steady term. From the mode's own tasks, the only place they run; the model's
 * bound and the report's line both read it.
 */
export function cpuStageMs(chunks: number, stage: Pick<CpuStage, 'workers' | 'taskMedianMs' | 'afterTasksPerRep'>): { steadyMs: number; fillMs: number; tailMs: number } {
  // A loader alone has no task after the GPU: its fills run ahead of their chunks, so nothing fills or trails.
  const after = stage.afterTasksPerRep === 0 ? 0 : stage.taskMedianMs;
  return { steadyMs: (chunks * stage.taskMedianMs) / stage.workers, fillMs: after, tailMs: after };
}
