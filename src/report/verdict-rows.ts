import type { OverallVerdict, Verdict } from '../compare/rule.js';
import type { Comparison } from '../compare/verdict.js';
import type { AbResult } from '../result/ab.js';
import type { Stats } from '../model/mode.js';
import { abVerdict } from './ab.js';
import { roleLabel } from './labels.js';

// The verdicts of `compare` and `ab` as rows that every CI format writes alike (exporters/verdicts.ts: CSV, Bencher
// Metric Format, github-action-benchmark's array, JUnit XML), so that the gating verdict reaches a dashboard or a
// test report in the format it reads (issue 39).

/** One mode judged B against A. */
export interface VerdictRow {
  /** `config/mode-id`, as `run --bmf` and `--gab` name the mode (exporters/metrics.ts), B's config. */
  readonly name: string;
  readonly config: string;
  readonly mode: string;
  readonly label: string;
  readonly device: number;
  /** Whether the mode can fail the gate; the model's parts are judged for information. */
  readonly gating: boolean;
  readonly a: Pick<Stats, 'median' | 'q1' | 'q3' | 'n'>;
  readonly b: Pick<Stats, 'median' | 'q1' | 'q3' | 'n'>;
  /** B/A − 1: the estimate the verdict read, and its interval at the rule's confidence (null with too few samples). */
  readonly change: number;
  readonly low: number | null;
  readonly high: number | null;
  readonly verdict: Verdict;
  readonly reason: string;
  /**
   * The band δ this mode was judged by: compare's one band, or an A/B mode's own (`ab` keeps the separate runs' ±1%
   * for a mode that only copies, compare/rule.ts' pairedBandFor); null for a version 1 A/B document, judged by noise.
   */
  readonly band: number | null;
  /** How long the mode was measured, where the document says (an A/B document's interleaved reps). */
  readonly elapsedMs: number | null;
}

/** A whole comparison: what was judged against what, its one verdict and its rows. */
export interface VerdictSuite {
  readonly command: 'compare' | 'ab';
  readonly title: string;
  readonly verdict: OverallVerdict;
  /** The interval's confidence, for the words beside each verdict. */
  readonly confidence: number;
  readonly createdAt: string | null;
  readonly rows: readonly VerdictRow[];
}

/**
 * A pair's config as compare names it (`balanced rank 1`), as a dashboard's name (`balanced@rank1`), as run's exports.
 */
const dashboardConfig = (config: string) => config.replace(/ rank (\d+)$/, '@rank$1');

export function compareSuite(comparison: Comparison): VerdictSuite {
  const several = new Set(comparison.pairs.map((p) => p.device)).size > 1;
  return {
    command: 'compare',
    title: `cuda-pipe compare: ${[...new Set(comparison.pairs.map((p) => p.config))].join(', ')}`,
    verdict: comparison.verdict,
    confidence: comparison.rule.confidence,
    createdAt: null,
    rows: comparison.pairs.map((p) => ({
      name: `${dashboardConfig(p.config)}/${p.mode}`,
      config: p.config,
      mode: p.mode,
      label: roleLabel(p.role, several ? p.device : null),
      device: p.device,
      gating: p.gating,
      a: p.baseline,
      b: p.candidate,
      change: p.interval?.estimate ?? p.change,
      low: p.interval?.low ?? null,
      high: p.interval?.high ?? null,
      verdict: p.verdict,
      reason: p.reason,
      band: comparison.rule.band,
      elapsedMs: null,
    })),
  };
}

export function abSuite(result: AbResult): VerdictSuite {
  return {
    command: 'ab',
    title: `cuda-pipe ab: A ${result.a.name} against B ${result.b.name} on ${result.device.name}`,
    verdict: abVerdict(result),
    confidence: result.rule.confidence,
    createdAt: result.createdAt,
    rows: result.modes.map((m) => ({
      name: `${result.b.name}/${m.id}`,
      config: result.b.name,
      mode: m.id,
      label: roleLabel(m.role),
      device: result.device.index,
      gating: m.gating,
      a: m.a,
      b: m.b,
      change: m.change,
      low: m.time.low === null ? null : m.time.low - 1,
      high: m.time.high === null ? null : m.time.high - 1,
      verdict: m.verdict,
      // Version 1 documents gave no reason: their verdicts came from the noise rule of the day (report/ab.ts'
      // abRuleText).
      reason: m.reason ?? 'judged by the noise rule of version 1 A/B documents',
      // Version 2's `needed` is the mode's own band; version 1's was the change its noise rule asked for.
      band: 'band' in result.rule ? m.needed : null,
      elapsedMs: m.elapsedMs,
    })),
  };
}
