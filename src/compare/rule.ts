import type { z } from 'zod';
import { formatPercent } from '../format.js';
import type { ChangeRangeSchema, OverallVerdictSchema, VerdictRuleSchema, VerdictSchema } from '../result/verdict.js';

// The one verdict rule of cuda-pipe. `compare`, `ab`, the perf gate (scripts/perf-regression, which runs those two)
// and `analyze A B --ab` all judge B against A here, from one interval of the change ln(B/A):
//
// - `same`   when the whole interval lies inside the equivalence band ±δ: the change is shown to be small. With the
//            90% interval this is TOST, two one-sided tests at α = 5% (Schuirmann, 1987).
// - `slower` when the whole interval lies above no change (a one-sided test at α = 5%) and the estimate reaches
//            +δ: the change is both real and large enough to matter. `faster` is the mirror.
// - `noisy`  otherwise: the interval is too wide to show either. So is a pair with too few samples for any interval.
//
// δ is a fixed band, stated in every view and document; `--threshold` sets it. It is never widened by the noise:
// noisy samples give a wide interval, and a wide interval can only read `noisy`, never an easier `same`. The band is
// taken in logs (B/A between 1/(1+δ) and 1+δ), so swapping A and B swaps `slower` and `faster` and keeps `same` and
// `noisy`, and scaling both sides by one constant changes nothing (to rounding).
//
// The interval depends on how the samples were taken: two independent runs (compare, analyze --ab) give the
// Hodges–Lehmann shift of log times with its Moses interval (shift.ts); interleaved pairs (ab) the median log ratio
// with the sign test's interval (paired.ts). Both are distribution-free and deterministic.

export type Verdict = z.infer<typeof VerdictSchema>;

/** A whole comparison's verdict, from its gating pairs: see `overallVerdict`. */
export type OverallVerdict = z.infer<typeof OverallVerdictSchema>;

/** Every verdict reads one 90% interval: TOST at α = 5% for `same`, a one-sided test at 5% for `slower`/`faster`. */
export const VERDICT_CONFIDENCE = 0.9;

/**
 * The default band for two separate runs: a change under 1% is nothing to act on, and runs on one machine minutes
 * apart agree to within it (docs/measurements/2026-11-23-h200-issues15-16/verdicts/).
 */
export const SEPARATE_RUNS_BAND = 0.01;
/**
 * The default band for interleaved pairs: they cancel the drift between runs, so a 1% heavier kernel must still
 * read `slower` (it did in 10 of 10 rounds on the H200, same folder). Modes that only copy take the separate runs'
 * band instead (`pairedBandFor`): A and B copy to and from host buffers of their own, and on two H200s one config
 * against itself read 0.6% faster H2D and 0.8% faster both ways at once on B's buffers, pairs that interleaving
 * does not make alike (docs/measurements/2026-11-28-h200x2-validation/).
 */
export const PAIRED_BAND = 0.005;

/** The band an interleaved mode is judged by: the rule's, except the default for a mode that runs no kernel. */
export function pairedBandFor(rule: Pick<VerdictRule, 'band'>, runsKernels: boolean): number {
  return !runsKernels && rule.band === PAIRED_BAND ? SEPARATE_RUNS_BAND : rule.band;
}

/** δ (a fraction: B/A inside 1/(1+δ) … 1+δ is the band of `same`), the confidence, and how the interval is made. */
export type VerdictRule = Readonly<z.infer<typeof VerdictRuleSchema>>;
export type IntervalMethod = VerdictRule['interval'];

export const separateRunsRule = (band = SEPARATE_RUNS_BAND): VerdictRule => ({
  band,
  confidence: VERDICT_CONFIDENCE,
  interval: 'hodges-lehmann',
});
export const pairedRule = (band = PAIRED_BAND): VerdictRule => ({
  band,
  confidence: VERDICT_CONFIDENCE,
  interval: 'sign-test',
});

/** An estimate of ln(B/A) and its interval. */
export interface ChangeInterval {
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
}

/** What an interval method made of the samples: the interval, or why there is none. */
export type Measured =
  | { readonly interval: ChangeInterval; readonly reason: null }
  | { readonly interval: null; readonly reason: string };

export const tooFew = (what: string, confidence: number): Measured => ({
  interval: null,
  reason: `${what}: too few for a ${formatPercent(confidence, 0)} interval`,
});

