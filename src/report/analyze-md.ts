import { basename } from 'node:path';
import type { AnalysisDocument, DeviceAnalysis } from '../analysis/document.js';
import { escapeControl } from '../format.js';
import {
  collectiveLines,
  FINDINGS_HEAD,
  findingLine,
  SHOWN_STEPS,
  stepCells,
  stepLayouts,
  summaryLines,
  verdictLines,
  who,
} from './analyze.js';
import { fitLines, visibleWidth } from './width.js';

// `analyze --md`: the terminal's answer as a Markdown report, for a pull request or an issue. The same lines as the
// text (analyze.ts), as headings, bullets and tables; every line within 100 columns, prose wrapped as the text is
// (a wrapped bullet's continuation is indented under it, which Markdown reads as the same item), and the step
// table with the columns that fit, as in the terminal.

export const MARKDOWN_COLUMNS = 100;

/** A table cell: a pipe would end it, a newline the row. */
const cell = (text: string) => escapeControl(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
/** Inline text: Markdown's own characters taken literally, so that a file or kernel name draws as written. */
const inline = (text: string) => escapeControl(text).replace(/([\\`*_[\]<>|])/g, '\\$1');

export function renderAnalysisMarkdown(document: AnalysisDocument): string {
  const traces = new Set(document.devices.map((d) => d.file)).size;
  const lines = [
    `### cuda-pipe analyze: ${traces} trace${traces === 1 ? '' : 's'}, ${document.devices.length} device${document.devices.length === 1 ? '' : 's'}`,
    '',
  ];
  if (document.verdicts) {
    const [head, ...rest] = verdictLines(document.verdicts);
    lines.push(`**${inline(head!)}**`, '', ...rest.map((l) => `- ${inline(l.trim())}`), '');
  }
  for (const device of document.devices) {
    // A heading cannot wrap: it names the device and the file's base name, and the first bullet gives the path.
    const [head, ...facts] = summaryLines(device, document.findings);
    lines.push(
      `#### ${inline(who(device))} · ${inline(clip(basename(device.file), 60))}`,
      '',
      `- ${inline(head!)}`,
      ...facts.map((f) => `- ${inline(f)}`),
      '',
    );
  }
  if (document.collectives) {
    const [head, ...rest] = collectiveLines(document.collectives);
    lines.push(`**${inline(head!)}**`, '', ...rest.map((l) => `- ${inline(l)}`), '');
  }
  for (const device of document.devices) lines.push(...stepTable(device), '');
  if (document.findings.length) {
    lines.push(`#### ${FINDINGS_HEAD}`, '');
    for (const f of document.findings)
      lines.push(`- **${inline(findingLine(f).replace(/ {2}/g, ' · '))}**: ${inline(f.message)}`);
    lines.push('');
  }
  if (document.notes.length)
    lines.push(
      '<details><summary>Notes</summary>',
      '',
      ...document.notes.map((n) => `- ${inline(n)}`),
      '',
      '</details>',
    );
  return `${fitLines(lines.join('\n').trimEnd(), MARKDOWN_COLUMNS)}\n`;
}

/** A device's steps as a Markdown table, with the widest layout whose every row fits (a table row cannot wrap). */
function stepTable(device: DeviceAnalysis): string[] {
  const { head, rows } = stepCells(device);
  const shown = rows.slice(0, SHOWN_STEPS);
  const draw = (columns: readonly number[]) => [
    `| ${columns.map((i) => cell(head[i]!)).join(' | ')} |`,
    `| ${columns.map((i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...shown.map((cells) => `| ${columns.map((i) => cell(i === 0 ? clip(cells[0]!) : cells[i]!)).join(' | ')} |`),
  ];
  const layouts = stepLayouts(device).map(draw);
  const table = layouts.find((t) => t.every((line) => visibleWidth(line) <= MARKDOWN_COLUMNS)) ?? layouts.at(-1)!;
  return [
    `Steps of ${inline(who(device))} (${inline(basename(device.file))})`,
    '',
    ...table,
    ...(rows.length > shown.length ? ['', `${rows.length - shown.length} more steps: --json has them all.`] : []),
  ];
}

/** Names past `most` characters (24 for a step) are clipped, so that a long one does not push a line past the width. */
function clip(name: string, most = 24): string {
  return name.length <= most ? name : `${name.slice(0, most - 1)}…`;
}
