// Every percentile cuda-pipe computes comes from here, by one definition: R-7 (NumPy's and R's default), the value at
// (n − 1)·q in the sorted values, interpolated between its neighbours. Saved Results hold medians and quartiles by it,
// and result/validate.ts checks them against their samples. A latency mode's p99 follows it too; Results written
// before 2026-11-26 recorded that one by nearest rank, and keep the value they were written with (its samples are not
// saved, so nothing recomputes it).

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
