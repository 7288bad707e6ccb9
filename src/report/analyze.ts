import type {
  AnalysisDocument,
  CollectiveSkew,
  DeviceAnalysis,
  Finding,
  Participant,
  Step,
  StepsVerdict,
} from '../analysis/document.js';
import { basename } from 'node:path';
import { escapeControl, formatMs, formatPercent, formatRate } from '../format.js';
import { fitLines } from './width.js';

// `cuda-pipe analyze` in the terminal: the answer first (per device its step time, overlap, exposed time, efficiency
// and top finding), then each device's steps, the findings with their sentences, and the notes. Everything fits
// `columns`: the step table drops columns to fit (communication's where there is none, then idle and floor), prose
// is wrapped. The Markdown and HTML reports (analyze-md.ts, analyze-html.ts) draw the same lines and cells.

/** Steps shown per device; --json holds them all. */
export const SHOWN_STEPS = 12;

export function renderAnalysis(document: AnalysisDocument, columns: number): string {
  const lines: string[] = [];
  const traces = new Set(document.devices.map((d) => d.file)).size;
  lines.push(`cuda-pipe analyze: ${count(traces, 'trace')}, ${count(document.devices.length, 'device')}`, '');
  if (document.verdicts) lines.push(...verdictLines(document.verdicts), '');
  for (const device of document.devices)
    lines.push(...summaryLines(device, document.findings).map((line, i) => (i ? `  ${line}` : line)), '');
  if (document.collectives)
    lines.push(...collectiveLines(document.collectives).map((line, i) => (i ? `  ${line}` : line)), '');
  for (const device of document.devices) lines.push(...stepTable(device, columns), '');
  if (document.findings.length) {
    lines.push(FINDINGS_HEAD);
    for (const f of document.findings) lines.push(`  ${findingLine(f)}`, `    ${f.message}`);
    lines.push('');
  }
  if (document.notes.length) lines.push('Notes', ...document.notes.map((n) => `  - ${escapeControl(n)}`));
  return `${fitLines(lines.join('\n').trimEnd(), columns)}\n`;
}

export const FINDINGS_HEAD = 'Findings (ms a step would save without the cause, averaged over the steps)';

export function findingLine(f: Finding): string {
  return `${who(f)}  ${f.code}  ${formatMs(f.ms)} (${count(f.steps, 'step')})`;
}

/** --ab's answer, first of all: per device B's median step against A's, and the verdict. */
export function verdictLines(verdicts: readonly StepsVerdict[]): string[] {
  if (!verdicts.length) return ['B against A: no device has steps on both sides'];
  return [
    "B against A (each device's steps as samples, compare's rule)",
    ...verdicts.map(
      (v) =>
        `  ${who(v)}: ${formatMs(v.baselineMs)} → ${formatMs(v.candidateMs)} median step, ${v.change >= 0 ? '+' : '−'}${formatPercent(Math.abs(v.change))}: ${v.verdict} (${v.steps[0]} and ${v.steps[1]} steps)`,
    ),
  ];
}

/**
 * A device's answer: its heading line, then the facts (step and floor, overlap, exposed, idle by cause, top finding,
 * rates).
 */
export function summaryLines(device: DeviceAnalysis, findings: readonly Finding[]): string[] {
  const o = device.overlap;
  const top = findings.find((f) => f.file === device.file && f.device === device.device);
  const bound = device.steps.length ? mostCommonBound(device.steps) : null;
  const rates = device.rates;
  const ratesFrom =
    rates.source === 'trace' ? "the trace's fastest copies" : `${rates.source} ${escapeControl(rates.file ?? '')}`;
  return [
    `${who(device)} (${escapeControl(device.file)}, ${device.format}), ${count(device.steps.length, 'step')}`,
    `step ${formatMs(device.stepMs)} median · floor ${formatMs(device.floorMs)}${bound ? ` (${bound})` : ''} · efficiency ${formatPercent(device.efficiency)}`,
    `overlap: copies with kernels ${pct(o.copyWithKernel)} (H2D ${pct(o.h2dWithKernel)}, D2H ${pct(o.d2hWithKernel)}) · H2D with D2H ${pct(o.h2dWithD2h)}` +
      (o.commWithCompute === undefined ? '' : ` · communication with compute ${pct(o.commWithCompute)}`),
    `exposed: copies ${formatMs(device.exposedCopyMs)}` +
      (o.commWithCompute === undefined ? '' : ` · communication ${formatMs(device.exposedCommMs)}`),
    `idle ${formatMs(device.idleMs)}: host wait ${formatMs(device.hostWaitMs)} · kernel wait ${formatMs(device.kernelWaitMs)} · sync wait ${formatMs(device.syncWaitMs)} · other ${formatMs(device.otherIdleMs)}`,
    `top finding: ${top ? `${top.code}, saves ${formatMs(top.ms)} a step` : 'none'}`,
    `link rates: H2D ${rate(rates.h2dGbPerSecond)}, D2H ${rate(rates.d2hGbPerSecond)}, from ${ratesFrom}`,
  ];
}

