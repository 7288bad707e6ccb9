import { isRegression, NOISY_ADVICE, type OverallVerdict, ruleWords } from '../compare/rule.js';
import type { Comparison, ModeComparison, Verdict } from '../compare/verdict.js';
import { formatMs, formatPercent } from '../format.js';
import { type Column, fitTable, type Layout } from './fold.js';
import { roleLabel } from './labels.js';
import type { Style } from './style.js';
import { DEFAULT_COLUMNS } from './width.js';

const signed = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)}%`;
/** "+4.8% (+3.1 to +6.0)": B/A − 1, the Hodges–Lehmann estimate and its interval, the figures the verdict read. */
const changeText = (p: ModeComparison) =>
  p.interval
    ? `${signed(p.interval.estimate)} (${signed(p.interval.low)} to ${signed(p.interval.high)})`
    : `${signed(p.change)} (no interval)`;
const withNoise = (s: ModeComparison['baseline']) => `${formatMs(s.median)} ± ${formatPercent(s.relativeNoise, 1)}`;

/** The device of a pair, named only when the comparison spans several. */
const deviceOf = (comparison: Comparison, pair: ModeComparison) =>
  new Set(comparison.pairs.map((p) => p.device)).size > 1 ? pair.device : null;

/** Verdicts of the pairs that can fail the gate (or, with `gating: false`, of the model's parts). */
export function summaryCounts(comparison: Comparison, gating = true): Record<Verdict, number> {
  const counts: Record<Verdict, number> = { faster: 0, slower: 0, same: 0, noisy: 0 };
  for (const p of comparison.pairs) if (p.gating === gating) counts[p.verdict] += 1;
  return counts;
}

/** "model parts, for information: 1 slower, 1 faster, 8 same", or nothing when there are none. */
function infoLine(comparison: Comparison): string[] {
  const info = summaryCounts(comparison, false);
  const total = info.slower + info.faster + info.same + info.noisy;
  return total
    ? [
        `model parts (small ops, bare kernels), for information only: ${info.slower} slower, ${info.faster} faster, ${info.same} same, ${info.noisy} noisy`,
      ]
    : [];
}

const verdictText = (p: ModeComparison, text: string) => (p.gating ? text : `${text} (info)`);

/** The rule in words (compare/rule.ts states it once) and the clocks' part: the footer of every view. */
const ruleText = (comparison: Comparison) =>
  `${ruleWords(comparison.rule)} Where NVML read the SM clocks, a change must hold in clock-normalised time too.`;

/** "same (no regression)": the comparison's verdict and what it means for the gate. */
export function verdictHead(verdict: OverallVerdict, noisy: number): string {
  return `${verdict} (${isRegression(verdict) ? 'regression' : noisy ? 'no regression shown' : 'no regression'})`;
}

/** Why pairs are noisy, where it is not the interval's width (too few samples), and what to do about noisy ones. */
function noisyLines(comparison: Comparison): string[] {
  const noisy = comparison.pairs.filter((p) => p.verdict === 'noisy');
  const several = new Set(comparison.pairs.map((p) => p.config)).size > 1;
  const tooFew = noisy
    .filter((p) => !p.interval)
    .map((p) => `${several ? `${p.config} ` : ''}${roleLabel(p.role, deviceOf(comparison, p))}: ${p.reason}`);
  return noisy.length ? [...tooFew, NOISY_ADVICE] : [];
}

/** One line per pair whose SM clocks moved its verdict: what the change was in clock-normalised time. */
function clockLines(comparison: Comparison): string[] {
  return comparison.pairs.flatMap((p) =>
    p.clocks?.explains
      ? [
          `${p.config} ${roleLabel(p.role, deviceOf(comparison, p))}: SM clock ${p.clocks.baselineMHz.toFixed(0)} → ${p.clocks.candidateMHz.toFixed(0)} MHz; ` +
            `${signed(p.change)} in time is ${signed(p.clocks.change)} in clock-normalised time: the clocks explain it`,
        ]
      : [],
  );
}

/** Up to this many modes are named in each answer line; the table lists them all. */
const NAMED_MAX = 4;

/** "serial +2.3%, kernel fma alone +10.0%": the gating pairs of a verdict, the largest change first. */
function changedText(comparison: Comparison, verdict: Verdict): string | null {
  const several = new Set(comparison.pairs.map((p) => p.config)).size > 1;
  const size = (p: ModeComparison) => Math.abs(p.interval?.estimate ?? p.change);
  const pairs = comparison.pairs.filter((p) => p.gating && p.verdict === verdict).sort((a, b) => size(b) - size(a));
  if (!pairs.length) return null;
  const named = pairs
    .slice(0, NAMED_MAX)
    .map((p) => `${several ? `${p.config} ` : ''}${roleLabel(p.role, deviceOf(comparison, p))} ${changeText(p)}`);
  const more = pairs.length - NAMED_MAX;
  return `${verdict}: ${named.join(', ')}${more > 0 ? `, and ${more} more` : ''}`;
}

/** The answer, first: regression or not with the counts, then which modes moved and by how much. */
function compareAnswer(comparison: Comparison): string[] {
  const counts = summaryCounts(comparison);
  return [
    `${verdictHead(comparison.verdict, counts.noisy)}: ${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy`,
    ...infoLine(comparison),
    ...(['slower', 'faster', 'noisy'] as const).flatMap((v) => changedText(comparison, v) ?? []),
  ];
}

/**
 * The pairs as a table within `columns`: the config column merged into the mode's, then medians without noise, then
 * no medians, else folded.
 */
function pairsTable(comparison: Comparison, style: Style, columns: number): string {
  const paint: Record<Verdict, (s: string) => string> = {
    faster: style.green,
    slower: style.red.bold,
    same: (s) => s,
    noisy: style.yellow,
  };
  const pairs = comparison.pairs;
  const mode = (p: ModeComparison) => roleLabel(p.role, deviceOf(comparison, p));
  const several = new Set(pairs.map((p) => p.config)).size > 1;
  const tail: Column[] = [
    { head: `change (${formatPercent(comparison.rule.confidence, 0)})`, align: 'right', cells: pairs.map(changeText) },
    { head: 'verdict', cells: pairs.map((p) => (p.gating ? paint[p.verdict](p.verdict) : verdictText(p, p.verdict))) },
  ];
  const full: Layout = [
    { head: 'config', cells: pairs.map((p) => p.config) },
    { head: 'mode', cells: pairs.map(mode) },
    { head: 'baseline', align: 'right', cells: pairs.map((p) => withNoise(p.baseline)) },
    { head: 'candidate', align: 'right', cells: pairs.map((p) => withNoise(p.candidate)) },
    ...tail,
  ];
  const merged: Column = {
    head: several ? 'config, mode' : 'mode',
    cells: pairs.map((p) => (several ? `${p.config} ${mode(p)}` : mode(p))),
  };
  const medians: Layout = [
    merged,
    { head: 'baseline', align: 'right', cells: pairs.map((p) => formatMs(p.baseline.median)) },
    { head: 'candidate', align: 'right', cells: pairs.map((p) => formatMs(p.candidate.median)) },
    ...tail,
  ];
  // The interval is what the verdict read: it outlasts the medians when the width runs out.
  return fitTable([full, [merged, ...full.slice(2)], medians, [merged, ...tail]], columns);
}

/**
 * The terminal view, its table within `columns` (the CLI wraps its prose lines): the answer, the pairs, the notes and
 * the rule.
 */
export function renderCompareTable(comparison: Comparison, style: Style, columns = DEFAULT_COLUMNS): string {
  const lines = [...compareAnswer(comparison), '', pairsTable(comparison, style, columns)];
  const notes = [
    ...clockLines(comparison),
    ...noisyLines(comparison),
    ...comparison.notes,
    ...comparison.unpaired.map((u) => `unpaired: ${u}`),
  ];
  for (const note of notes) lines.push(`note: ${note}`);
  if (comparison.deviceDifferences.length)
    lines.push(`devices differ (allowed): ${comparison.deviceDifferences.join('; ')}`);
  lines.push(ruleText(comparison));
  return lines.join('\n');
}

export function renderCompareMarkdown(comparison: Comparison): string {
  const icon: Record<Verdict, string> = { faster: '🟢 faster', slower: '🔴 slower', same: 'same', noisy: '🟡 noisy' };
  const counts = summaryCounts(comparison);
  const lines = [
    `### cuda-pipe compare: ${isRegression(comparison.verdict) ? `**${counts.slower} slower**` : 'no regression'}`,
    '',
    `Verdict **${verdictHead(comparison.verdict, counts.noisy)}**: ${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy.`,
    ...infoLine(comparison).map((l) => `${l}.`),
    '',
    `| config | mode | baseline | candidate | change (${formatPercent(comparison.rule.confidence, 0)} interval) | verdict |`,
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...comparison.pairs.map(
      (p) =>
        `| ${p.config} | ${roleLabel(p.role, deviceOf(comparison, p))} | ${withNoise(p.baseline)} | ${withNoise(p.candidate)} | ${changeText(p)} | ${verdictText(p, icon[p.verdict])} |`,
    ),
  ];
  const notes = [
    ...clockLines(comparison),
    ...noisyLines(comparison),
    ...comparison.notes,
    ...comparison.unpaired.map((u) => `unpaired: ${u}`),
    ...(comparison.deviceDifferences.length ? [`devices differ: ${comparison.deviceDifferences.join('; ')}`] : []),
  ];
  if (notes.length) lines.push('', ...notes.map((n) => `- ${n}`));
  lines.push('', `<sub>${ruleText(comparison)}</sub>`);
  return lines.join('\n');
}
