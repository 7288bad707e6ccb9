import { formatBytes, formatEfficiency, formatMs, formatPercent } from '../../format.js';
import type { RunResult } from '../../result/schema.js';
import type { RunExporter } from '../exporter.js';
import { renderMarkdownTable } from '../big-table.js';
import { kindLines } from '../kind-sections.js';
import { devicesLines } from '../devices.js';
import { eventCostLines, toolboxLines } from '../toolbox.js';
import {
  comparisonText,
  displayOrder,
  formatSpeedup,
  leadComparisons,
  modeLabel,
  modelLines,
  rateOf,
  serialCaveat,
  timingLine,
  verificationWords,
} from '../labels.js';

const cell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * "16 chunks × 4194304 elements over 4 streams, depth-first; input 256 MiB in, output 256 MiB out.": each layout, then
 * the buffers the host holds, or where every buffer is on the device alone (a GEMM's scratch), that they are.
 */
function layoutLine(result: RunResult): string {
  const unit = result.pipeline.items === undefined ? 'elements' : 'items';
  const layouts = new Set(
    result.modes.flatMap((m) =>
      m.role.kind === 'overlapped' && m.analysis
        ? [
            `${m.role.layout.chunks} chunks × ${m.analysis.chunkElements} ${unit} over ${m.role.layout.streams} streams, ${m.role.layout.order}`,
          ]
        : [],
    ),
  );
  const held = result.buffers.filter((b) => b.role !== 'scratch');
  const buffers = held.length
    ? [held.map((b) => `${b.name} ${formatBytes(b.bytes)} ${b.role}`).join(', ')]
    : result.buffers.length
      ? [`${result.buffers.map((b) => b.name).join(', ')} on the device only (scratch), none copied`]
      : [];
  return `${[...layouts, ...buffers].join('; ')}.`;
}

/** A Markdown report of one run, for pull-request comments and CI job summaries. */
export function renderRunMarkdown(result: RunResult): string {
  const names = result.devices.map((d) => d.name).join(', ');
  const { verification } = result;
  const headline = result.modes.find((m) => m.id === result.summary.mode);
  const bound = headline?.analysis?.bound;
  const caveat = headline ? serialCaveat(headline, result) : null;
  const lines = [
    `### cuda-pipe · ${result.config.name} on ${names}`,
    '',
    ...leadComparisons(result).flatMap((c) => [`**${cell(comparisonText(c))}**`, '']),
    (caveat?.omit
      ? `Speedup over serial: ${caveat.text}`
      : `**Speedup over serial: ${formatSpeedup(result.summary)}** ` +
        `(${formatMs(result.summary.serialMs)} → ${formatMs(result.summary.overlappedMs)}${caveat ? `; ${caveat.text}` : ''})`) +
      (bound
        ? `; bound ${formatMs(bound.ms)} (limited by ${bound.limitedBy}), efficiency ${formatEfficiency(result.summary.efficiency)}`
        : '') +
      `; verification **${verificationWords(verification)}**.`,
    ...(headline ? modelLines(headline).map((line) => `- ${line}`) : []),
    '',
    layoutLine(result),
    '',
    renderMarkdownTable({
      head: ['mode', 'median', 'min', 'max', 'noise', 'n', 'rate', 'speedup', 'efficiency'],
      colAligns: ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
      rows: displayOrder(result.modes).map((m) => [
        modeLabel(m, result),
        formatMs(m.stats.median),
        formatMs(m.stats.min),
        formatMs(m.stats.max),
        formatPercent(m.stats.relativeNoise, 2),
        String(m.stats.n),
        rateOf(m),
        m.analysis && !serialCaveat(m, result)?.omit ? formatSpeedup(m.analysis) : '',
        m.analysis ? formatEfficiency(m.analysis.efficiency) : '',
      ]),
    }),
    '',
    `<sub>${cell(timingLine(result))}. ${names}, driver ${result.environment.software.driver}, runtime ${result.environment.software.runtime}, ` +
      `cuda-pipe ${result.tool.version}, config hash ${result.config.hash}.</sub>`,
  ];
  const devices = [...devicesLines(result), ...kindLines(result)];
  if (devices.length)
    lines.push('', ...devices.map((line) => (line.startsWith('  ') ? `  - ${line.trim()}` : `- ${line}`)));
  const toolbox = [...toolboxLines(result), ...eventCostLines(result)];
  if (toolbox.length) lines.push('', ...toolbox.map((line) => `- ${line}`));
  for (const m of verification.mismatches) {
    lines.push(
      '',
      `- ❌ output \`${m.buffer}\`${m.device === undefined ? '' : ` on GPU ${m.device}`} of mode \`${m.mode}\`: first difference at element ${m.index} (serial ${m.expected}, overlapped ${m.actual}); ${m.differing} elements differ`,
    );
  }
  if (result.warnings.length) {
    lines.push('', '<details><summary>Warnings</summary>', '');
    for (const w of result.warnings) lines.push(`- ${w.message} ${w.remedy}`);
    lines.push('', '</details>');
  }
  return lines.join('\n');
}

export const markdownExporter: RunExporter = {
  description: 'a Markdown report, for pull requests and CI job summaries',
  render: (results) => results.map(renderRunMarkdown).join('\n\n'),
};
