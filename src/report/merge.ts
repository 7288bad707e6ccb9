import type { MergedConfig, Merged, RankFigures, StepFigures } from '../compare/merge.js';
import { type CollectiveSkew, type ModeSkew, participantName, type Skew } from '../compare/skew.js';
import { formatBytes, formatEfficiency, formatMs, formatPercent, formatRate } from '../format.js';
import type { Collective } from '../vocabulary.js';
import { type Column, fitTable, type Layout, without } from './fold.js';
import type { Style } from './style.js';
import { DEFAULT_COLUMNS } from './width.js';

const rankText = (r: RankFigures) => (r.rank === null ? '–' : String(r.rank));
const gpuText = (r: RankFigures) => `${r.device.index} ${r.device.name}`;
const where = (r: RankFigures) => `${r.host} GPU ${r.device.index}${r.rank === null ? '' : ` (rank ${r.rank})`}`;

/**
 * `cuda-pipe merge`: per config, the answer (total, slowest GPU, skew), then a table per host and the detail; tables
 * within `columns`.
 */
export function renderMerge(merged: Merged, style: Style, columns = DEFAULT_COLUMNS): string {
  return merged.configs.map((c) => renderConfig(c, style, columns)).join('\n\n');
}

/**
 * A config's answer: how many GPUs, their total throughput, the slowest GPU and how far the ranks reached collectives
 * apart.
 */
function mergeAnswer(c: MergedConfig, style: Style): string[] {
  const gpus = `${c.ranks.length} GPU${c.ranks.length === 1 ? '' : 's'}`;
  const distinct = new Set(c.ranks.map((r) => `${r.host}\0${r.device.index}`)).size;
  const what =
    distinct < c.ranks.length ? `${c.ranks.length} results on ${distinct} GPU${distinct === 1 ? '' : 's'}` : gpus;
  const lines = [style.bold(`${c.config}: ${what} on ${c.hosts.length} host${c.hosts.length === 1 ? '' : 's'}`)];
  if (c.step) return [...lines, ...stepLines(c, c.step)];
  // A GPU in two Results would be summed twice: two runs on one GPU headlined "2.00× the fastest single GPU".
  lines.push(
    c.sharedGpus.length
      ? `total: not summed, since ${c.sharedGpus.join(' and ')} ${c.sharedGpus.length === 1 ? 'appears' : 'appear'} in more than one result; ` +
          `the fastest single GPU: ${where(c.fastest)}, ${formatRate(c.fastest.gbps)}`
      : `total: ${formatRate(c.totalGbps)} across ${gpus}, ${c.scaling.toFixed(2)}× the fastest single GPU (${where(c.fastest)}, ${formatRate(c.fastest.gbps)})`,
  );
  if (c.slowest) {
    const { figures, trails } = c.slowest;
    lines.push(
      `slowest: ${where(figures)}, ${formatMs(figures.overlappedMs)}, ${formatPercent(trails)} behind the median of ${formatMs(c.medianMs)}`,
    );
  }
  if (c.skew?.kind === 'measured' && c.skew.modes.length) {
    const { who, count, of } = c.skew.mostOftenLast;
    const most = Math.max(...c.skew.modes.map((m) => m.maxMs));
    lines.push(
      `skew: ranks reached collectives up to ${formatMs(most)} apart; last most often: ${who.map(participantName).join(' and ')} (${count} of ${of})`,
    );
  }
  return lines;
}

/**
 * The answer for ranks that meet at collectives every step: the step, as slow as the slowest rank, what the ranks
 * bought against one GPU computing alone, and how far apart they reached the collectives. Their copies move a few
 * bytes, so no rate is given.
 */
function stepLines(c: MergedConfig, step: StepFigures): string[] {
  const lines = [
    c.slowest
      ? `step: ${formatMs(step.slowestMs)}, set by the slowest GPU, ${where(c.slowest.figures)}, ${formatPercent(c.slowest.trails)} behind the median of ${formatMs(c.medianMs)}: every rank waits for it at each collective`
      : `step: ${formatMs(step.slowestMs)}`,
  ];
  if (step.scaling !== null && step.computeMs !== null && !c.sharedGpus.length) {
    lines.push(
      `scaling: ${c.ranks.length} GPUs, each computing ${formatMs(step.computeMs)} a step alone (its kernels alone): ` +
        `${step.scaling.toFixed(2)}× one GPU's compute, ${formatPercent(step.scaling / c.ranks.length)} of linear`,
    );
  }
  if (c.sharedGpus.length)
    lines.push(
      `scaling: not given, since ${c.sharedGpus.join(' and ')} ${c.sharedGpus.length === 1 ? 'appears' : 'appear'} in more than one result`,
    );
  if (c.skew?.kind === 'measured' && c.skew.modes.length) {
    const { who, count, of } = c.skew.mostOftenLast;
    const most = Math.max(...c.skew.modes.map((m) => m.maxMs));
    lines.push(
      `skew: ranks reached collectives up to ${formatMs(most)} apart; last most often: ${who.map(participantName).join(' and ')} (${count} of ${of})`,
    );
  }
  return lines;
}

