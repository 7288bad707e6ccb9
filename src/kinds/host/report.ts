import { formatMs, formatRate, gbPerSecond } from '../../format.js';
import { median } from '../../quantile.js';
import type { ModeResult } from '../../model/mode.js';
import type { TimelineOpBase } from '../../model/timeline.js';
import type { ModeLineContext, ResultView, TermMeasured } from '../api/index.js';
import { cpuStageMs } from './cpu-stage.js';
import { type CpuStage, cpuStageOf } from './section.js';

// The host stage's line in every report (the contract's `modeLine`, printed among the stream toolbox's lines): what the
// stage cost the layout against the same layout without it, and, on worker threads, the CPU stage against the GPU
// pipeline; and the model's words for a CPU stage it measured (`term.measured`). Drawn from the Result alone.

/** Latency of each host op: from its stream reaching it (GPU clock) to the function starting (host clock). */
export function hostOpLatencies(ops: readonly TimelineOpBase[]): { latencyMs: number[]; runMs: number[] } {
  const host = ops.filter((o) => o.kind === 'host' && o.hostStartedMs !== undefined && o.hostEndedMs !== undefined);
  return {
    latencyMs: host.map((o) => (o.hostStartedMs ?? 0) - o.startMs),
    runMs: host.map((o) => (o.hostEndedMs ?? 0) - (o.hostStartedMs ?? 0)),
  };
}

/**
 * A host stage on worker threads: its tasks, the CPU stage's rate against the GPU pipeline's (the CPU estimate:
 * chunks × the median task ÷ workers + one task to fill), which side limits, and each worker's busy share. The GPU
 * pipeline's pace is its twin's without the stage where the run has one: a loader's GPU waits for its fills, so its
 * own GPU time is the CPU's pace, not the GPU's.
 */
export function cpuStageText(
  mode: Pick<ModeResult, 'elapsedMs'>,
  stage: CpuStage,
  withoutMs: number | null = null,
): string {
  const { steadyMs, fillMs } = cpuStageMs(stage.tasksPerRep, stage);
  const cpuMs = steadyMs + fillMs;
  const gpuMs = withoutMs ?? stage.gpuMedianMs;
  const w = stage.workers;
  const limit = cpuMs > gpuMs ? 'the CPU stage limits' : 'the GPU pipeline limits';
  const busy = stage.busyMs
    .map((ms) => `${Math.round((100 * ms) / Math.max(mode.elapsedMs, Number.MIN_VALUE))}%`)
    .join(' ');
  return (
    `on ${w} worker${w === 1 ? '' : 's'}: ${stage.tasksPerRep} tasks a rep, a median ${formatMs(stage.taskMedianMs)} each; ` +
    `CPU stage ${formatRate(gbPerSecond(stage.bytesPerRep, cpuMs))} (${stage.tasksPerRep} × ${formatMs(stage.taskMedianMs)} ÷ ${w} + ${formatMs(fillMs)} = ${formatMs(cpuMs)} a rep) ` +
    `against the GPU pipeline's ${formatRate(gbPerSecond(stage.bytesPerRep, gpuMs))} (${formatMs(gpuMs)}${withoutMs === null ? '' : ' without the stage'}): ${limit}; ` +
    `the last task ended a median ${formatMs(stage.cpuMedianMs)} after the GPU started; workers busy ${busy} of the timed reps`
  );
}

/** The host stage's line about an overlapped mode that runs it (not a graph replay's, whose line is the graph's). */
export function hostModeLine(mode: ModeResult, result: ResultView, context: ModeLineContext): string | null {
  const layout = mode.role.kind === 'overlapped' ? mode.role.layout : null;
  if (!layout?.host || layout.issue) return null;
  const without = context.twinWithout(mode, 'host');
  const effect = without
    ? `; the pipeline ${formatMs(without.stats.median)} without it → ${formatMs(mode.stats.median)} with it (${(100 * (mode.stats.median / without.stats.median - 1)).toFixed(1)}%)`
    : '';
  const stage = cpuStageOf(mode);
  if (stage) return `host stage ${layout.host} ${cpuStageText(mode, stage, without?.stats.median ?? null)}${effect}`;
  const rep = result.timeline?.reps.find((r) => r.mode === mode.id);
  const { latencyMs, runMs } = hostOpLatencies(rep?.ops ?? []);
  const traced = latencyMs.length
    ? `; in the traced rep, ${latencyMs.length} calls started a median ${formatMs(median(latencyMs))} (max ${formatMs(latencyMs.reduce((a, b) => Math.max(a, b)))}) ` +
      `after their stream reached them and ran a median ${formatMs(median(runMs))}`
    : '; no traced rep to time the calls';
  return `host stage ${layout.host}${traced}${effect}`;
}

/**
 * A CPU stage on workers as the model's words name it (the contract's `term.measured`): why it limits a layout and
 * the change that helps, what its term leaves out, how a rep's time holds it, and where its part of the bound comes
 * from. Null for a mode without one (a host stage on the JS thread, which the model has no term for).
 */
export function cpuStageWords(mode: ModeResult): TermMeasured | null {
  const stage = cpuStageOf(mode);
  if (!stage) return null;
  const host = mode.role.kind === 'overlapped' ? mode.role.layout.host : undefined;
  return {
    limits: {
      why: `the host stage's ${stage.tasksPerRep} tasks of ${formatMs(stage.taskMedianMs)} on ${stage.workers} workers take longer than the GPU's side`,
      fix: { code: 'workers', change: 'use more workers (host.workers) or a cheaper function', term: 'CPU stage' },
    },
    // What it leaves out is the hand-over of each chunk to its worker, not the stage.
    leavesOut: `the host stage ${host}'s hand-overs and contention, which the CPU-stage term leaves out (it counts the tasks' own time)`,
    timing: "for a mode with a host stage the later of its end event and its last CPU task's end (host clock)",
    statistic: "the CPU stage from this layout's own tasks",
  };
}
