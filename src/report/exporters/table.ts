import { formatBytes, formatMs, formatPercent } from '../../format.js';
import type { RunResult } from '../../result/schema.js';
import { boundText, comparisonText, deviceLine, displayOrder, formatSpeedup, leadComparisons, modeLabel, modelLines, rateOf, serialCaveat, timingLine } from '../labels.js';
import type { RunExporter } from '../exporter.js';
import { renderTable } from '../big-table.js';
import { commLines } from '../comm.js';
import { devicesLines } from '../devices.js';
import { eventCostLines, toolboxLines } from '../toolbox.js';
import type { Style } from '../style.js';

/** The terminal report of one run, drawn from the Result alone. */
export function renderRunTable(result: RunResult, style: Style): string {
  const lines: string[] = [];
  lines.push(`${style.bold(`cuda-pipe ${result.tool.version} · ${result.config.name}`)} · ${deviceLine(result)}`);
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
  lines.push(`layout: ${[...new Set(layouts)].join('; ')}; ${totals ? `buffers ${totals}; ${memory} host memory` : 'device-only buffers'}`);
  lines.push(
    'kernels: ' +
      result.kernels
        .map((k) => `${k.label} (${k.entry}, ${k.compile.cached ? 'cache hit' : `compiled by NVRTC ${k.compile.nvrtc}`} for ${k.compile.arch} in ${formatMs(k.compile.ms)})`)
        .join('; '),
  );
  lines.push(timingLine(result));
  const rows = displayOrder(result.modes).map((mode) => {
    const emphasise = mode.role.kind === 'overlapped' ? style.bold : (s: string) => s;
    return [
      emphasise(modeLabel(mode, result)),
      emphasise(formatMs(mode.stats.median)),
      formatMs(mode.stats.min),
      formatMs(mode.stats.max),
      formatPercent(mode.stats.relativeNoise, 2),
      `${mode.stats.n}${mode.stats.outliers.length ? ` (${mode.stats.outliers.length} out)` : ''}`,
      rateOf(mode),
    ];
  });
  lines.push(renderTable({ head: ['mode', 'median', 'min', 'max', 'noise', 'n', 'rate'], colAligns: ['left', 'right', 'right', 'right', 'right', 'right', 'right'], rows }));
  const overlapped = result.modes.filter((m) => m.analysis !== null);
  // The comparison that answers the config's question comes first; each speedup says what it compares.
  for (const c of leadComparisons(result)) lines.push(style.bold(comparisonText(c)));
  for (const mode of overlapped) {
    const analysis = mode.analysis;
    if (!analysis) continue;
    const confidence = analysis.speedupError === null ? 'one sample a mode: no uncertainty' : '95%';
    const which = overlapped.length > 1 ? ` (${modeLabel(mode, result)})` : '';
    const caveat = serialCaveat(mode, result);
    lines.push(
      caveat?.omit
        ? `${style.bold(`speedup over serial${which}`)}: ${caveat.text}`
        : `${style.bold(`speedup over serial${which}`)}: ${style.bold(formatSpeedup(analysis))} ` +
            `(${confidence}; ${formatMs(analysis.serialMs)} → ${formatMs(mode.stats.median)}${caveat ? `; ${caveat.text}` : ''})`,
    );
    lines.push(boundText(mode) ?? '', ...modelLines(mode));
  }
  lines.push(...devicesLines(result), ...commLines(result), ...toolboxLines(result), ...eventCostLines(result));
  lines.push(verificationLine(result, style));
  lines.push(
    `clocks: ${result.clocks.checked && result.clocks.minMHz !== null ? `SM ${result.clocks.minMHz} to ${result.clocks.maxMHz} MHz while kernels ran (NVML)` : result.clocks.note}`,
  );
  for (const note of result.notes) lines.push(`note: ${note}`);
  if (result.warnings.length) {
    lines.push('', style.yellow('Warnings:'));
    for (const w of result.warnings) lines.push(`  ${style.yellow('•')} ${w.message}`, `    ${w.remedy}`);
  }
  return lines.join('\n');
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
  if (v.status === 'passed') return `verification: ${style.green('passed')} (overlapped outputs equal serial byte for byte; every element written)`;
  if (v.status === 'skipped') return `verification: ${style.yellow('skipped')} (--no-verify)`;
  if (v.status === 'nothing-compared') return `verification: ${style.yellow('nothing compared')} (no output buffer; each mode ran once with checked ops, and none faulted)`;
  const label = (id: string) => {
    const mode = result.modes.find((m) => m.id === id);
    return mode ? modeLabel(mode, result) : 'overlapped';
  };
  const onDevice = (m: { readonly device?: number | undefined }) => (m.device === undefined ? '' : ` on GPU ${m.device}`);
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

export const tableExporter: RunExporter = {
  description: 'the terminal table',
  render: (results, style) => results.map((r) => renderRunTable(r, style)).join('\n\n'),
};
