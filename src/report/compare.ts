import Table from 'cli-table3';
import type { Comparison, ModeComparison, Verdict, VerdictRule } from '../compare/verdict.js';
import { formatMs, formatPercent } from '../format.js';
import { roleLabel } from './labels.js';
import type { Style } from './style.js';

const signed = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)}%`;
const withNoise = (s: ModeComparison['baseline']) => `${formatMs(s.median)} ± ${formatPercent(s.relativeNoise, 1)}`;

/** The device of a pair, named only when the comparison spans several. */
const deviceOf = (comparison: Comparison, pair: ModeComparison) => (new Set(comparison.pairs.map((p) => p.device)).size > 1 ? pair.device : null);

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
    ? [`model parts (small ops, kernels without copies), for information only: ${info.slower} slower, ${info.faster} faster, ${info.same} same, ${info.noisy} noisy`]
    : [];
}

const verdictText = (p: ModeComparison, text: string) => (p.gating ? text : `${text} (info)`);

/** What made a change count, in words: the footer of every view. */
export function ruleText(rule: VerdictRule): string {
  return rule.kind === 'threshold'
    ? `A change counts when it is at least ${formatPercent(rule.threshold, 1)} (--threshold) and the two runs' interquartile ranges do not overlap.`
    : `A change counts when the two runs' interquartile ranges do not overlap and it is at least ${rule.multiple}× their noise together ` +
        `(√(a² + b²)) and at least ${formatPercent(rule.floor, 1)}; where NVML read the SM clocks, it must hold in clock-normalised time too.`;
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

export function renderCompareTable(comparison: Comparison, style: Style): string {
  const paint: Record<Verdict, (s: string) => string> = { faster: style.green, slower: style.red.bold, same: (s) => s, noisy: style.yellow };
  const table = new Table({
    head: ['config', 'mode', 'baseline', 'candidate', 'change', 'verdict'],
    style: { head: [], border: [] },
    colAligns: ['left', 'left', 'right', 'right', 'right', 'left'],
  });
  for (const p of comparison.pairs) {
    table.push([
      p.config,
      roleLabel(p.role, deviceOf(comparison, p)),
      withNoise(p.baseline),
      withNoise(p.candidate),
      signed(p.change),
      p.gating ? paint[p.verdict](p.verdict) : verdictText(p, p.verdict),
    ]);
  }
  const counts = summaryCounts(comparison);
  const lines = [table.toString(), `${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy`, ...infoLine(comparison)];
  for (const note of [...clockLines(comparison), ...comparison.notes, ...comparison.unpaired.map((u) => `unpaired: ${u}`)]) lines.push(`note: ${note}`);
  if (comparison.deviceDifferences.length) lines.push(`devices differ (allowed): ${comparison.deviceDifferences.join('; ')}`);
  lines.push(ruleText(comparison.rule));
  return lines.join('\n');
}

export function renderCompareMarkdown(comparison: Comparison): string {
  const icon: Record<Verdict, string> = { faster: '🟢 faster', slower: '🔴 slower', same: 'same', noisy: '🟡 noisy' };
  const counts = summaryCounts(comparison);
  const lines = [
    `### cuda-pipe compare: ${counts.slower ? `**${counts.slower} slower**` : 'no regression'}`,
    '',
    `${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy.`,
    ...infoLine(comparison).map((l) => `${l}.`),
    '',
    '| config | mode | baseline | candidate | change | verdict |',
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...comparison.pairs.map(
      (p) =>
        `| ${p.config} | ${roleLabel(p.role, deviceOf(comparison, p))} | ${withNoise(p.baseline)} | ${withNoise(p.candidate)} | ${signed(p.change)} | ${verdictText(p, icon[p.verdict])} |`,
    ),
  ];
  const notes = [
    ...clockLines(comparison),
    ...comparison.notes,
    ...comparison.unpaired.map((u) => `unpaired: ${u}`),
    ...(comparison.deviceDifferences.length ? [`devices differ: ${comparison.deviceDifferences.join('; ')}`] : []),
  ];
  if (notes.length) lines.push('', ...notes.map((n) => `- ${n}`));
  lines.push('', `<sub>${ruleText(comparison.rule)}</sub>`);
  return lines.join('\n');
}
