import { boundLinkRate, formatBytes, formatMs, formatPercent } from '../../format.js';
import type { ModeResult } from '../../model/mode.js';
import type { RunResult } from '../../result/schema.js';
import {
  bestLayoutText,
  boundText,
  changeText,
  comparisonText,
  deviceLine,
  displayOrder,
  formatSpeedup,
  leadComparisons,
  limitWords,
  modeLabel,
  modelLines,
  rateOf,
  serialCaveat,
  timingLine,
} from '../labels.js';
import type { RunExporter } from '../exporter.js';
import { renderFittedTable } from '../big-table.js';
import { DEFAULT_COLUMNS, fitLines } from '../width.js';
import { kindLines } from '../kind-sections.js';
import { runBimodalLines } from '../bimodal.js';
import { devicesLines } from '../devices.js';
import { eventCostLines, toolboxLines } from '../toolbox.js';
import type { Style } from '../style.js';
import { changeWithFindings, traceFindings, whyText } from '../why.js';
import { aloneSlowerLines, clockNote, clockSuffix } from '../clocks.js';

/** How the terminal report is laid out: the width it fits, and whether it gives everything (--verbose). */
export interface TableOptions {
  readonly columns: number;
  readonly verbose: boolean;
}

/**
 * The terminal report of one run, drawn from the Result alone. The answer leads (the speedup, the efficiency, the
 * limit, the best layout and the change to make), then the modes a user asked for, then the model's parts, then the
 * notes; --verbose adds the model's working, the device and the kernels' compiles. Every line fits `columns`.
 */
export function renderRunTable(
  result: RunResult,
  style: Style,
  options: TableOptions = { columns: DEFAULT_COLUMNS, verbose: false },
): string {
  const { columns, verbose } = options;
  const shown = displayOrder(result.modes);
  const parts = shown.filter(isModelPart);
  const lines = [
    `${style.bold(`cuda-pipe ${result.tool.version} · ${result.config.name}`)} · ${deviceNames(result)}`,
    ...leadComparisons(result).map((c) => style.bold(comparisonText(c))),
    ...answerLines(result, style),
    '',
    modesTable(
      shown.filter((m) => !isModelPart(m)),
      result,
      style,
      columns,
    ),
  ];
  if (parts.length)
    lines.push(
      '',
      "the model's parts, each measured alone (the bound and the floor are built from them):",
      modesTable(parts, result, style, columns),
    );
  if (verbose) lines.push('', ...workingLines(result));
  lines.push('', ...devicesLines(result), ...kindLines(result), ...toolboxLines(result), ...eventCostLines(result));
  lines.push(layoutLine(result));
  if (verbose) lines.push(`device: ${deviceLine(result)}`, kernelsLine(result));
  lines.push(timingLine(result), verificationLine(result, style));
  lines.push(
    `clocks: ${result.clocks.checked && result.clocks.minMHz !== null ? `SM ${result.clocks.minMHz} to ${result.clocks.maxMHz} MHz while kernels ran (NVML)` : result.clocks.note}`,
    ...[headlineClocks(result), ...aloneSlowerLines(result)].flatMap((line) => (line ? [`clocks: ${line}`] : [])),
  );
  for (const note of result.notes) lines.push(`note: ${note}`);
  if (result.warnings.length) {
    lines.push('', style.yellow('Warnings:'));
    for (const w of result.warnings) lines.push(`  ${style.yellow('•')} ${w.message}`, `    ${w.remedy}`);
  }
  return fitLines(lines.join('\n'), columns);
}

/** What the clocks say of the headline's bound, where its kernel parts ran at another clock. */
function headlineClocks(result: RunResult): string | null {
  const head = result.modes.find((m) => m.id === result.summary.mode);
  return head ? clockNote(head) : null;
}

/** The devices by name, once each: the header's; --verbose gives each one's facts. */
function deviceNames(result: RunResult): string {
  const counts = new Map<string, number>();
  for (const d of result.devices) counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
  return [...counts].map(([name, n]) => (n > 1 ? `${n} × ${name}` : name)).join(', ');
}

/**
 * The modes a user runs cuda-pipe for (serial, the layouts, the split and the pipeline across devices, the urgent
 * stream's latency) against the model's parts: each stage, op or link measured alone to build the bound and the floor.
 */
function isModelPart(mode: ModeResult): boolean {
  const { role } = mode;
  if (role.kind === 'split') return role.alone !== undefined;
  return !['serial', 'overlapped', 'latency', 'cross-device'].includes(role.kind);
}

