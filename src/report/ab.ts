import { isRegression, type OverallVerdict, overallVerdict, ruleWords, type Verdict } from '../compare/rule.js';
import { formatMs, formatPercent } from '../format.js';
import type { AbMode, AbResult } from '../result/ab.js';
import { verdictHead } from './compare.js';
import { type Column, fitTable, type Layout } from './fold.js';
import { roleLabel } from './labels.js';
import type { Style } from './style.js';
import { DEFAULT_COLUMNS } from './width.js';

const signed = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(2)}%`;
const withNoise = (s: AbMode['a']) => `${formatMs(s.median)} ± ${formatPercent(s.relativeNoise, 1)}`;
/** "+1.02% (+0.95 to +1.10)": B over A, the median pair and the sign test's interval. */
const changeText = (m: AbMode) =>
  `${signed(m.change)}${m.time.low !== null && m.time.high !== null ? ` (${signed(m.time.low - 1)} to ${signed(m.time.high - 1)})` : ''}`;

/** The gating modes' verdicts, as compare counts them. */
export function abCounts(result: Pick<AbResult, 'modes'>): Record<Verdict, number> {
  const counts: Record<Verdict, number> = { faster: 0, slower: 0, same: 0, noisy: 0 };
  for (const m of result.modes) if (m.gating) counts[m.verdict] += 1;
  return counts;
}

/**
 * The document's verdict: its own, or for a version 1 document (which had none) its gating modes' by today's
 * aggregation.
 */
export const abVerdict = (result: Pick<AbResult, 'modes' | 'verdict'>): OverallVerdict =>
  result.verdict ?? overallVerdict(result.modes.filter((m) => m.gating).map((m) => m.verdict));

/** The rule that judged the pairs and the stopping rule, in words: the footer of every view. */
export function abRuleText(rule: AbResult['rule']): string {
  const stopping = `Each mode took ${rule.minPairs} pairs or more until decided, within ${(rule.maxTimeMs / 1000).toFixed(0)} s (--max-time), else noisy.`;
  const paired = 'Reps interleaved A B, B A, … and paired.';
  if ('band' in rule)
    return `${paired} ${ruleWords(rule)} Where NVML read the SM clock, a change must hold in cycles too. ${stopping}`;
  // A version 1 document, judged by the noise rule of its day.
  const counts =
    rule.threshold === null
      ? `at least ${rule.multiple}× the pairs' noise and at least ${formatPercent(rule.floor, 1)}`
      : `at least ${formatPercent(rule.threshold, 1)} (--threshold)`;
  return (
    `${paired} B/A is the median pair's ratio with the sign test's ${formatPercent(rule.confidence, 0)} interval. ` +
    `A change counted when the interval excluded no change and the median was ${counts}; same when the interval lay within that ` +
    `(the rule of version 1 documents). ${stopping}`
  );
}

function lines(result: AbResult): string[] {
  const out: string[] = [];
  for (const m of result.modes) {
    if (m.clocksExplain && m.cycles) {
      out.push(
        `${roleLabel(m.role)}: ${signed(m.change)} in time is ${signed(m.cycles.ratio - 1)} in clock-normalised time: the SM clocks explain it`,
      );
    }
  }
  for (const [name, side] of [
    ['A', result.a],
    ['B', result.b],
  ] as const) {
    if (side.verification.status === 'failed')
      out.push(
        `${name} (${side.name}): verification failed in ${side.verification.mismatches.map((m) => m.mode).join(', ')}`,
      );
  }
  out.push(...result.notes, ...result.unpaired.map((u) => `not interleaved: ${u}`));
  if (!result.clocks.checked) out.push(`SM clocks ${result.clocks.note}: verdicts in time only`);
  return out;
}

const title = (result: AbResult) =>
  `A ${result.a.name} (${result.a.path ?? 'built-in'}) against B ${result.b.name} (${result.b.path ?? 'built-in'}) on ${result.device.name}`;

