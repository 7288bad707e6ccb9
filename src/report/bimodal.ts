import { bimodal, rankedMs } from '../bimodal.js';
import { formatMs } from '../format.js';
import { isPictured } from '../modes.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import { layoutWords, roleLabel } from './labels.js';

// What a report says of a mode whose reps form two clusters (src/bimodal.ts), drawn from its recorded reps whenever a
// Result is rendered, so a Result recorded before the rule gets the words too.

/** "32 buckets is bimodal: 35 of 97 reps near 4.471 ms, 62 near 5.289 ms", or null for a steady mode. */
export function bimodalText(mode: ModeResult, split = bimodal(mode.samplesMs)): string | null {
  if (!split) return null;
  const name = mode.role.kind === 'overlapped' ? layoutWords(mode) : roleLabel(mode.role);
  const fast = `${split.fast.n} of ${mode.samplesMs.length} reps near ${formatMs(split.fast.median)}`;
  const reps = `${fast}, ${split.slow.n} near ${formatMs(split.slow.median)}`;
  return `${name} is bimodal: ${reps}`;
}

/** `run`'s summary: each mode a user acts on (serial, the layouts, the pictured modes) whose reps form two clusters. */
export function runBimodalLines(result: RunResult): string[] {
  return result.modes.flatMap((mode) => {
    const text = mode.role.kind === 'serial' || isPictured(mode.role) ? bimodalText(mode) : null;
    return text ? [`${text}; a run gets either, so its median is no figure to pick it by`] : [];
  });
}

/**
 * A sweep's words beside its best: every raced layout whose reps form two clusters and whose faster cluster beats the
 * best's time, each ranked at its slower cluster's median (measure/sweep.ts's `bestOfSweep`).
 */
export function sweepBimodalLines(result: RunResult, best: ModeResult): string[] {
  const bestAt = rankedMs(best.samplesMs, best.stats.median);
  return (result.sweep?.points ?? []).flatMap((point) => {
    const mode = result.modes.find((m) => m.id === point.mode);
    const split = mode ? bimodal(mode.samplesMs) : null;
    const text = mode ? bimodalText(mode, split) : null;
    if (!split || !text || split.fast.median >= bestAt) return [];
    return [`${text}; ranked at ${formatMs(split.slow.median)}, what a bad run gets`];
  });
}