/**
 * The answer, in a line each: the headline layout's speedup over serial with its interval, its efficiency against
 * its floor, what limits it, the best layout the model predicts, and the change to make.
 */
function answerLines(result: RunResult, style: Style): string[] {
  const head = result.modes.find((m) => m.id === result.summary.mode);
  const analysis = head?.analysis;
  if (!head || !analysis)
    return ['speedup over serial: none (this Result has no overlapped mode to compare with serial)'];
  const caveat = serialCaveat(head, result);
  const confidence = analysis.speedupError === null ? 'one sample a mode: no uncertainty' : '95%';
  // Where several layouts were measured, the table's speedup column shows which one this is.
  const compared = `${formatMs(analysis.serialMs)} → ${formatMs(head.stats.median)}`;
  const { bound } = analysis;
  const findings = traceFindings(result, head);
  const why = whyText(findings);
  return [
    caveat?.omit
      ? `${style.bold('speedup over serial')}: ${caveat.brief}`
      : `${style.bold('speedup over serial')}: ${style.bold(formatSpeedup(analysis))} (${confidence}; ${compared}${caveat ? `; ${caveat.brief}` : ''})`,
    `efficiency: ${analysis.efficiency.toFixed(2)} = this layout's floor ${formatMs(bound.ms)} / ${formatMs(head.stats.median)} measured${clockSuffix(head)}`,
    `limited by: ${
      bound.limitedBy === 'link'
        ? `the link with both copy directions at once${boundLinkRate(bound) ? ` (${boundLinkRate(bound)})` : ''}`
        : limitWords(bound.limitedBy, head.analysis?.model?.words?.limit)
    }`,
    `best layout: ${bestLayoutText(head) ?? "not predicted: the model needs the small ops' costs, which this Result lacks"}`,
    ...runBimodalLines(result),
    ...(why ? [`why: ${why}`] : []),
    `change: ${changeWithFindings(head, findings, changeText(head))}`,
  ];
}

/** A table of modes within `columns`: times and noise first to go, then the names wrap; empty columns are left out. */
function modesTable(modes: readonly ModeResult[], result: RunResult, style: Style, columns: number): string {
  const rows = modes.map((mode) => {
    const emphasise = mode.role.kind === 'overlapped' ? style.bold : (s: string) => s;
    const speedup = mode.analysis && !serialCaveat(mode, result)?.omit ? formatSpeedup(mode.analysis) : '';
    return [
      emphasise(modeLabel(mode, result)),
      emphasise(formatMs(mode.stats.median)),
      formatMs(mode.stats.min),
      formatMs(mode.stats.max),
      formatPercent(mode.stats.relativeNoise, 2),
      `${mode.stats.n}${mode.stats.outliers.length ? ` (${mode.stats.outliers.length} out)` : ''}`,
      emphasise(speedup),
      rateOf(mode),
    ];
  });
  const head = ['mode', 'median', 'min', 'max', 'noise', 'n', 'speedup', 'rate'];
  const kept = head
    .map((_, c) => c)
    .filter((c) => c < 2 || rows.some((row) => row[c] !== '' && row[c] !== style.bold('')));
  const spec = {
    head: kept.map((c) => head[c] ?? ''),
    colAligns: kept.map((c) => (c === 0 ? 'left' : 'right') as 'left' | 'right'),
    rows: rows.map((row) => kept.map((c) => row[c] ?? '')),
  };
  return renderFittedTable(spec, columns, ['min', 'max', 'n', 'noise']);
}

/**
 * The model's working for each layout, --verbose's: what its speedup compares, its bound, floor and the time it lost.
 */
function workingLines(result: RunResult): string[] {
  const overlapped = result.modes.filter((m) => m.analysis !== null && m.role.kind === 'overlapped');
  return overlapped.flatMap((mode) => {
    const caveat = serialCaveat(mode, result);
    const lines = [...(caveat ? [caveat.text] : []), boundText(mode) ?? '', ...modelLines(mode)];
    return overlapped.length > 1 ? [`${modeLabel(mode, result)}:`, ...lines.map((line) => `  ${line}`)] : lines;
  });
}

