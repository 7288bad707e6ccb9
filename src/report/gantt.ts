import type { ChalkInstance } from 'chalk';
import { opInterval } from '../analysis/timeline.js';
import type { RunResult, TimelineOp, TracedRep } from '../result/schema.js';
import {
  analysisFacts, analyzeTracedRep, deviceLabel, deviceOf, IDLE_COLUMNS, idleRows, ms, niceTicks, rowLabel, type Stage,
  legendStages, STAGE_LETTERS, STAGE_NAMES, STAGES, tickLabel, type TimelineGroup, type TimelineRow, timelineGroups,
} from './timeline-common.js';

// The timeline in a terminal: one row per stream, time across, a letter per stage in every cell an op covers, so
// the chart reads the same with and without colour.

export interface GanttOptions {
  /** Colours; a level-0 instance (NO_COLOR, not a terminal) gives plain letters. */
  readonly style: ChalkInstance;
  /** Terminal width in columns; default process.stdout.columns, or 100 when that is unknown. */
  readonly columns?: number;
  /** Only this mode's traced reps; default every traced mode. */
  readonly mode?: string;
}

export const IDLE_CELL = '.';
const MIN_CHART_COLUMNS = 10;

/** Background colours by stage, from the 16 every terminal has, so level-1 colour suffices. */
function paint(style: ChalkInstance, stage: Stage, text: string): string {
  switch (stage) {
    case 'h2d':
      return style.bgBlue.whiteBright(text);
    case 'kernel':
      return style.bgGreen.black(text);
    case 'd2h':
      return style.bgMagenta.whiteBright(text);
    case 'host':
      return style.bgGray.black(text);
    case 'peer':
      return style.bgYellow.black(text);
  }
}

/** The width of the terminal `stream` writes to, or 100 when it is not a terminal. */
export function defaultColumns(stream: NodeJS.WriteStream = process.stdout): number {
  const columns = stream.columns;
  return columns !== undefined && columns > 0 ? columns : 100;
}

export function renderGantt(result: RunResult, options: GanttOptions): string {
  const groups = timelineGroups(result, options.mode);
  if (!groups.length) return 'No traced reps in this result: run with --timeline to record one.';
  const columns = options.columns ?? defaultColumns();
  return groups.map((group) => renderGroup(result, group, columns, options.style)).join('\n\n');
}

function renderGroup(result: RunResult, group: TimelineGroup, columns: number, style: ChalkInstance): string {
  const labels = group.rows.map((row) => rowLabel(row, group.multiDevice));
  const labelWidth = Math.max(...labels.map((l) => l.length), 2);
  // Row layout: label, a space, '|', the cells, '|'.
  const chartWidth = Math.max(MIN_CHART_COLUMNS, columns - labelWidth - 3);
  // Scale lines start where the cells do, one column right of the row's '|'.
  const indent = ' '.repeat(labelWidth + 2);
  const lines = [style.bold(`${group.label}: traced rep`), ...scaleLines(group.spanMs, chartWidth).map((l) => indent + l)];
  group.rows.forEach((row, i) => {
    const previous = group.rows[i - 1];
    if (group.multiDevice && previous?.device !== row.device) lines.push(style.dim(deviceLabel(deviceOf(result, row.device), row.device)));
    const queued = queuedCells(row.ops, group.spanMs, chartWidth);
    const cells = runs(rowCells(row.ops, group.spanMs, chartWidth).map((stage, c) => stage ?? (queued[c] ? QUEUED : null))).map(({ stage, length }) =>
      stage === QUEUED ? style.dim(QUEUED_CELL.repeat(length)) : stage ? paint(style, stage, STAGE_LETTERS[stage].repeat(length)) : style.dim(IDLE_CELL.repeat(length)));
    lines.push(`${labels[i]!.padEnd(labelWidth)} |${cells.join('')}|`);
  });
  lines.push(`${indent}1 column = ${ms(group.spanMs / chartWidth)}`);
  lines.push(legend(style, group.reps));
  for (const rep of group.reps) lines.push('', ...analysisLines(result, rep, group.multiDevice).flatMap((l) => wrap(l, columns)));
  return lines.join('\n');
}

/**
 * What each of `width` cells shows: the stage that covers most of the cell when ops cover at least half of it,
 * else idle. An op too short to win any cell still gets the cell holding its midpoint, so no op disappears.
 */
