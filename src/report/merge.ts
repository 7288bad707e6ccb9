import Table from 'cli-table3';
import { type CollectiveSkew, type MergedConfig, type Merged, type ModeSkew, participantName, type RankFigures, type Skew } from '../compare/merge.js';
import { formatBytes, formatMs, formatPercent, formatRate } from '../format.js';
import type { Collective } from '../vocabulary.js';
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
  const distinct = new Set(c.ranks.map((r) => `${r.host}\0${r.device.index}`)).size;
  const what = distinct < c.ranks.length ? `${c.ranks.length} results on ${distinct} GPU${distinct === 1 ? '' : 's'}` : gpus;
  const lines = [style.bold(`${c.config}: ${what} on ${c.hosts.length} host${c.hosts.length === 1 ? '' : 's'}`)];
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
  // A GPU in two Results would be summed twice: two runs on one GPU headlined "2.00× the fastest single GPU".
  lines.push(
    c.sharedGpus.length
      ? `total: not summed, since ${c.sharedGpus.join(' and ')} ${c.sharedGpus.length === 1 ? 'appears' : 'appear'} in more than one result; ` +
          `the fastest single GPU: ${where(c.fastest)}, ${formatRate(c.fastest.gbps)}`
      : `total: ${formatRate(c.totalGbps)} moved across ${gpus}, ${c.scaling.toFixed(2)}× the fastest single GPU (${where(c.fastest)}, ${formatRate(c.fastest.gbps)})`,
  );
  if (c.slowest) {
    const { figures, trails } = c.slowest;
    lines.push(`slowest: ${where(figures)}, ${formatMs(figures.overlappedMs)}, ${formatPercent(trails)} behind the median of ${formatMs(c.medianMs)}`);
  }
  if (c.skew) lines.push(...skewLines(c.skew));
  for (const note of c.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

const COLLECTIVE_NAMES: Record<Collective, string> = { allreduce: 'all-reduce', reducescatter: 'reduce-scatter', allgather: 'all-gather' };

/** Up to this many collectives a mode, each gets a row; beyond, a row each would bury the summary. */
export const SKEW_ROWS_MAX = 8;

const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;

/** When each rank reached each collective: per mode a summary, a row per call when few, and who arrived last most often. */
export function skewLines(skew: Skew): string[] {
  if (skew.kind === 'unknown') return [`collective arrival skew: not comparable: ${skew.reason}.`];
  const lines: string[] = [];
  for (const m of skew.modes) {
    lines.push(modeSummary(m));
    if (m.calls.length <= SKEW_ROWS_MAX) lines.push(skewTable(m.calls));
  }
  const { who, count, of } = skew.mostOftenLast;
  lines.push(`last to arrive most often: ${who.map(participantName).join(' and ')}, at ${count} of ${of} collectives${who.length > 1 ? ' each' : ''}`);
  for (const reason of skew.unpaired) lines.push(`collective arrival skew not paired for ${reason}.`);
  lines.push(
    "(a rank arrives when its stream reaches the call: the op's begin event on the host's wall clock, good to the lag between issuing a traced rep's start event and its GPU recording it)",
  );
  return lines;
}

function modeSummary(m: ModeSkew): string {
  const kinds = [...new Set(m.calls.map((c) => `${COLLECTIVE_NAMES[c.collective]}s of ${formatBytes(c.bytes)}`))].join(', ');
  const last = m.last.map((l) => `${participantName(l.who)} ${times(l.count)}`).join(', ');
  return `collective arrival skew, ${m.mode}: ${m.calls.length} ${kinds}: median ${formatMs(m.medianMs)}, max ${formatMs(m.maxMs)}; last: ${last}`;
}

function skewTable(calls: readonly CollectiveSkew[]): string {
  const first = calls[0];
  const who = first ? first.arrivals.map((a) => participantName(a.who)) : [];
  const table = new Table({
    head: ['collective', ...who, 'skew', 'last'],
    style: { head: [], border: [] },
    colAligns: ['left', ...who.map(() => 'right' as const), 'right', 'left'],
  });
  for (const c of calls) {
    const earliest = Math.min(...c.arrivals.map((a) => a.epochMs));
    const bucket = c.chunk === null ? '' : ` bucket ${c.chunk}`;
    table.push([
      `${c.order + 1}${bucket} ${COLLECTIVE_NAMES[c.collective]}`,
      ...c.arrivals.map((a) => (a.epochMs === earliest ? 'first' : `+${formatMs(a.epochMs - earliest)}`)),
      formatMs(c.skewMs),
      participantName(c.last.who),
    ]);
  }
  return table.toString();
}
