import { quantile } from '../quantile.js';
import { type Measured, tooFew } from './rule.js';

/**
 * Statistics of interleaved reps, A's rep i paired with B's rep i. Each pair gives one log ratio ln(B_i / A_i), so
 * whatever drifted between pairs (clocks, temperature, the host's load) cancels within a pair; the estimate is the
 * median of those log ratios and its interval the sign test's (distribution-free, exact, no resampling: the same
 * samples always give the same answer). Working in logs keeps A against B the mirror of B against A. rule.ts judges
 * the interval.
 */
export interface PairedEstimate {
  readonly pairs: number;
  /** exp(median log ratio): B's time over A's, the typical pair. */
  readonly ratio: number;
  /** The sign test's interval of the median ratio at the rule's confidence; null below the pairs it needs. */
  readonly low: number | null;
  readonly high: number | null;
  /** 1.4826 · MAD of the log ratios: the relative noise of one pair, both sides' noise together (shown, not judged). */
  readonly noise: number;
}

const MAD_TO_SIGMA = 1.4826;

/** The per-pair log ratios ln b_i − ln a_i of the pairs both sides have: exactly negated when A and B swap. */
export function logRatios(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.min(a.length, b.length);
  return Array.from({ length: n }, (_, i) => Math.log(b[i] as number) - Math.log(a[i] as number));
}

/**
 * The sign test's interval for a median from n sorted samples: the k-th smallest to the k-th largest, with k the
 * largest rank that leaves at most (1 − confidence) / 2 of Binomial(n, ½) below it on each side. Null when n is too
 * small for any (5 samples at 90%, 6 at 95%).
 */
export function signTestRanks(n: number, confidence: number): number | null {
  const tail = (1 - confidence) / 2;
  let logChoose = 0;
  let below = 0;
  let k = 0;
  // below = P(X ≤ j) for X ~ Binomial(n, ½), summed term by term in logs so that 2^-n never underflows to 0 early.
  for (let j = 0; j < n; j++) {
    if (j > 0) logChoose += Math.log((n - j + 1) / j);
    below += Math.exp(logChoose - n * Math.LN2);
    if (below > tail) break;
    k = j + 1;
  }
  return k >= 1 ? k : null;
}

export function pairedEstimate(logs: readonly number[], confidence: number): PairedEstimate {
  const sorted = [...logs].sort((x, y) => x - y);
  const n = sorted.length;
  const middle = quantile(sorted, 0.5);
  const k = signTestRanks(n, confidence);
  const deviations = sorted.map((x) => Math.abs(x - middle)).sort((x, y) => x - y);
  return {
    pairs: n,
    ratio: Math.exp(middle),
    low: k === null ? null : Math.exp(sorted[k - 1] as number),
    high: k === null ? null : Math.exp(sorted[n - k] as number),
    noise: n > 1 ? MAD_TO_SIGMA * quantile(deviations, 0.5) : Number.POSITIVE_INFINITY,
  };
}

/** The estimate as the rule reads it: its interval in logs, or why there is none. */
export function pairedMeasured(estimate: PairedEstimate, confidence: number): Measured {
  const { low, high, ratio } = estimate;
  if (low === null || high === null || !Number.isFinite(Math.log(ratio)))
    return tooFew(`${estimate.pairs} pairs`, confidence);
  return { interval: { estimate: Math.log(ratio), low: Math.log(low), high: Math.log(high) }, reason: null };
}
