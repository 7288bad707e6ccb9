import { quantile } from './quantile.js';

// Whether a mode's timed reps fall in two separate clusters: a layout that takes about 4.39 ms on some reps and about
// 5.28 ms on others, both inside one run (32 buckets over four H200s, docs/measurements/2026-11-28-h200x4-ddp-knobs/).
// Such a layout's median is whichever cluster held more reps this time, so it is no figure to pick a layout by.
//
// The rule, on the reps sorted:
// - The split is the widest gap between neighbours among the splits that leave each side at least MIN_SHARE of the
//   reps and at least MIN_SIDE of them. Fewer far reps are outliers (stats.ts flags them), never a cluster. A tenth
//   is enough: the median and the middle half are then still the fast cluster's, but a layout that takes 5.28 ms on
//   one rep in seven is no best layout, and with a fifth 21 of 200 replayed sweeps still picked one that did so on a
//   quarter of its reps (docs/measurements/2026-11-28-sweep-leader/).
// - It is two clusters only when that gap is empty space, wide against both:
//   - the spread inside each side (σ from the MAD, or from the IQR where that is larger: the MAD of three reps can be
//     near zero): the gap is at least GAP_SPREADS σ of the wider side, and the medians lie at least SEPARATION times
//     the two sides' σ together apart. Normal noise leaves no such gap inside its middle four fifths (for ten reps
//     the widest there is about one σ, and it narrows as reps are added); a split of one hump has medians about 1.3 to
//     1.8 of those σ apart. 32 buckets on four H200s, the case that made the rule, has a gap of 4.9 σ and its medians
//     9.9 σ apart over 97 reps, 15 σ and 26 σ over 230.
//   - the smallest change the tool reports: the gap is at least `band` of the fast side's median (compare's
//     SEPARATE_RUNS_BAND, 1%, by default), so reps that bunch on the timer's ticks never make clusters.
// Every test is on the sorted values and on ratios of them, so neither the order of the reps nor their unit changes it.

/** Each side holds at least this share of the reps, */
export const MIN_SHARE = 0.1;
/** and at least this many: two reps apart from the rest are outliers, not a mode. */
export const MIN_SIDE = 3;
/** The empty gap, in robust σ of the wider side. */
export const GAP_SPREADS = 4;
/** The distance between the sides' medians, in their σ summed. */
export const SEPARATION = 4;
/** The change `compare` calls a change between two runs (SEPARATE_RUNS_BAND), which the empty gap must exceed. */
export const CHANGE_BAND = 0.01;

const MAD_TO_SIGMA = 1.4826;
const IQR_TO_SIGMA = 1.349;

/** One cluster of reps: how many, and their median. */
export interface Cluster {
  readonly n: number;
  readonly median: number;
}

/** Two clusters of a mode's reps, the faster first. */
export interface Bimodal {
  readonly fast: Cluster;
  readonly slow: Cluster;
}

/** A robust σ of sorted values: from the MAD or the IQR, whichever is larger. */
function spread(sorted: readonly number[]): number {
  const middle = quantile(sorted, 0.5);
  const deviations = sorted.map((x) => Math.abs(x - middle)).sort((a, b) => a - b);
  const iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25);
  return Math.max(MAD_TO_SIGMA * quantile(deviations, 0.5), iqr / IQR_TO_SIGMA);
}

/** The two clusters the reps form, or null where they form one (see the rule above). `band`: compare's. */
export function bimodal(samples: readonly number[], band = CHANGE_BAND): Bimodal | null {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const side = Math.max(MIN_SIDE, Math.ceil(MIN_SHARE * n));
  const gapBelow = (k: number) => (sorted[k] as number) - (sorted[k - 1] as number);
  let cut = -1;
  for (let k = side; k <= n - side; k++) if (cut < 0 || gapBelow(k) > gapBelow(cut)) cut = k;
  if (cut < 0) return null;
  const fast = sorted.slice(0, cut);
  const slow = sorted.slice(cut);
  const gap = gapBelow(cut);
  const [fastMedian, slowMedian] = [quantile(fast, 0.5), quantile(slow, 0.5)];
  const [fastSpread, slowSpread] = [spread(fast), spread(slow)];
  const apart = slowMedian - fastMedian >= SEPARATION * (fastSpread + slowSpread);
  const empty = gap >= band * fastMedian && gap >= GAP_SPREADS * Math.max(fastSpread, slowSpread);
  const clear = empty && apart;
  return clear ? { fast: { n: fast.length, median: fastMedian }, slow: { n: slow.length, median: slowMedian } } : null;
}

/**
 * How many reps lie far above the rest: beyond the gap that would part two clusters (GAP_SPREADS robust σ above the
 * median, and at least `band` of it). A few such reps are no cluster yet, but a race that stops a layout on its noise
 * while it has one may be looking at the first reps of a slower mode (sweep.ts runs such a leader on).
 */
export function farAbove(samples: readonly number[], band = CHANGE_BAND): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = quantile(sorted, 0.5);
  const limit = median + Math.max(GAP_SPREADS * spread(sorted), band * median);
  return sorted.filter((x) => x > limit).length;
}

/**
 * The time a layout is ranked by: its median, or for one whose reps form two clusters, the slower cluster's median,
 * which is what a user can get on a bad run.
 */
export function rankedMs(samples: readonly number[], median: number): number {
  return bimodal(samples)?.slow.median ?? median;
}

/**
 * Where a layout stands, in the race and in the pick alike. It is ranked at its median, or at the slower cluster's
 * median where its reps form two (see `bimodal`). It is judged at that time or its third quartile, whichever is later:
 * another layout is clearly slower only when its middle half lies above the best's, and above what the best gives on
 * a bad run.
 */
export function standing(samples: readonly number[], stats: { readonly median: number; readonly q3: number }) {
  const split = bimodal(samples);
  const at = split?.slow.median ?? stats.median;
  return { split, at, judgedAt: Math.max(stats.q3, at) };
}

/** Something measured in reps: a sweep's layout, or the best layout of one of its settings. */
export interface Measured {
  readonly samplesMs: readonly number[];
  readonly stats: { readonly median: number; readonly q1: number; readonly q3: number };
}

/**
 * The fastest of several measured alternatives, and those that tie with it within noise: ranked by `standing`, the
 * ties are the steady ones whose middle half reaches the best's (q1 at or below its third quartile, or its slower
 * cluster's median for a bimodal best). A bimodal one ties with none, as its median says nothing of the next run.
 */
export function fastestWithTies<T extends Measured>(items: readonly T[]): { best: T; ties: T[] } {
  const ranked = items.map((item) => ({ item, ...standing(item.samplesMs, item.stats) }));
  const best = ranked.reduce<(typeof ranked)[number] | null>((a, b) => (!a || b.at < a.at ? b : a), null);
  if (!best) throw new RangeError('nothing measured to pick the fastest of');
  const ties = ranked.filter((r) => r !== best && !r.split && r.item.stats.q1 <= best.judgedAt);
  return { best: best.item, ties: ties.map((r) => r.item) };
}