/** The verdict the rule gives an interval (none: `noisy`). */
export function judge(measured: Measured, rule: Pick<VerdictRule, 'band'>): Verdict {
  const { interval } = measured;
  if (!interval) return 'noisy';
  const edge = Math.log1p(rule.band);
  if (interval.low > 0 && interval.estimate >= edge) return 'slower';
  if (interval.high < 0 && interval.estimate <= -edge) return 'faster';
  if (interval.low > -edge && interval.high < edge) return 'same';
  return 'noisy';
}

/** B/A − 1 for a log ratio: what a view prints as the change. */
const asChange = (logRatio: number): number => Math.expm1(logRatio);

/** The interval as changes (B/A − 1), as the documents store it. */
export type ChangeRange = Readonly<z.infer<typeof ChangeRangeSchema>>;

export const asRange = (interval: ChangeInterval): ChangeRange => ({
  estimate: asChange(interval.estimate),
  low: asChange(interval.low),
  high: asChange(interval.high),
});

const signed = (fraction: number) => `${fraction >= 0 ? '+' : '-'}${formatPercent(Math.abs(fraction), 1)}`;

/** Why a pair got its verdict, in one line: the interval against the band. */
export function verdictReason(measured: Measured, rule: VerdictRule, verdict: Verdict): string {
  if (!measured.interval) return measured.reason;
  const range = asRange(measured.interval);
  const shown = `B/A ${signed(range.estimate)} (${formatPercent(rule.confidence, 0)} interval ${signed(range.low)} to ${signed(range.high)})`;
  const band = `±${formatPercent(rule.band, 1)}`;
  switch (verdict) {
    case 'same':
      return `${shown}: inside the ${band} band`;
    case 'slower':
    case 'faster':
      return `${shown}: clear of no change, the estimate past the ${band} band`;
    default:
      return `${shown}: neither inside the ${band} band nor a change past it`;
  }
}

/**
 * A verdict in time stands only where clock-normalised time (time × SM clock, the cycles the work took) agrees, as
 * in nvbench's robust compare. `slower` or `faster` in time and `same` in cycles: the clocks explain the change, and
 * the verdict is `same`. Any other disagreement is `noisy`. `same` and `noisy` in time stand as they are.
 */
export function confirmWithClocks(time: Verdict, cycles: Verdict | null): { verdict: Verdict; clocksExplain: boolean } {
  if (cycles === null || time === 'same' || time === 'noisy' || cycles === time)
    return { verdict: time, clocksExplain: false };
  if (cycles === 'same') return { verdict: 'same', clocksExplain: true };
  return { verdict: 'noisy', clocksExplain: false };
}

/**
 * One verdict for a whole comparison, from its gating pairs (the modes a user acts on): `mixed` when some are
 * slower and some faster; else `slower` when any is slower (the gate fails); else `faster` when any is faster (some
 * may still be noisy); else `noisy` when any is noisy, or when there is no gating pair to judge; else `same`.
 */
export function overallVerdict(verdicts: readonly Verdict[]): OverallVerdict {
  const has = (v: Verdict) => verdicts.includes(v);
  if (has('slower') && has('faster')) return 'mixed';
  if (has('slower')) return 'slower';
  if (has('faster')) return 'faster';
  if (has('noisy') || !verdicts.length) return 'noisy';
  return 'same';
}

/** Whether a comparison's verdict fails the gate (exit 1). */
export const isRegression = (verdict: OverallVerdict): boolean => verdict === 'slower' || verdict === 'mixed';

const METHOD_WORDS: Record<IntervalMethod, string> = {
  'hodges-lehmann': "the Hodges–Lehmann shift of the two runs' log times, Moses' interval",
  'sign-test': "the median of the pairs' log ratios ln(Bᵢ/Aᵢ), the sign test's interval",
};

/** The rule in words, as every view's footer states it. */
export function ruleWords(rule: VerdictRule): string {
  const band = `±${formatPercent(rule.band, 1)}`;
  return (
    `Verdicts read one ${formatPercent(rule.confidence, 0)} interval of B/A (${METHOD_WORDS[rule.interval]}): ` +
    `same when the whole interval lies inside the ${band} band (an equivalence test, TOST at 5%); slower or faster ` +
    `when it is clear of no change and the estimate passes ${band}; otherwise noisy. The band is fixed (--threshold ` +
    'sets it), never widened by the noise.'
  );
}

/** What to do about a noisy verdict. */
export const NOISY_ADVICE =
  'noisy means the interval is too wide to show a change or its absence: take more reps, or measure on a quieter host';
