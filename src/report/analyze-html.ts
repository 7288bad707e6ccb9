import { basename } from 'node:path';
import type { AnalysisDocument, DeviceAnalysis } from '../analysis/document.js';
import { escapeControl, formatMs } from '../format.js';
import { collectiveLines, count, FINDINGS_HEAD, stepCells, summaryLines, verdictLines, who } from './analyze.js';
import { htmlPage } from './html.js';
import { escapeXml as escape } from './timeline-common.js';

// `analyze --html`: one self-contained page (inline CSS, no script, a Content-Security-Policy that fetches nothing,
// as run's report), with the terminal's lines as headings and lists, every step of every device in a table (the
// terminal shows 12), the findings with their sentences, and the notes.

const CSS = `
body { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; color: #222; margin: 24px; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
ul { margin: 4px 0 10px; padding-left: 22px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 1px solid #999; }
.finding { margin: 6px 0; }
.finding code { font-weight: bold; }
.meta { color: #555; }
`;

export function renderAnalysisHtml(document: AnalysisDocument): string {
  const traces = new Set(document.devices.map((d) => d.file)).size;
  const title = `cuda-pipe analyze: ${traces} trace${traces === 1 ? '' : 's'}, ${document.devices.length} device${document.devices.length === 1 ? '' : 's'}`;
  const body: string[] = [
    `<h1>${escape(title)}</h1>`,
    `<p class="meta">cuda-pipe ${escape(document.tool.version)}, ${escape(document.schema)} version ${document.version}</p>`,
  ];
  if (document.verdicts) {
    const [head, ...rest] = verdictLines(document.verdicts);
    body.push(`<h2>${escape(head!)}</h2>`, list(rest.map((l) => l.trim())));
  }
  for (const device of document.devices) {
    const [head, ...facts] = summaryLines(device, document.findings);
    body.push(`<h2>${escape(head!)}</h2>`, list(facts));
  }
  if (document.collectives) {
    const [head, ...rest] = collectiveLines(document.collectives);
    body.push(`<h2>${escape(head!)}</h2>`, list(rest));
  }
  for (const device of document.devices) body.push(...stepTable(device));
  if (document.findings.length) {
    body.push(`<h2>${escape(FINDINGS_HEAD)}</h2>`);
    for (const f of document.findings)
      body.push(
        `<p class="finding">${escape(who(f))} <code>${escape(f.code)}</code> ${escape(`${formatMs(f.ms)} (${count(f.steps, 'step')})`)}: ${escape(f.message)}</p>`,
      );
  }
  if (document.notes.length) body.push('<h2>Notes</h2>', list(document.notes.map(escapeControl)));
  return [...htmlPage(title, CSS, body), ''].join('\n');
}

function list(items: readonly string[]): string {
  return `<ul>\n${items.map((i) => `<li>${escape(i)}</li>`).join('\n')}\n</ul>`;
}

/** Every step: a page has room for them all. */
function stepTable(device: DeviceAnalysis): string[] {
  const { head, rows } = stepCells(device);
  return [
    `<h3>Steps of ${escape(who(device))} (${escape(basename(device.file))})</h3>`,
    '<table>',
    `<thead><tr>${head.map((h) => `<th>${escape(h)}</th>`).join('')}</tr></thead>`,
    '<tbody>',
    ...rows.map((cells) => `<tr>${cells.map((c) => `<td>${escape(c)}</td>`).join('')}</tr>`),
    '</tbody>',
    '</table>',
  ];
}
