import Table from 'cli-table3';
import type { Verdict } from '../compare/verdict.js';
import { formatMs, formatPercent } from '../format.js';
import type { AbMode, AbResult } from '../result/ab.js';
import { roleLabel } from './labels.js';
import type { Style } from './style.js';

const signed = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(2)}%`;
const withNoise = (s: AbMode['a']) => `${formatMs(s.median)} ± ${formatPercent(s.relativeNoise, 1)}`;
/** "+1.02% (+0.95 to +1.10)": B over A, the median pair and the sign test's interval. */
const changeText = (m: AbMode) => `${signed(m.change)}${m.time.low !== null && m.time.high !== null ? ` (${signed(m.time.low - 1)} to ${signed(m.time.high - 1)})` : ''}`;

/** The gating modes' verdicts, as compare counts them. */
export function abCounts(result: Pick<AbResult, 'modes'>): Record<Verdict, number> {
  const counts: Record<Verdict, number> = { faster: 0, slower: 0, same: 0, noisy: 0 };
  for (const m of result.modes) if (m.gating) counts[m.verdict] += 1;
  return counts;
}

/** The rule that judged the pairs and the stopping rule, in words: the footer of every view. */
export function abRuleText(rule: AbResult['rule']): string {
  const counts =
    rule.threshold === null
      ? `at least ${rule.multiple}× the pairs' noise and at least ${formatPercent(rule.floor, 1)}`
      : `at least ${formatPercent(rule.threshold, 1)} (--threshold)`;
  return (
    `Reps interleaved A B, B A, … and paired; B/A is the median pair's ratio with the sign test's ${formatPercent(rule.confidence, 0)} interval. ` +
    `A change counts when the interval excludes no change and the median is ${counts}; same when the interval lies within that. ` +
    `Each mode took ${rule.minPairs} pairs or more until decided, within ${(rule.maxTimeMs / 1000).toFixed(0)} s (--max-time), else noisy.`
  );
}

function lines(result: AbResult): string[] {
  const out: string[] = [];
  for (const m of result.modes) {
    if (m.clocksExplain && m.cycles) {
      out.push(`${roleLabel(m.role)}: ${signed(m.change)} in time is ${signed(m.cycles.ratio - 1)} in clock-normalised time: the SM clocks explain it`);
    }
  }
  for (const [name, side] of [
    ['A', result.a],
    ['B', result.b],
  ] as const) {
    if (side.verification.status === 'failed') out.push(`${name} (${side.name}): verification failed in ${side.verification.mismatches.map((m) => m.mode).join(', ')}`);
  }
  out.push(...result.notes, ...result.unpaired.map((u) => `not interleaved: ${u}`));
  if (!result.clocks.checked) out.push(`SM clocks ${result.clocks.note}: verdicts in time only`);
  return out;
}

const title = (result: AbResult) => `A ${result.a.name} (${result.a.path ?? 'built-in'}) against B ${result.b.name} (${result.b.path ?? 'built-in'}) on ${result.device.name}`;

export function renderAbTable(result: AbResult, style: Style): string {
  const paint: Record<Verdict, (s: string) => string> = { faster: style.green, slower: style.red.bold, same: (s) => s, noisy: style.yellow };
  const table = new Table({
    head: ['mode', 'A', 'B', 'B/A (interval)', 'pairs', 'verdict'],
    style: { head: [], border: [] },
    colAligns: ['left', 'right', 'right', 'right', 'right', 'left'],
  });
  for (const m of result.modes) table.push([roleLabel(m.role), withNoise(m.a), withNoise(m.b), changeText(m), String(m.aMs.length), paint[m.verdict](m.verdict)]);
  const counts = abCounts(result);
  return [
    title(result),
    table.toString(),
    `${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy`,
    ...lines(result).map((l) => `note: ${l}`),
    abRuleText(result.rule),
  ].join('\n');
}

export function renderAbMarkdown(result: AbResult): string {
  const icon: Record<Verdict, string> = { faster: '🟢 faster', slower: '🔴 slower', same: 'same', noisy: '🟡 noisy' };
  const counts = abCounts(result);
  const notes = lines(result);
  return [
    `### cuda-pipe ab: ${counts.slower ? `**${counts.slower} slower**` : 'no regression'}`,
    '',
    `${title(result)}: ${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy.`,
    '',
    '| mode | A | B | B/A (interval) | pairs | verdict |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...result.modes.map((m) => `| ${roleLabel(m.role)} | ${withNoise(m.a)} | ${withNoise(m.b)} | ${changeText(m)} | ${m.aMs.length} | ${icon[m.verdict]} |`),
    ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
    '',
    `<sub>${abRuleText(result.rule)}</sub>`,
  ].join('\n');
}
