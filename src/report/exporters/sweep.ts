import Table from 'cli-table3';
import { formatMs } from '../../format.js';
import type { ModeResult, RunResult } from '../../result/schema.js';
import { commLines } from '../comm.js';
import type { RunExporter } from '../exporter.js';
import { formatSpeedup, roleLabel } from '../labels.js';
import type { Style } from '../style.js';

// A sweep's results: a heat map of speedup over serial (streams × chunks) per issue order, the best layout with its
// uncertainty and the layouts that tie with it, and the YAML that reproduces it.

interface Cell {
  readonly mode: ModeResult;
  readonly chunks: number;
  readonly streams: number;
}

function cells(result: RunResult, order: string): Cell[] {
  return (result.sweep?.points ?? []).flatMap((p) => {
    const mode = result.modes.find((m) => m.id === p.mode);
    return p.order === order && mode ? [{ mode, chunks: p.chunks, streams: p.streams }] : [];
  });
}

const settingsText = (result: RunResult) =>
  Object.entries(result.sweep?.settings ?? {})
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');

/** The terminal view: one heat map per order, then the best layout and how to get it. */
export function renderSweepTable(result: RunResult, style: Style): string {
  const sweep = result.sweep;
  if (!sweep) return '';
  const lines: string[] = [];
  const settings = settingsText(result);
  lines.push(
    style.bold(`sweep of ${result.config.name} on ${result.devices.map((d) => d.name).join(', ')}${settings ? ` with ${settings}` : ''}`) +
      `: speedup over serial (${formatMs(result.summary.serialMs)}); · stopped early as clearly slower, ≈ ties with the best`,
  );
  const ties = new Set(sweep.best.ties);
  for (const order of new Set(sweep.points.map((p) => p.order))) {
    const grid = cells(result, order);
    const chunks = [...new Set(grid.map((c) => c.chunks))].sort((a, b) => a - b);
    const streams = [...new Set(grid.map((c) => c.streams))].sort((a, b) => a - b);
    const table = new Table({ head: [`${order}: streams \\ chunks`, ...chunks.map(String)], style: { head: [], border: [] } });
    for (const s of streams) {
      table.push([
        String(s),
        ...chunks.map((c) => {
          const cell = grid.find((g) => g.streams === s && g.chunks === c);
          if (!cell?.mode.analysis) return '–';
          const text = `${cell.mode.analysis.speedup.toFixed(2)}×${cell.mode.stoppedBy === 'clearly-slower' ? '·' : ties.has(cell.mode.id) ? '≈' : ''}`;
          return cell.mode.id === sweep.best.mode ? style.bold.green(text) : text;
        }),
      ]);
    }
    lines.push(table.toString());
  }
  // With collectives, the best layout's communication (its traced rep) and the bucket model at its bucket count.
  lines.push(...bestLines(result), 'to reproduce it:', ...yamlFragment(result).map((l) => `  ${l}`), ...commLines(result));
  return lines.join('\n');
}

/** The best layout with its uncertainty, the layouts that tie with it, and how long the race took. */
export function bestLines(result: RunResult): string[] {
  const sweep = result.sweep;
  const best = result.modes.find((m) => m.id === sweep?.best.mode);
  if (!sweep || !best?.analysis || best.role.kind !== 'overlapped') return [];
  const { layout } = best.role;
  const ties = sweep.best.ties.flatMap((id) => {
    const m = result.modes.find((x) => x.id === id);
    return m ? [`${roleLabel(m.role)} (${formatMs(m.stats.median)})`] : [];
  });
  const early = sweep.points.filter((p) => result.modes.find((m) => m.id === p.mode)?.stoppedBy === 'clearly-slower').length;
  return [
    `best: ${layout.chunks} chunks × ${layout.streams} streams, ${layout.order}: ${formatMs(best.stats.median)} ` +
      `(q1 ${formatMs(best.stats.q1)}, q3 ${formatMs(best.stats.q3)}), ${formatSpeedup(best.analysis)} over serial, efficiency ${best.analysis.efficiency.toFixed(2)}`,
    ties.length ? `ties within noise: ${ties.join('; ')}` : 'no other layout ties with it within noise',
    `${sweep.points.length} layouts in ${(sweep.elapsedMs / 1000).toFixed(1)} s; ${early} stopped early as clearly slower`,
  ];
}

/** The config lines that give the best layout (and this result's settings). */
export function yamlFragment(result: RunResult): string[] {
  const best = result.modes.find((m) => m.id === result.sweep?.best.mode);
  if (best?.role.kind !== 'overlapped') return [];
  const { layout } = best.role;
  const settings = Object.entries(result.sweep?.settings ?? {}).map(([k, v]) => `# and ${k}: ${v}`);
  return ['pipeline:', `  chunks: ${layout.chunks}`, `  streams: ${layout.streams}`, `  order: ${layout.order}`, ...settings];
}

/** The Markdown view: the same heat maps as tables. */
export function renderSweepMarkdown(result: RunResult): string {
  const sweep = result.sweep;
  if (!sweep) return '';
  const lines = [`### cuda-pipe sweep · ${result.config.name} on ${result.devices.map((d) => d.name).join(', ')}`, ''];
  for (const order of new Set(sweep.points.map((p) => p.order))) {
    const grid = cells(result, order);
    const chunks = [...new Set(grid.map((c) => c.chunks))].sort((a, b) => a - b);
    const streams = [...new Set(grid.map((c) => c.streams))].sort((a, b) => a - b);
    lines.push(`| ${order}: streams \\ chunks | ${chunks.join(' | ')} |`, `| --- |${chunks.map(() => ' ---: |').join('')}`);
    for (const s of streams) {
      const row = chunks.map((c) => {
        const cell = grid.find((g) => g.streams === s && g.chunks === c);
        const text = cell?.mode.analysis ? `${cell.mode.analysis.speedup.toFixed(2)}×` : '–';
        return cell?.mode.id === sweep.best.mode ? `**${text}**` : text;
      });
      lines.push(`| ${s} | ${row.join(' | ')} |`);
    }
    lines.push('');
  }
  lines.push(...bestLines(result).map((l) => `- ${l}`), '', '```yaml', ...yamlFragment(result), '```');
  return lines.join('\n');
}

export const sweepTableExporter: RunExporter = {
  description: 'the sweep heat map and its best layout',
  render: (results, style) => results.map((r) => renderSweepTable(r, style)).join('\n\n'),
};

export const sweepMarkdownExporter: RunExporter = {
  description: 'the sweep heat map as Markdown',
  render: (results) => results.map(renderSweepMarkdown).join('\n\n'),
};