/** Several ranks: the heading line, then the skew, who arrived last most often, and each participant's record. */
export function collectiveLines(c: CollectiveSkew): string[] {
  const heading = `Collectives across ${count(c.participants.length, 'GPU')}`;
  if (c.kind === 'unknown') return [`${heading}: skew not measured: ${escapeControl(c.reason)}`];
  const { who: last, count: lastCount, of } = c.mostOftenLast;
  return [
    `${heading}: ${count(c.count, 'collective')} paired, arrival skew median ${formatMs(c.skewMs.median)}, max ${formatMs(c.skewMs.max)}`,
    last.length
      ? `last to arrive most often: ${last.map(participantName).join(' and ')}, at ${lastCount} of ${of} collectives${last.length > 1 ? ' each' : ''}`
      : 'last to arrive: no one (every collective started at once on every GPU)',
    ...c.lastArriving.map(
      (l) =>
        `${participantName(l)}: last at ${l.count} of ${of} (${formatPercent(l.share, 0)}), late by ${formatMs(l.lateMs.median)} median, ${formatMs(l.lateMs.max)} max`,
    ),
  ];
}

export function participantName(p: Participant): string {
  return p.rank === null ? `${escapeControl(basename(p.file))} GPU ${p.device}` : `rank ${p.rank} · GPU ${p.device}`;
}

const HEAD = [
  'step',
  'ms',
  'kern',
  'H2D',
  'D2H',
  'copy∥k',
  'comm∥c',
  'exp copy',
  'exp comm',
  'idle',
  'floor',
  'eff',
] as const;
const WIDTHS = [14, 8, 4, 4, 4, 6, 6, 8, 8, 8, 8, 4] as const;
/**
 * The columns of communication, dropped first where the device has none; then idle and floor, whose medians the summary
 * gives.
 */
const COMM_COLUMNS: ReadonlySet<number> = new Set([6, 8]);
const SPARE_COLUMNS: ReadonlySet<number> = new Set([9, 10]);

/** The step table's heading and cells, every column: the Markdown and HTML reports draw them all. */
export function stepCells(device: DeviceAnalysis): { head: readonly string[]; rows: string[][] } {
  return {
    head: HEAD,
    rows: device.steps.map((s: Step) => [
      escapeControl(s.name),
      formatMs(s.ms),
      pct(s.busy.kernels, 0),
      pct(s.busy.h2d, 0),
      pct(s.busy.d2h, 0),
      pct(s.overlap.copyWithKernel, 0),
      pct(s.overlap.commWithCompute, 0),
      formatMs(s.exposedCopyMs),
      formatMs(s.exposedCommMs),
      formatMs(s.idleMs),
      formatMs(s.floor.ms),
      pct(s.efficiency, 0),
    ]),
  };
}

/**
 * The step table's columns (indices into stepCells' heading) from widest to narrowest: all; without communication's
 * where the device has none; without idle and floor too.
 */
export function stepLayouts(device: DeviceAnalysis): number[][] {
  const all = HEAD.map((_, i) => i);
  const comm = device.overlap.commWithCompute !== undefined;
  const withoutComm = all.filter((i) => comm || !COMM_COLUMNS.has(i));
  return [all, withoutComm, withoutComm.filter((i) => !SPARE_COLUMNS.has(i))];
}

/**
 * One row per step: formatMs is at most 8 characters and a whole percent 4, so a row of every column takes 95 columns.
 */
function stepTable(device: DeviceAnalysis, columns: number): string[] {
  const widthOf = (shown: readonly number[]) => 1 + shown.reduce((sum, i) => sum + WIDTHS[i]! + 1, 0);
  const layouts = stepLayouts(device);
  const shownColumns = layouts.find((shown) => widthOf(shown) <= columns) ?? (layouts.at(-1) as number[]);
  const row = (cells: readonly string[]) =>
    `  ${shownColumns.map((i) => (i === 0 ? cells[i]!.padEnd(WIDTHS[i]!) : cells[i]!.padStart(WIDTHS[i]!))).join(' ')}`.trimEnd();
  const { rows } = stepCells(device);
  const shown = rows.slice(0, SHOWN_STEPS);
  return [
    `Steps of ${who(device)} (${escapeControl(basename(device.file))})`,
    row(HEAD),
    ...shown.map((cells) => row([clipText(cells[0]!, WIDTHS[0]), ...cells.slice(1)])),
    ...(rows.length > shown.length ? [`  … ${rows.length - shown.length} more steps (--json has them all)`] : []),
  ];
}

export function who(place: Pick<DeviceAnalysis, 'rank' | 'device'>): string {
  return `${place.rank === null ? '' : `rank ${place.rank} · `}GPU ${place.device}`;
}

function mostCommonBound(steps: readonly Step[]): string {
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(s.floor.bound, (counts.get(s.floor.bound) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
}

export function pct(share: number | null | undefined, digits = 1): string {
  return share === null || share === undefined ? '–' : formatPercent(share, digits);
}

function rate(gbps: number | null): string {
  return gbps === null ? '–' : formatRate(gbps);
}

export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function clipText(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
