import Table from 'cli-table3';
import type { MergedConfig, Merged, RankFigures } from '../compare/merge.js';
import { formatMs, formatPercent, formatRate } from '../format.js';
import type { Style } from './style.js';

const rankText = (r: RankFigures) => (r.rank === null ? '–' : String(r.rank));
const gpuText = (r: RankFigures) => `${r.device.index} ${r.device.name}`;
const where = (r: RankFigures) => `${r.host} GPU ${r.device.index}${r.rank === null ? '' : ` (rank ${r.rank})`}`;

/** `cuda-pipe merge`: per config, one table per host with a row per GPU, then the totals and the slowest GPU. */
export function renderMerge(merged: Merged, style: Style): string {
  return merged.configs.map((c) => renderConfig(c, style)).join('\n\n');
}

function renderConfig(c: MergedConfig, style: Style): string {
  const gpus = `${c.ranks.length} GPU${c.ranks.length === 1 ? '' : 's'}`;
  const lines = [style.bold(`${c.config}: ${gpus} on ${c.hosts.length} host${c.hosts.length === 1 ? '' : 's'}`)];
  for (const host of c.hosts) {
    const table = new Table({
      head: ['GPU', 'rank', 'overlapped', 'speedup', 'efficiency', 'throughput'],
      style: { head: [], border: [] },
      colAligns: ['left', 'right', 'right', 'right', 'right', 'right'],
    });
    for (const r of host.ranks) {
      const mark = c.slowest?.figures === r ? style.bold : (s: string) => s;
      table.push([mark(gpuText(r)), rankText(r), mark(formatMs(r.overlappedMs)), `${r.speedup.toFixed(2)}×`, formatPercent(r.efficiency), formatRate(r.gbps)]);
    }
    lines.push(`host ${host.host}: ${formatRate(host.gbps)} over ${host.ranks.length} GPU${host.ranks.length === 1 ? '' : 's'}`, table.toString());
  }
  lines.push(`total: ${formatRate(c.totalGbps)} moved across ${gpus}, ${c.scaling.toFixed(2)}× the fastest single GPU (${where(c.fastest)}, ${formatRate(c.fastest.gbps)})`);
  if (c.slowest) {
    const { figures, trails } = c.slowest;
    lines.push(`slowest: ${where(figures)}, ${formatMs(figures.overlappedMs)}, ${formatPercent(trails)} behind the median of ${formatMs(c.medianMs)}`);
  }
  for (const note of c.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}
