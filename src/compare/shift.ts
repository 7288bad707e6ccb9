import { type ChangeInterval, type Measured, tooFew } from './rule.js';

// The interval of the change between two independent runs, for `compare` and `analyze --ab`: the shift of log
// times from A to B, estimated by Hodges–Lehmann (the median of every difference ln bⱼ − ln aᵢ) with the Moses
// interval (the k-th smallest to the k-th largest of those differences, k from the Mann–Whitney distribution). It is
// distribution-free (no normality: GPU times are skewed and have outliers), needs no resampling (the same samples
// always give the same interval), and on logs it is symmetric: A against B is exactly the mirror of B against A,
// and scaling both sides by one constant changes nothing (to rounding).

/** Below these sizes (both sides) the Mann–Whitney distribution is counted exactly, as R's wilcox.test does. */
const EXACT_BELOW = 50;

/**
 * The rank k of the Moses interval at `confidence`: the largest k with P(U ≤ k − 1) ≤ (1 − confidence) / 2 for the
 * Mann–Whitney U of sizes m and n under no shift; null where even k = 1 is too wide (too few samples: at 90%, 3
 * and 3, 2 and 5, or 1 and 19). Exact below 50 samples a side; above, the normal approximation with continuity
 * correction. Ties between samples (times read to the event timer's resolution) make the exact count approximate.
 */
export function mosesRank(m: number, n: number, confidence: number): number | null {
  if (m < 1 || n < 1) return null;
  const tail = (1 - confidence) / 2;
  if (m < EXACT_BELOW && n < EXACT_BELOW) {
    const cumulative = lowerTail(m, n);
    // A tail of exactly (1 − confidence) / 2 qualifies (3 and 3 samples: 1/20 at 90%), though 1 − 0.9 rounds below 0.1.
    const limit = tail * (1 + 1e-9);
    let k = 0;
    while (k < cumulative.length && (cumulative[k] as number) <= limit) k++;
    return k >= 1 ? k : null;
  }
  const z = normalQuantile(1 - tail);
  const k = Math.floor((m * n) / 2 - z * Math.sqrt((m * n * (m + n + 1)) / 12) + 0.5);
  return k >= 1 ? k : null;
}

const tails = new Map<string, Float64Array>();

/**
 * P(U ≤ c) for c = 0 … ⌊mn/2⌋, with U the Mann–Whitney count of (aᵢ, bⱼ) pairs in order, for sizes m and n with
 * no shift, over the lower half only: an interval's tail never reaches past the middle. The number of orderings with
 * U = u is the coefficient of qᵘ in the Gaussian binomial [m+n choose m], built one factor at a time as
 * [n+i choose i] = [n+i−1 choose i−1]·(1 − qⁿ⁺ⁱ)/(1 − qⁱ): O(m·mn) steps, where the recurrence over both sizes took
 * O(m·n·mn), which was most of what `compare` computed at its start. Each list between factors is a Gaussian
 * binomial's, its counts positive and none above the last list's at the same U, so rounding stays at double
 * precision; the counts pass 2⁵³ and are divided by C(m+n, m) last (both ways timed and compared:
 * docs/measurements/2026-11-29-compare-start/).
 */
function lowerTail(m: number, n: number): Float64Array {
  const [small, large] = m <= n ? [m, n] : [n, m];
  const key = `${small},${large}`;
  const cached = tails.get(key);
  if (cached) return cached;
  const top = Math.floor((small * large) / 2);
  const counts = new Float64Array(top + 1);
  counts[0] = 1;
  let orderings = 1;
  for (let i = 1; i <= small; i++) {
    const rise = large + i;
    // × (1 − q^rise), descending so that counts[u − rise] is still the factor before; ÷ (1 − qⁱ), ascending.
    for (let u = top; u >= rise; u--) counts[u] = (counts[u] as number) - (counts[u - rise] as number);
    for (let u = i; u <= top; u++) counts[u] = (counts[u] as number) + (counts[u - i] as number);
    orderings = (orderings * rise) / i;
  }
  const cumulative = new Float64Array(top + 1);
  let sum = 0;
  for (let u = 0; u <= top; u++) {
    sum += counts[u] as number;
    cumulative[u] = sum / orderings;
  }
  tails.set(key, cumulative);
  return cumulative;
}