function renderConfig(c: MergedConfig, style: Style, columns: number): string {
  const lines = [...mergeAnswer(c, style)];
  for (const host of c.hosts) {
    const gpus = `${host.ranks.length} GPU${host.ranks.length === 1 ? '' : 's'}`;
    const slowest = Math.max(...host.ranks.map((r) => r.overlappedMs));
    const head = c.step
      ? `host ${host.host}: ${gpus}, the slowest ${formatMs(slowest)} a step`
      : `host ${host.host}: ${formatRate(host.gbps)} over ${gpus}`;
    lines.push('', head, hostTable(c, host.ranks, style, columns));
  }
  if (c.skew) lines.push('', ...skewLines(c.skew, columns));
  for (const note of c.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

/** A host's GPUs, a row each, the slowest in bold: the GPU by index alone, then without speedup, to fit `columns`. */
function hostTable(c: MergedConfig, ranks: readonly RankFigures[], style: Style, columns: number): string {
  const mark = (r: RankFigures) => (c.slowest?.figures === r ? style.bold : (s: string) => s);
  const figures: Layout = [
    { head: 'rank', align: 'right', cells: ranks.map(rankText) },
    { head: 'overlapped', align: 'right', cells: ranks.map((r) => mark(r)(formatMs(r.overlappedMs))) },
    { head: 'speedup', align: 'right', cells: ranks.map((r) => `${r.speedup.toFixed(2)}×`) },
    { head: 'efficiency', align: 'right', cells: ranks.map((r) => formatEfficiency(r.efficiency)) },
    // Ranks that meet at collectives move a few bytes a step: their rate says nothing.
    ...(c.step ? [] : [{ head: 'throughput', align: 'right' as const, cells: ranks.map((r) => formatRate(r.gbps)) }]),
  ];
  const index: Layout = [{ head: 'GPU', cells: ranks.map((r) => mark(r)(String(r.device.index))) }, ...figures];
  return fitTable(
    [[{ head: 'GPU', cells: ranks.map((r) => mark(r)(gpuText(r))) }, ...figures], index, without(index, 'speedup')],
    columns,
  );
}

const COLLECTIVE_NAMES: Record<Collective, string> = {
  allreduce: 'all-reduce',
  reducescatter: 'reduce-scatter',
  allgather: 'all-gather',
};

/** Up to this many collectives a mode, each gets a row; beyond, a row each would bury the summary. */
export const SKEW_ROWS_MAX = 8;

const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;

/**
 * When each rank reached each collective: per mode a summary, a row per call when few, and who arrived last most often.
 */
export function skewLines(skew: Skew, columns = DEFAULT_COLUMNS): string[] {
  if (skew.kind === 'unknown') return [`collective arrival skew: not comparable: ${skew.reason}.`];
  const lines: string[] = [];
  for (const m of skew.modes) {
    lines.push(modeSummary(m));
    if (m.calls.length <= SKEW_ROWS_MAX) lines.push(skewTable(m.calls, columns));
  }
  const { who, count, of } = skew.mostOftenLast;
  lines.push(
    `last to arrive most often: ${who.map(participantName).join(' and ')}, at ${count} of ${of} collectives${who.length > 1 ? ' each' : ''}`,
  );
  for (const reason of skew.unpaired) lines.push(`collective arrival skew not paired for ${reason}.`);
  lines.push(
    "(a rank arrives when its stream reaches the call: the op's begin event on the host's wall clock, good to the lag between issuing a traced rep's start event and its GPU recording it)",
  );
  return lines;
}

function modeSummary(m: ModeSkew): string {
  const kinds = [...new Set(m.calls.map((c) => `${COLLECTIVE_NAMES[c.collective]}s of ${formatBytes(c.bytes)}`))].join(
    ', ',
  );
  const last = m.last.map((l) => `${participantName(l.who)} ${times(l.count)}`).join(', ');
  // Two lines: a mode's id alone takes half a line of 100 columns.
  return `collective arrival skew, ${m.mode}: ${m.calls.length} ${kinds}\n  median ${formatMs(m.medianMs)}, max ${formatMs(m.maxMs)}; last: ${last}`;
}

function skewTable(calls: readonly CollectiveSkew[], columns: number): string {
  const first = calls[0];
  const arrivals = first
    ? first.arrivals.map(
        (a, i): Column => ({
          head: participantName(a.who),
          align: 'right',
          cells: calls.map((c) => {
            const earliest = Math.min(...c.arrivals.map((x) => x.epochMs));
            const at = c.arrivals[i]?.epochMs ?? earliest;
            return at === earliest ? 'first' : `+${formatMs(at - earliest)}`;
          }),
        }),
      )
    : [];
  const layout: Layout = [
    {
      head: 'collective',
      cells: calls.map(
        (c) => `${c.order + 1}${c.chunk === null ? '' : ` bucket ${c.chunk}`} ${COLLECTIVE_NAMES[c.collective]}`,
      ),
    },
    ...arrivals,
    { head: 'skew', align: 'right', cells: calls.map((c) => formatMs(c.skewMs)) },
    { head: 'last', cells: calls.map((c) => participantName(c.last.who)) },
  ];
  return fitTable([layout], columns);
}
