// Every percentile cuda-pipe computes comes from here. The one definition is R-7 (NumPy's and R's default): the value
// at (n − 1)·q in the sorted values, interpolated between its neighbours. Saved Results hold medians and quartiles by
// it, and result/validate.ts checks them against their samples, so it cannot change. The one exception is a latency mode's p99,
// which Results have recorded by nearest rank since the mode was added: its samples are not saved, so those values
// cannot be recomputed, and until it moves to R-7 it stays as they were written.

/** Linear-interpolated quantile of sorted values; NaN for none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const a = sorted[low] as number;
  const b = sorted[high] as number;
  return a + (b - a) * (position - low);
}

/** The median of values in any order; NaN for none. */
export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** The smallest sorted value with at least q of the values at or below it (nearest rank, R-1); NaN for none. */
export function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
