import type { ModeResult } from '../../model/mode.js';
import type { RunResult } from '../../result/schema.js';
import type { RunExporter } from '../exporter.js';
import { modeLabel } from '../labels.js';

/**
 * RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled. A field that a
 * spreadsheet would read as a formula (=, +, -, @ first; a config's name is the user's text) gets a leading
 * apostrophe, as OWASP advises for CSV that people open in Excel; numbers are written as numbers, never prefixed.
 */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const COLUMNS: ReadonlyArray<
  readonly [string, (mode: ModeResult, result: RunResult) => string | number | null | undefined]
> = [
  ['config', (_, r) => r.config.name],
  ['rank', (_, r) => r.run.rank],
  ['device', (m) => m.device],
  ['mode', (m) => m.id],
  ['label', (m, r) => modeLabel(m, r)],
  ['kind', (m) => m.role.kind],
  ['median_ms', (m) => m.stats.median],
  ['q1_ms', (m) => m.stats.q1],
  ['q3_ms', (m) => m.stats.q3],
  ['min_ms', (m) => m.stats.min],
  ['max_ms', (m) => m.stats.max],
  ['mean_ms', (m) => m.stats.mean],
  ['noise', (m) => m.stats.relativeNoise],
  ['n', (m) => m.stats.n],
  ['outliers', (m) => m.stats.outliers.length],
  ['stopped_by', (m) => m.stoppedBy],
  ['h2d_bytes', (m) => m.bytes.h2d],
  ['d2h_bytes', (m) => m.bytes.d2h],
  ['speedup', (m) => m.analysis?.speedup],
  ['speedup_error', (m) => m.analysis?.speedupError],
  ['bound_ms', (m) => m.analysis?.bound.ms],
  ['efficiency', (m) => m.analysis?.efficiency],
  ['tflops', (m) => m.throughput?.tflops],
  ['gb_per_s', (m) => m.throughput?.gbPerSecond],
];

/**
 * One row per mode of every Result, times in ms and fractions as fractions, for spreadsheets and pandas. Lines end in
 * LF, as the other documents do (every CSV reader takes it); quoted fields may hold CR or LF.
 */
export function renderRunCsv(results: readonly RunResult[]): string {
  const rows = results.flatMap((result) =>
    result.modes.map((mode) => COLUMNS.map(([, value]) => csvField(value(mode, result))).join(',')),
  );
  return [COLUMNS.map(([name]) => name).join(','), ...rows].join('\n');
}

export const csvExporter: RunExporter = {
  description: 'one CSV row per mode (RFC 4180)',
  render: renderRunCsv,
};
