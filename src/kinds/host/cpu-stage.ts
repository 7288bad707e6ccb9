import type { Bound } from '../../model/bound.js';
import { type CpuStage, cpuStageOf } from './section.js';
import type { ModeResult } from '../../model/mode.js';

// A host stage on worker threads: the term it adds to the overlap bound, from what a mode measured of it
// (section.ts's field of a mode's Result).

/**
 * The CPU stage on its own: every chunk's task spread over the workers, and one task to fill (the first chunk's task
 * cannot start before the chunk left the GPU, nor the last end before it did). `tailMs` is what the stage adds after
 * the GPU's last D2H where the GPU is the slower side: the last chunk's task (its hand-over, a turn of the JS
 * thread's poll or the worker's own query, is left out: the bound is a floor). In steady state a worker finds its
 * next chunk's event already complete, so no per-task hand-over cost adds to the steady term. From the mode's own
 * tasks, the only place they run. An estimate from the median task, for the report's line and which side limits; the
 * bound takes `cpuStageFloor`, which the median could lift above a rep.
 */
export function cpuStageMs(
  chunks: number,
  stage: Pick<CpuStage, 'workers' | 'taskMedianMs' | 'afterTasksPerRep'>,
): { steadyMs: number; fillMs: number; tailMs: number } {
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

/**
 * The pipeline's bound with a CPU stage beside the GPU's: the larger side limits, and the GPU's side ends with the
 * last chunk's task after its D2H (`tailMs`, part of its drain).
 */
export function withCpuStage(gpu: Bound, cpu: { steadyMs: number; fillMs: number; tailMs: number } | null): Bound {
  if (!cpu) return gpu;
  const term = {
    term: 'CPU stage' as const,
    steadyMs: cpu.steadyMs,
    perOpMs: 0,
    fillDrainMs: cpu.fillMs,
    ms: cpu.steadyMs + cpu.fillMs,
  };
  const terms = [...gpu.terms, term];
  const gpuSide = { ...gpu, fillDrainMs: gpu.fillDrainMs + cpu.tailMs, ms: gpu.ms + cpu.tailMs };
  return term.ms > gpuSide.ms ? { ...term, terms } : { ...gpuSide, terms };
}

/**
 * The CPU stage a mode measured at its own chunk count, cut into `chunks` chunks: the same work (the same bytes), in
 * as many tasks as that many chunks make. The least work of a rep is the stage's, whatever the chunks; fewer tasks than
 * workers leave workers idle. A larger task takes its share of the work; a smaller one no less than the task measured,
 * since what handing a task to a worker costs was not measured apart: cutting the stage finer is predicted to gain
 * nothing, and cutting it coarser to cost its larger first and last tasks.
 */
export function cpuStageAt(stage: CpuStage, measuredChunks: number, chunks: number): CpuStage {
  if (chunks === measuredChunks || stage.tasksPerRep === 0) return stage;
  const tasks = Math.max(1, Math.round((stage.tasksPerRep * chunks) / measuredChunks));
  const share = Math.max(1, stage.tasksPerRep / tasks);
  return {
    ...stage,
    tasksPerRep: tasks,
    ...(stage.afterTasksPerRep
      ? { afterTasksPerRep: Math.max(1, Math.round((stage.afterTasksPerRep * chunks) / measuredChunks)) }
      : {}),
    taskMedianMs: stage.taskMedianMs * share,
    ...(stage.taskMinMs === undefined ? {} : { taskMinMs: stage.taskMinMs * share }),
  };
}

/**
 * The GPU's bound for a mode's workload cut into `chunks` chunks with the CPU stage it measured, where it had one
 * (the contract's `term`): at the mode's own chunk count what it measured, at another the same work in as many tasks.
 */
export function cpuStageTerm(gpu: Bound, mode: ModeResult, chunks: number): Bound {
  const stage = cpuStageOf(mode);
  if (!stage) return gpu;
  const measured = mode.role.kind === 'overlapped' ? mode.role.layout.chunks : chunks;
  return withCpuStage(gpu, cpuStageFloor(chunks, cpuStageAt(stage, measured, chunks)));
}
