import type { CpuStage } from './schema.js';

/**
 * The CPU stage on its own: every chunk's task spread over the workers, and one task to fill (the first chunk's task
 * cannot start before the chunk left the GPU, nor the last end before it did). From the mode's own tasks, the only
 * place they run; the model's bound and the report's line both read it.
 */
export function cpuStageMs(chunks: number, stage: Pick<CpuStage, 'workers' | 'taskMedianMs'>): { steadyMs: number; fillMs: number } {
  return { steadyMs: (chunks * stage.taskMedianMs) / stage.workers, fillMs: stage.taskMedianMs };
}