/** The layouts measured and the buffers they stream. */
function layoutLine(result: RunResult): string {
  const totals = result.buffers
    .filter((b) => b.role !== 'scratch')
    .map((b) => `${b.name} ${formatBytes(b.bytes)} ${b.role}`)
    .join(', ');
  const memory = [...new Set(result.buffers.filter((b) => b.role !== 'scratch').map((b) => b.hostMemory))].join('/');
  const layouts = result.modes.flatMap((m) =>
    m.role.kind === 'overlapped' && m.analysis
      ? [
          `${m.role.layout.chunks} chunks × ${m.analysis.chunkElements} ${result.pipeline.items === undefined ? 'elements' : 'items'} over ${m.role.layout.streams} streams, ${m.role.layout.order}`,
        ]
      : [],
  );
  const distinct = [...new Set(layouts)];
  // The table names every layout; past a few, this line would only repeat it (a 12,000-mode Result made it 900 KB).
  const named =
    distinct.length > LAYOUTS_NAMED
      ? [...distinct.slice(0, LAYOUTS_NAMED), `${distinct.length - LAYOUTS_NAMED} more in the table`]
      : distinct;
  const { connections } = result.pipeline;
  const queues =
    connections === undefined
      ? ''
      : `; ${connections} hardware queue${connections === 1 ? '' : 's'} (pipeline.connections)`;
  return `layout: ${named.join('; ')}; ${totals ? `buffers ${totals}; ${memory} host memory` : 'device-only buffers'}${queues}`;
}

const LAYOUTS_NAMED = 4;

function kernelsLine(result: RunResult): string {
  return (
    'kernels: ' +
    result.kernels
      .map(
        (k) =>
          `${k.label} (${k.entry}, ${k.compile.cached ? 'cache hit' : `compiled by NVRTC ${k.compile.nvrtc}`} for ${k.compile.arch} in ${formatMs(k.compile.ms)})`,
      )
      .join('; ')
  );
}

function verificationLine(result: RunResult, style: Style): string {
  const reduction = result.verification.reduction;
  if (!reduction) return comparisonLine(result, style);
  const status = reduction.status === 'passed' ? style.green('passed') : style.red('FAILED');
  return `${comparisonLine(result, style)}\nall-reduce check: ${status} (${reduction.text})`;
}

function comparisonLine(result: RunResult, style: Style): string {
  const v = result.verification;
  if (v.status === 'passed' && v.tolerance) {
    const t = v.tolerance;
    return (
      `verification: ${style.green('passed')} (float outputs within ${t.absolute} + ${t.relative} × |serial|, integers exact; ` +
      `largest error ${t.largestError.absolute.toPrecision(3)}, relative ${t.largestError.relative.toPrecision(3)})`
    );
  }
  if (v.status === 'passed' && v.against === 'same-layout-serialised') {
    return `verification: ${style.green('passed')} (each layout equals itself run op by op: a reduce-scatter's outputs depend on its buckets)`;
  }
  if (v.status === 'passed')
    return `verification: ${style.green('passed')} (overlapped outputs equal serial byte for byte; every element written)`;
  if (v.status === 'skipped') return `verification: ${style.yellow('skipped')} (--no-verify)`;
  if (v.status === 'nothing-compared')
    return `verification: ${style.yellow('nothing compared')} (no output buffer; each mode ran once with checked ops, and none faulted)`;
  const label = (id: string) => {
    const mode = result.modes.find((m) => m.id === id);
    return mode ? modeLabel(mode, result) : 'overlapped';
  };
  const onDevice = (m: { readonly device?: number | undefined }) =>
    m.device === undefined ? '' : ` on GPU ${m.device}`;
  return (
    `verification: ${style.red('FAILED')}\n` +
    v.mismatches
      .map((m) =>
        // The all-reduce check's mismatches are serial's outputs against ranks × the reference's.
        v.reduction && result.modes.find((mode) => mode.id === m.mode)?.role.kind === 'serial'
          ? `  output "${m.buffer}"${onDevice(m)} of serial: first difference at element ${m.index}: ${v.reduction.ranks} × reference ${m.expected}, all-reduced ${m.actual}; ${m.differing} elements differ`
          : `  output "${m.buffer}"${onDevice(m)} of ${label(m.mode)}: first difference at element ${m.index}: serial ${m.expected}, overlapped ${m.actual}` +
            `${m.unwritten ? ' (never written by the overlapped mode)' : ''}; ${m.differing} elements differ`,
      )
      .join('\n')
  );
}

const terminalExporter = (verbose: boolean): RunExporter => ({
  description: verbose
    ? "the terminal table with the model's working, the device and the kernels (--verbose)"
    : 'the terminal table',
  render: (results, style, columns = DEFAULT_COLUMNS) =>
    results.map((r) => renderRunTable(r, style, { columns, verbose })).join('\n\n'),
});

export const tableExporter = terminalExporter(false);
export const verboseTableExporter = terminalExporter(true);
