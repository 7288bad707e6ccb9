import type { AnalysisDocument, DeviceAnalysis, Finding, Step, StepsVerdict } from '../analyze/document.js';
import { basename } from 'node:path';
import { escapeControl, formatMs, formatPercent, formatRate } from '../format.js';
import { fitLines } from './width.js';

// `cuda-pipe analyze` in the terminal: the answer first (per device its step time, overlap, exposed time, efficiency
// and top finding), then each device's steps, the findings with their sentences, and the notes. Everything fits
// `columns`: table rows are laid out narrower than the narrowest width laid out (60), prose is wrapped.

/** Steps shown per device; --json holds them all. */
export const SHOWN_STEPS = 12;

export function renderAnalysis(document: AnalysisDocument, columns: number): string {
  const lines: string[] = [];
  const traces = new Set(document.devices.map((d) => d.file)).size;
  lines.push(`cuda-pipe analyze: ${count(traces, 'trace')}, ${count(document.devices.length, 'device')}`, '');
  if (document.verdicts) lines.push(...verdictLines(document.verdicts), '');
  for (const device of document.devices) lines.push(...summary(device, document.findings), '');
  for (const device of document.devices) lines.push(...stepTable(device), '');
  if (document.findings.length) {
    lines.push('Findings (ms at stake per step, averaged over the steps)');
    for (const f of document.findings) lines.push(`  ${who(f)}  ${f.code}  ${formatMs(f.ms)} (${count(f.steps, 'step')})`, `    ${f.message}`);
    lines.push('');
  }
  if (document.notes.length) lines.push('Notes', ...document.notes.map((n) => `  - ${escapeControl(n)}`));
  return `${fitLines(lines.join('\n').trimEnd(), columns)}\n`;
}

/** --ab's answer, first of all: per device B's median step against A's, and the verdict. */
function verdictLines(verdicts: readonly StepsVerdict[]): string[] {
  if (!verdicts.length) return ['B against A: no device has steps on both sides'];
  return [
    "B against A (each device's steps as samples, compare's rule)",
    ...verdicts.map(
      (v) =>
        `  ${who(v)}: ${formatMs(v.baselineMs)} → ${formatMs(v.candidateMs)} median step, ${v.change >= 0 ? '+' : '−'}${formatPercent(Math.abs(v.change))}: ${v.verdict} (${v.steps[0]} and ${v.steps[1]} steps)`,
    ),
  ];
}

function summary(device: DeviceAnalysis, findings: readonly Finding[]): string[] {
  const o = device.overlap;
  const top = findings.find((f) => f.file === device.file && f.device === device.device);
  const bound = device.steps.length ? mostCommonBound(device.steps) : null;
  const rates = device.rates;
  const ratesFrom = rates.source === 'trace' ? "the trace's fastest copies" : `${rates.source} ${escapeControl(rates.file ?? '')}`;
  return [
    `${who(device)} (${escapeControl(device.file)}, ${device.format}), ${count(device.steps.length, 'step')}`,
    `  step ${formatMs(device.stepMs)} median · floor ${formatMs(device.floorMs)}${bound ? ` (${bound})` : ''} · efficiency ${formatPercent(device.efficiency)}`,
    `  overlap: copies with kernels ${pct(o.copyWithKernel)} (H2D ${pct(o.h2dWithKernel)}, D2H ${pct(o.d2hWithKernel)}) · H2D with D2H ${pct(o.h2dWithD2h)}` +
      (o.commWithCompute === undefined ? '' : ` · communication with compute ${pct(o.commWithCompute)}`),
    `  exposed: copies ${formatMs(device.exposedCopyMs)}` +
      (o.commWithCompute === undefined ? '' : ` · communication ${formatMs(device.exposedCommMs)}`) +
      ` · idle ${formatMs(device.idleMs)}`,
    `  top finding: ${top ? `${top.code}, ${formatMs(top.ms)} a step` : 'none'}`,
    `  link rates: H2D ${rate(rates.h2dGbPerSecond)}, D2H ${rate(rates.d2hGbPerSecond)}, from ${ratesFrom}`,
  ];
}

const HEAD = ['step', 'ms', 'kern', 'H2D', 'D2H', 'copy∥k', 'comm∥c', 'exp copy', 'exp comm', 'idle', 'floor', 'eff'] as const;
const WIDTHS = [14, 8, 4, 4, 4, 6, 6, 8, 8, 8, 8, 4] as const;

/** One row per step: formatMs is at most 8 characters and a whole percent 4, so a row takes 95 columns. */
function stepTable(device: DeviceAnalysis): string[] {
  const row = (cells: readonly string[]) => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(WIDTHS[i]!) : c.padStart(WIDTHS[i]!))).join(' ')}`.trimEnd();
  const shown = device.steps.slice(0, SHOWN_STEPS);
  return [
    `Steps of ${who(device)} (${escapeControl(basename(device.file))})`,
    row(HEAD),
    ...shown.map((s: Step) =>
      row([
        clipText(escapeControl(s.name), WIDTHS[0]),
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
    ),
    ...(device.steps.length > shown.length ? [`  … ${device.steps.length - shown.length} more steps (--json has them all)`] : []),
  ];
}

function who(place: Pick<DeviceAnalysis, 'rank' | 'device'>): string {
  return `${place.rank === null ? '' : `rank ${place.rank} · `}GPU ${place.device}`;
}

function mostCommonBound(steps: readonly Step[]): string {
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(s.floor.bound, (counts.get(s.floor.bound) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
}

function pct(share: number | null | undefined, digits = 1): string {
  return share === null || share === undefined ? '–' : formatPercent(share, digits);
}

function rate(gbps: number | null): string {
  return gbps === null ? '–' : formatRate(gbps);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function clipText(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
