import { quantile } from '../quantile.js';
import type { Verdict } from './verdict.js';

/**
 * Statistics of interleaved reps, A's rep i paired with B's rep i. Each pair gives one log ratio ln(B_i / A_i), so
 * whatever drifted between pairs (clocks, temperature, the host's load) cancels within a pair; the estimate is the
 * median of those log ratios and its interval the sign test's (distribution-free, exact, no resampling: the same
 * samples always give the same answer). Working in logs keeps A against B the mirror of B against A.
 */
export interface PairedEstimate {
  readonly pairs: number;
  /** exp(median log ratio): B's time over A's, the typical pair. */
  readonly ratio: number;
  /** The sign test's interval of the median ratio at `PAIRED_CONFIDENCE`; null below the pairs it needs. */
  readonly low: number | null;
  readonly high: number | null;
  /** 1.4826 · MAD of the log ratios: the relative noise of one pair, both sides' noise together. */
  readonly noise: number;
}

/** What the rule decides after some pairs: a verdict, or more pairs needed. */
export type PairedDecision = Exclude<Verdict, 'noisy'> | 'undecided';

export interface PairedRule {
  /** The smallest change that counts, however clean the pairs (a fraction: 0.005 is 0.5%). */
  readonly floor: number;
  /** A change must also be this many times the pairs' noise. */
  readonly multiple: number;
  /** A fixed threshold in place of floor and noise (`--threshold`); null for the noise rule. */
  readonly threshold: number | null;
}

export const PAIRED_CONFIDENCE = 0.95;
/** Interleaved pairs cancel the drift between runs that separate runs suffer, so a smaller change can count. */
export const PAIRED_RULE: PairedRule = { floor: 0.005, multiple: 3, threshold: null };
const MAD_TO_SIGMA = 1.4826;

/** The per-pair log ratios ln(b_i / a_i) of the pairs both sides have. */
export function logRatios(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.min(a.length, b.length);
  return Array.from({ length: n }, (_, i) => Math.log((b[i] as number) / (a[i] as number)));
}

/**
 * The sign test's interval for a median from n sorted samples: the k-th smallest to the k-th largest, with k the
 * largest rank that leaves at most (1 − confidence) / 2 of Binomial(n, ½) below it on each side. Null when n is too
 * small for any (6 samples at 95%).
 */
export function signTestRanks(n: number, confidence = PAIRED_CONFIDENCE): number | null {
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

export function pairedEstimate(logs: readonly number[]): PairedEstimate {
  const sorted = [...logs].sort((x, y) => x - y);
  const n = sorted.length;
  const middle = quantile(sorted, 0.5);
  const k = signTestRanks(n);
  const deviations = sorted.map((x) => Math.abs(x - middle)).sort((x, y) => x - y);
  return {
    pairs: n,
    ratio: Math.exp(middle),
    low: k === null ? null : Math.exp(sorted[k - 1] as number),
    high: k === null ? null : Math.exp(sorted[n - k] as number),
    noise: n > 1 ? MAD_TO_SIGMA * quantile(deviations, 0.5) : Number.POSITIVE_INFINITY,
  };
}

/** The change that counts for these pairs: the threshold, or the floor and a multiple of the noise, whichever is larger. */
export function pairedNeeded(estimate: Pick<PairedEstimate, 'noise'>, rule: PairedRule): number {
  return rule.threshold ?? Math.max(rule.floor, rule.multiple * estimate.noise);
}

/**
 * `slower` when the whole interval lies above no change and the median ratio is at least the change that counts;
 * `faster` the mirror; `same` when the whole interval lies within the change that counts either way; otherwise
 * more pairs are needed. A change can be real and still `same`: smaller than the floor or than the pairs' own
 * noise, it is nothing to act on.
 */
export function pairedDecision(estimate: PairedEstimate, rule: PairedRule): PairedDecision {
  const { low, high, ratio } = estimate;
  if (low === null || high === null || !Number.isFinite(estimate.noise)) return 'undecided';
  const limit = Math.log1p(pairedNeeded(estimate, rule));
  const [lo, mid, hi] = [Math.log(low), Math.log(ratio), Math.log(high)];
  if (lo > 0 && mid >= limit) return 'slower';
  if (hi < 0 && mid <= -limit) return 'faster';
  if (lo >= -limit && hi <= limit) return 'same';
  return 'undecided';
}

/**
 * A verdict in time stands only when clock-normalised time (time × SM clock, the cycles the work took) agrees, as in
 * nvbench's robust compare. When the clocks moved and normalised time says `same`, the clocks explain the change.
 * Without clock readings the verdict in time stands alone.
 */
export function confirmWithClocks(time: PairedDecision, clocks: PairedDecision | null): { decision: PairedDecision; clocksExplain: boolean } {
  if (clocks === null || time === 'same' || time === 'undecided') return { decision: time, clocksExplain: false };
  if (clocks === time) return { decision: time, clocksExplain: false };
  if (clocks === 'same') return { decision: 'same', clocksExplain: true };
  return { decision: 'undecided', clocksExplain: false };
}
