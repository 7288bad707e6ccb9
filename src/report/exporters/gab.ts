import type { RunResult } from '../../result/schema.js';
import type { RunExporter } from '../exporter.js';
import { modeLabel } from '../labels.js';
import { modeInterval, modeMetrics } from './metrics.js';

/** One entry of github-action-benchmark's `customSmallerIsBetter` input. */
export interface GabEntry {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly range: string;
  readonly extra: string;
}

/**
 * github-action-benchmark's `customSmallerIsBetter` array
 * (https://github.com/benchmark-action/github-action-benchmark):
 * one entry per compared mode, its median in ms, `range` as ± half the quartiles' distance (the action shows it as
 * given), and the mode's label and rep count as `extra`, shown in the chart's tooltip.
 */
export function gabEntries(results: readonly RunResult[]): GabEntry[] {
  return modeMetrics(results).map(({ name, result, mode }) => {
    const { lowMs, highMs } = modeInterval(mode);
    return {
      name,
      unit: 'ms',
      value: mode.stats.median,
      range: `±${((highMs - lowMs) / 2).toPrecision(3)}`,
      extra: `${modeLabel(mode, result)}; ${mode.stats.n} reps on ${result.devices.find((d) => d.index === mode.device)?.name ?? `device ${mode.device}`}`,
    };
  });
}

export const gabExporter: RunExporter = {
  description: "github-action-benchmark's customSmallerIsBetter array, ms per mode",
  render: (results) => JSON.stringify(gabEntries(results), null, 2),
};
