import type { RunResult } from '../../result/schema.js';
import type { RunExporter } from '../exporter.js';
import { modeInterval, modeMetrics } from './metrics.js';

const NS_PER_MS = 1e6;

/**
 * Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format/): one benchmark per compared mode,
 * its `latency` measure in nanoseconds, Bencher's unit for it: the median, with the quartiles as lower and upper
 * values. `bencher run --adapter json --file results.bmf.json` reads it.
 */
export function renderBmf(results: readonly RunResult[]): string {
  const document: Record<string, { latency: { value: number; lower_value: number; upper_value: number } }> = {};
  for (const { name, mode } of modeMetrics(results)) {
    const { lowMs, highMs } = modeInterval(mode);
    document[name] = {
      latency: {
        value: mode.stats.median * NS_PER_MS,
        lower_value: lowMs * NS_PER_MS,
        upper_value: highMs * NS_PER_MS,
      },
    };
  }
  return JSON.stringify(document, null, 2);
}

export const bmfExporter: RunExporter = {
  description: 'Bencher Metric Format: latency in ns per mode, for bencher.dev',
  render: renderBmf,
};
