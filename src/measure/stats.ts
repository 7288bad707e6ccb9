import { median, quantile } from '../quantile.js';
import type { Stats } from '../model/mode.js';

const MODIFIED_Z_LIMIT = 3.5;
/** MAD × 1.4826 estimates the standard deviation of normally distributed samples. */
const MAD_TO_SIGMA = 1.4826;

function medianAbsoluteDeviation(samples: readonly number[], median: number): number {
  return quantile(
    samples.map((x) => Math.abs(x - median)).sort((a, b) => a - b),
    0.5,
  );
}

/**
 * Relative noise around the median: 1.4826 · MAD / median, the median-based counterpart of stdev / mean. Unlike
 * stdev it is not dragged up by a few far samples, which are flagged as outliers instead.
 */
export function relativeMadNoise(samples: readonly number[]): number {
  if (samples.length < 2) return Number.POSITIVE_INFINITY;
  const middle = median(samples);
  return middle > 0 ? (MAD_TO_SIGMA * medianAbsoluteDeviation(samples, middle)) / middle : 0;
}

/** Standard error of the median, relative to it: √(π/2) · σ / √n with σ from the MAD. */
export function relativeMedianError(stats: Pick<Stats, 'n' | 'relativeNoise'>): number {
  return stats.n > 1 ? (Math.sqrt(Math.PI / 2) * stats.relativeNoise) / Math.sqrt(stats.n) : Number.POSITIVE_INFINITY;
}

/** Every statistic cuda-pipe reports for one timed quantity, in one place. */
export function summarize(samples: readonly number[]): Stats {
  const n = samples.length;
  if (n === 0) throw new RangeError('summarize needs at least one sample');
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, x) => sum + x, 0) / n;
  const variance = n > 1 ? samples.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (n - 1) : 0;
  const stdev = Math.sqrt(variance);
  const median = quantile(sorted, 0.5);
  const q1 = quantile(sorted, 0.25);
  const q3 = quantile(sorted, 0.75);
  return {
    n,
    median,
    mean,
    min: sorted[0] as number,
    max: sorted[n - 1] as number,
    stdev,
    q1,
    q3,
    iqr: q3 - q1,
    relativeStdev: mean > 0 ? stdev / mean : 0,
    relativeNoise: n > 1 ? relativeMadNoise(samples) : 0,
    outliers: outlierIndexes(samples, median),
  };
}

/** Iglewicz–Hoaglin modified z-score: 0.6745 · (x − median) / MAD above 3.5 flags an outlier. */
export function outlierIndexes(samples: readonly number[], median: number): number[] {
  const mad = medianAbsoluteDeviation(samples, median);
  if (mad === 0) return [];
  return samples.flatMap((x, i) => (Math.abs((0.6745 * (x - median)) / mad) > MODIFIED_Z_LIMIT ? [i] : []));
}