/** Acklam's rational approximation of the standard normal quantile (relative error under 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155211218];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const poly = (k: readonly number[], x: number) => k.reduce((acc, v) => acc * x + v, 0);
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - 0.02425) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

/**
 * The k-th smallest (1-based) of the m·n differences y − x, x from `xs` and y from `ys`, both sorted ascending, in
 * O(m + n) memory: runs of thousands of reps would need millions of differences held and sorted. Bisection on the
 * value keeps count(lo) < k ≤ count(hi) until at most m + n differences lie between them, which are then sorted.
 * Bisecting on to adjacent doubles took 57 passes over the samples a rank, on the modes of two recorded H100 Results,
 * where this takes 6 (docs/measurements/2026-11-29-compare-start/). Where ties keep more than m + n differences
 * between lo and hi down to adjacent doubles, every one of them is hi.
 */
export function kthDifference(xs: readonly number[], ys: readonly number[], k: number): number {
  const [m, n] = [xs.length, ys.length];
  // How many differences are at most v: ys[j] − xs[i] rises with j and falls with i, so as i rises more j qualify,
  // and one pass of two pointers counts them.
  const count = (v: number) => {
    let total = 0;
    let j = 0;
    for (let i = 0; i < m; i++) {
      const x = xs[i] as number;
      while (j < n && (ys[j] as number) - x <= v) j++;
      total += j;
    }
    return total;
  };
  let lo = (ys[0] as number) - (xs[m - 1] as number);
  let [atLo, atHi] = [count(lo), m * n];
  if (atLo >= k) return lo;
  let hi = (ys[n - 1] as number) - (xs[0] as number);
  while (atHi - atLo > m + n) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) return hi;
    const atMid = count(mid);
    if (atMid >= k) [hi, atHi] = [mid, atMid];
    else [lo, atLo] = [mid, atMid];
  }
  // The differences in (lo, hi], listed in one pass with a pointer for each bound: for each x, the ys past lo and
  // not past hi.
  const between: number[] = [];
  let [pastLo, pastHi] = [0, 0];
  for (let i = 0; i < m; i++) {
    const x = xs[i] as number;
    while (pastLo < n && (ys[pastLo] as number) - x <= lo) pastLo++;
    while (pastHi < n && (ys[pastHi] as number) - x <= hi) pastHi++;
    for (let j = pastLo; j < pastHi; j++) between.push((ys[j] as number) - x);
  }
  return between.sort((p, q) => p - q)[k - atLo - 1] as number;
}

/**
 * B's times against A's, two independent runs: the Hodges–Lehmann shift of log times and its Moses interval at
 * `confidence`, or why there is none (too few samples, or a time that is not positive).
 */
export function shiftInterval(a: readonly number[], b: readonly number[], confidence: number): Measured {
  if (![...a, ...b].every((t) => t > 0 && Number.isFinite(t)))
    return { interval: null, reason: 'a time that is not positive and finite: no interval' };
  const k = mosesRank(a.length, b.length, confidence);
  if (k === null) return tooFew(`${a.length} and ${b.length} samples`, confidence);
  const ascending = (xs: readonly number[]) => xs.map(Math.log).sort((x, y) => x - y);
  const [la, lb] = [ascending(a), ascending(b)];
  const at = (rank: number) => kthDifference(la, lb, rank);
  const count = la.length * lb.length;
  const middle = count % 2 ? at((count + 1) / 2) : (at(count / 2) + at(count / 2 + 1)) / 2;
  const interval: ChangeInterval = { estimate: middle, low: at(k), high: at(count - k + 1) };
  return { interval, reason: null };
}
