import type { RunResult } from '../result.js';
import { formatBytes, formatMs, formatPercent, formatSpeedup } from './format.js';
import { displayOrder, modeLabel, rateOf, timingLine } from './run-table.js';

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** A Markdown report of one run, for pull-request comments and CI job summaries. */
export function renderRunMarkdown(result: RunResult): string {
  const d = result.environment.device;
  const { summary, bound, verification } = result;
  const lines = [
    `### cuda-pipe · ${result.config.name} on ${d.name}`,
    '',
    `**Speedup over serial: ${formatSpeedup(summary)}** ` +
      `(${formatMs(summary.serialMs)} → ${formatMs(summary.overlappedMs)}); bound ${formatMs(bound.ms)} (limited by ${bound.limitedBy}), ` +
      `efficiency ${summary.efficiency.toFixed(2)}; verification **${verification.status}**.`,
    '',
    `${result.layout.chunks} chunks × ${result.layout.chunkElements} elements over ${result.layout.streams} streams, ${result.layout.orders.join(' and ')}; ` +
      result.buffers.filter((b) => b.role !== 'scratch').map((b) => `${b.name} ${formatBytes(b.bytes)} ${b.role}`).join(', ') + '.',
    '',
    '| mode | median | min | max | noise | n | copy rate |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...displayOrder(result.modes).map((m) => `| ${cell(modeLabel(m, result))} | ${formatMs(m.stats.median)} | ${formatMs(m.stats.min)} | ${formatMs(m.stats.max)} | ` +
      `${formatPercent(m.stats.relativeNoise, 2)} | ${m.stats.n} | ${rateOf(m)} |`),
    '',
    `<sub>${cell(timingLine(result))}. ${d.name}, driver ${result.environment.software.driver}, runtime ${result.environment.software.runtime}, ` +
      `cuda-pipe ${result.tool.version}, config hash ${result.config.hash}.</sub>`,
  ];
  for (const m of verification.mismatches) {
    lines.push('', `- ❌ output \`${m.buffer}\`: first difference at element ${m.index} (serial ${m.expected}, overlapped ${m.actual}); ${m.differing} elements differ`);
  }
  if (result.warnings.length) {
    lines.push('', '<details><summary>Warnings</summary>', '');
    for (const w of result.warnings) lines.push(`- ${w.message} ${w.remedy}`);
    lines.push('', '</details>');
  }
  return lines.join('\n');
}