export function rowCells(ops: readonly TimelineOp[], spanMs: number, width: number): (Stage | null)[] {
  const cellMs = spanMs > 0 ? spanMs / width : 1;
  const cells = Array.from({ length: width }, (_, c) => {
    const from = c * cellMs;
    const to = from + cellMs;
    const cover = new Map<Stage, number>();
    for (const op of ops) {
      const { start, end } = opInterval(op);
      const overlap = Math.min(to, end) - Math.max(from, start);
      if (overlap > 0) cover.set(op.kind, (cover.get(op.kind) ?? 0) + overlap);
    }
    const total = [...cover.values()].reduce((a, b) => a + b, 0);
    if (total < cellMs / 2) return null;
    // Ties go to the earlier stage in STAGES, so the picture does not depend on op order.
    return STAGES.reduce<Stage | null>((best, s) => ((cover.get(s) ?? 0) > (best ? (cover.get(best) ?? 0) : 0) ? s : best), null);
  });
  for (const op of ops) {
    const { start, end } = opInterval(op);
    const first = Math.min(width - 1, Math.floor(start / cellMs));
    const last = Math.min(width - 1, Math.max(first, Math.ceil(end / cellMs) - 1));
    if (!cells.slice(first, last + 1).includes(op.kind)) cells[Math.min(width - 1, Math.floor((start + end) / 2 / cellMs))] = op.kind;
  }
  return cells;
}

const QUEUED = 'queued';
/** A cell in which an op sat queued (CUPTI only): its stream had reached it, its engine had not started it. */
export const QUEUED_CELL = '~';

/** Cells at least half covered by some op's queued part (from its begin event to its engine's start). */
export function queuedCells(ops: readonly TimelineOp[], spanMs: number, width: number): boolean[] {
  const cellMs = spanMs > 0 ? spanMs / width : 1;
  return Array.from({ length: width }, (_, c) => {
    const from = c * cellMs;
    const to = from + cellMs;
    const covered = ops.reduce((sum, op) => sum + (op.engineStartMs === undefined ? 0 : Math.max(0, Math.min(to, op.engineStartMs) - Math.max(from, op.startMs))), 0);
    return covered >= cellMs / 2;
  });
}

/** Consecutive equal cells, so each run gets one pair of colour codes rather than one per cell. */
function runs<T>(cells: readonly T[]): { stage: T; length: number }[] {
  const out: { stage: T; length: number }[] = [];
  for (const stage of cells) {
    const last = out[out.length - 1];
    if (last && last.stage === stage) last.length += 1;
    else out.push({ stage, length: 1 });
  }
  return out;
}

/** Tick labels over a ruler, both `width` wide, aligned with the chart's cells. */
export function scaleLines(spanMs: number, width: number): [string, string] {
  const ticks = niceTicks(spanMs, Math.max(1, Math.floor(width / 10)));
  const labels = Array.from({ length: width }, () => ' ');
  const ruler = Array.from({ length: width }, () => '-');
  let free = 0;
  for (const t of ticks) {
    const column = Math.min(width - 1, Math.round((t / spanMs) * width));
    ruler[column] = '+';
    const text = `${tickLabel(t, ticks)}${t === 0 ? ' ms' : ''}`;
    const start = Math.max(0, Math.min(column, width - text.length));
    // Skip a label that would run into the previous one; the tick mark stays.
    if (start < free) continue;
    for (let i = 0; i < text.length; i += 1) labels[start + i] = text[i]!;
    free = start + text.length + 1;
  }
  return [labels.join('').trimEnd(), ruler.join('')];
}

/** Breaks a long line at spaces to fit `width`, indenting the continuation under the line's own text. */
export function wrap(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const indent = ' '.repeat(Math.min(/^ */.exec(line)![0].length + 2, Math.floor(width / 2)));
  const out: string[] = [];
  let current = '';
  for (const word of line.trim().split(' ')) {
    const head = out.length ? indent : line.slice(0, line.length - line.trimStart().length);
    if (current && (head + current + ' ' + word).length > width) {
      out.push(head + current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  out.push((out.length ? indent : line.slice(0, line.length - line.trimStart().length)) + current);
  return out;
}

function legend(style: ChalkInstance, reps: readonly TracedRep[]): string {
  const items = legendStages(reps).map((s) => `${paint(style, s, STAGE_LETTERS[s])} ${STAGE_NAMES[s]}`);
  const queued = reps.some((r) => r.timing?.source === 'cupti') ? `  ${style.dim(QUEUED_CELL)} queued (engine not yet started)` : '';
  return `legend: ${items.join('  ')}  ${style.dim(IDLE_CELL)} idle${queued}`;
}

function analysisLines(result: RunResult, rep: TracedRep, multiDevice: boolean): string[] {
  const a = analyzeTracedRep(result, rep);
  const heading = multiDevice ? `analysis, ${deviceLabel(deviceOf(result, rep.device), rep.device)}` : 'analysis';
  const facts = analysisFacts(a, rep);
  const labelWidth = Math.max(...facts.map((f) => f.label.length));
  const table = [[...IDLE_COLUMNS], ...idleRows(a)];
  const widths = IDLE_COLUMNS.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  return [
    `${heading}:`,
    ...facts.map((f) => `  ${f.label.padEnd(labelWidth)}  ${f.value}`),
    '  idle time by cause (host: not yet issued; engine: its copy engine busy on another stream; dependency: the rest):',
    ...table.map((r) => `  ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}`.trimEnd()),
  ];
}