/** Up to this many modes are named in the answer; the table lists them all. */
const NAMED_MAX = 4;

/**
 * The answer, first: regression or not with the counts, then B against A with its interval for the overlapped
 * modes and every other mode that moved, and what was measured against what.
 */
function abAnswer(result: AbResult): string[] {
  const counts = abCounts(result);
  const moved = result.modes.filter((m) => m.gating && (m.role.kind === 'overlapped' || m.verdict !== 'same'));
  const named = [
    ...moved.filter((m) => m.role.kind === 'overlapped'),
    ...moved.filter((m) => m.role.kind !== 'overlapped'),
  ].slice(0, NAMED_MAX);
  return [
    `${verdictHead(abVerdict(result), counts.noisy)}: ${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy (B against A)`,
    ...named.map((m) => `${roleLabel(m.role)}: B/A ${changeText(m)}, ${m.verdict}`),
    title(result),
  ];
}

/** The modes as a table within `columns`: medians without noise, then B/A alone, else folded. */
function modesTable(result: AbResult, style: Style, columns: number): string {
  const paint: Record<Verdict, (s: string) => string> = {
    faster: style.green,
    slower: style.red.bold,
    same: (s) => s,
    noisy: style.yellow,
  };
  const { modes } = result;
  const mode: Column = { head: 'mode', cells: modes.map((m) => roleLabel(m.role)) };
  const tail: Column[] = [
    {
      head: `B/A (${formatPercent(result.rule.confidence, 0)} interval)`,
      align: 'right',
      cells: modes.map(changeText),
    },
    { head: 'pairs', align: 'right', cells: modes.map((m) => String(m.aMs.length)) },
    { head: 'verdict', cells: modes.map((m) => paint[m.verdict](m.verdict)) },
  ];
  const side = (head: 'A' | 'B', text: (m: AbMode) => string): Column => ({
    head,
    align: 'right',
    cells: modes.map(text),
  });
  const full: Layout = [mode, side('A', (m) => withNoise(m.a)), side('B', (m) => withNoise(m.b)), ...tail];
  const medians: Layout = [
    mode,
    side('A', (m) => formatMs(m.a.median)),
    side('B', (m) => formatMs(m.b.median)),
    ...tail,
  ];
  return fitTable([full, medians, [mode, ...tail]], columns);
}

/**
 * The terminal view, its table within `columns` (the CLI wraps its prose lines): the answer, the modes, the notes and
 * the rule.
 */
export function renderAbTable(result: AbResult, style: Style, columns = DEFAULT_COLUMNS): string {
  return [
    ...abAnswer(result),
    '',
    modesTable(result, style, columns),
    ...lines(result).map((l) => `note: ${l}`),
    abRuleText(result.rule),
  ].join('\n');
}

export function renderAbMarkdown(result: AbResult): string {
  const icon: Record<Verdict, string> = { faster: '🟢 faster', slower: '🔴 slower', same: 'same', noisy: '🟡 noisy' };
  const counts = abCounts(result);
  const notes = lines(result);
  const verdict = abVerdict(result);
  return [
    `### cuda-pipe ab: ${isRegression(verdict) ? `**${counts.slower} slower**` : 'no regression'}`,
    '',
    `${title(result)}: verdict **${verdictHead(verdict, counts.noisy)}**, ${counts.slower} slower, ${counts.faster} faster, ${counts.same} same, ${counts.noisy} noisy.`,
    '',
    `| mode | A | B | B/A (${formatPercent(result.rule.confidence, 0)} interval) | pairs | verdict |`,
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...result.modes.map(
      (m) =>
        `| ${roleLabel(m.role)} | ${withNoise(m.a)} | ${withNoise(m.b)} | ${changeText(m)} | ${m.aMs.length} | ${icon[m.verdict]} |`,
    ),
    ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
    '',
    `<sub>${abRuleText(result.rule)}</sub>`,
  ].join('\n');
}
