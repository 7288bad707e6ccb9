import type { ChalkInstance } from 'chalk';
import { opInterval } from '../analysis/timeline.js';
import type { RunResult } from '../result/schema.js';
import type { TimelineOp, TracedRep } from '../result/timeline.js';
import { stage } from '../kinds/index.js';
import { outputColumns } from './width.js';
import {
  analysisFacts,
  analyzeTracedRep,
  deviceLabel,
  deviceOf,
  drawnRows,
  IDLE_COLUMNS,
  idleRows,
  MAX_PICTURE_ROWS,
  ms,
  niceTicks,
  rowLabel,
  type Stage,
  legendStages,
  STAGE_LETTERS,
  STAGE_NAMES,
  STAGES,
  tickLabel,
  type TimelineGroup,
  timelineGroups,
} from './timeline-common.js';

// The timeline in a terminal: one row per stream, time across, a letter per stage in every cell an op covers, so
// the chart reads the same with and without colour.

export interface GanttOptions {
  /** Colours; a level-0 instance (NO_COLOR, not a terminal) gives plain letters. */
  readonly style: ChalkInstance;
  /** Terminal width in columns; default that of stdout (`outputColumns`). */
  readonly columns?: number;
  /** Only this mode's traced reps; default every traced mode. */
  readonly mode?: string;
}

export const IDLE_CELL = '.';
const MIN_CHART_COLUMNS = 10;

/** Background colours by stage, from the 16 every terminal has, so level-1 colour suffices. */
function paint(style: ChalkInstance, id: Stage, text: string): string {
  const { background, foreground } = stage(id).look.terminal;
  return style[background][foreground](text);
}

/** The widest chart drawn, in columns: wider is no terminal, and the chart's cost grows with its width. */
export const MAX_COLUMNS = 1000;

export function renderGantt(result: RunResult, options: GanttOptions): string {
  const groups = timelineGroups(result, options.mode);
  if (!groups.length) return 'No traced reps in this result: run with --timeline to record one.';
  const columns = Math.min(MAX_COLUMNS, options.columns ?? outputColumns());
  return groups.map((group) => renderGroup(result, group, columns, options.style)).join('\n\n');
}

function renderGroup(result: RunResult, group: TimelineGroup, columns: number, style: ChalkInstance): string {
  const { rows, note } = drawnRows(group);
  const labels = rows.map((row) => rowLabel(row, group.multiDevice));
  const labelWidth = labels.reduce((widest, l) => Math.max(widest, l.length), 2);
  // Row layout: label, a space, '|', the cells, '|'.
  const chartWidth = Math.max(MIN_CHART_COLUMNS, columns - labelWidth - 3);
  // Scale lines start where the cells do, one column right of the row's '|'.
  const indent = ' '.repeat(labelWidth + 2);
  const lines = [
    style.bold(`${group.label}: traced rep`),
    ...scaleLines(group.spanMs, chartWidth).map((l) => indent + l),
  ];
  rows.forEach((row, i) => {
    const previous = rows[i - 1];
    if (group.multiDevice && previous?.device !== row.device)
      lines.push(style.dim(deviceLabel(deviceOf(result, row.device), row.device)));
    const stages = rowCells(row.ops, group.spanMs, chartWidth);
    const lower = lowerCaseCells(row.ops, stages, group.spanMs);
    const queued = queuedCells(row.ops, group.spanMs, chartWidth);
    const letters = stages.map(
      (stage, c): Cell =>
        stage
          ? { stage, letter: lower[c] ? STAGE_LETTERS[stage].toLowerCase() : STAGE_LETTERS[stage] }
          : queued[c]
            ? QUEUED
            : null,
    );
    const cells = runs(letters).map(({ cell, length }) =>
      cell === QUEUED
        ? style.dim(QUEUED_CELL.repeat(length))
        : cell
          ? paint(style, cell.stage, cell.letter.repeat(length))
          : style.dim(IDLE_CELL.repeat(length)),
    );
    lines.push(`${labels[i]!.padEnd(labelWidth)} |${cells.join('')}|`);
  });
  if (note) lines.push(...wrap(`${indent}${note}`, columns));
  lines.push(`${indent}1 column = ${ms(group.spanMs / chartWidth)}`);
  lines.push(legend(style, group.reps));
  for (const rep of group.reps)
    lines.push('', ...analysisLines(result, rep, group.multiDevice).flatMap((l) => wrap(l, columns)));
  return lines.join('\n');
}

/**
 * What each of `width` cells shows: the stage that covers most of the cell when ops cover at least half of it,
 * else idle. An op too short to win any cell still gets the cell holding its midpoint, so no op disappears.
 * Linear in ops and cells: an op adds its partial cover to its first and last cell and counts once, in a
 * difference array, for the cells it covers whole.
 */
export function rowCells(ops: readonly TimelineOp[], spanMs: number, width: number): (Stage | null)[] {
  const cellMs = spanMs > 0 ? spanMs / width : 1;
  const cellOf = (ms: number) => Math.min(width - 1, Math.max(0, Math.floor(ms / cellMs)));
  const partial = new Map<Stage, Float64Array>();
  const whole = new Map<Stage, Int32Array>();
  for (const s of STAGES) {
    partial.set(s, new Float64Array(width));
    whole.set(s, new Int32Array(width + 1));
  }
  for (const op of ops) {
    const { start, end } = opInterval(op);
    if (!(end > start)) continue;
    const first = cellOf(start);
    const last = Math.min(width - 1, Math.max(first, Math.ceil(end / cellMs) - 1));
    const cover = partial.get(op.kind)!;
    const overlap = (c: number) => Math.min(c * cellMs + cellMs, end) - Math.max(c * cellMs, start);
    if (first === last) {
      cover[first]! += Math.max(0, overlap(first));
      continue;
    }
    cover[first]! += Math.max(0, overlap(first));
    cover[last]! += Math.max(0, overlap(last));
    if (last > first + 1) {
      const counts = whole.get(op.kind)!;
      counts[first + 1]! += 1;
      counts[last]! -= 1;
    }
  }
  const running = new Map<Stage, number>(STAGES.map((s) => [s, 0]));
  const cells = Array.from({ length: width }, (_, c): Stage | null => {
    const full = c * cellMs + cellMs - c * cellMs;
    const covered = new Map<Stage, number>();
    let total = 0;
    for (const s of STAGES) {
      const count = running.get(s)! + whole.get(s)![c]!;
      running.set(s, count);
      const value = count * full + partial.get(s)![c]!;
      covered.set(s, value);
      total += value;
    }
    if (total < cellMs / 2) return null;
    // Ties go to the earlier stage in STAGES, so the picture does not depend on op order.
    return STAGES.reduce<Stage | null>(
      (best, s) => (covered.get(s)! > (best ? covered.get(best)! : 0) ? s : best),
      null,
    );
  });
  // Which cells show each stage, counted so that "does the op's range show its stage?" costs a logarithm.
  const shown = new Map<Stage, CellCounts>(STAGES.map((s) => [s, new CellCounts(width)]));
  cells.forEach((stage, c) => stage && shown.get(stage)!.add(c, 1));
  for (const op of ops) {
    const { start, end } = opInterval(op);
    const first = cellOf(start);
    const last = Math.min(width - 1, Math.max(first, Math.ceil(end / cellMs) - 1));
    if (shown.get(op.kind)!.count(first, last) > 0) continue;
    const mid = cellOf((start + end) / 2);
    const was = cells[mid];
    if (was) shown.get(was)!.add(mid, -1);
    cells[mid] = op.kind;
    shown.get(op.kind)!.add(mid, 1);
  }
  return cells;
}

/**
 * Which cells print their letter in lower case: the case flips each time a row moves on to another chunk, so ops of
 * one stage back to back on one stream (a stage-per-stream load stream, breadth-first issue) still show where one
 * chunk ends and the next begins. A cell takes the case of the op of its stage that covers most of it. Each op visits
 * only the cells it covers, so a row costs its ops plus its cells, not their product.
 */
export function lowerCaseCells(
  ops: readonly TimelineOp[],
  cells: readonly (Stage | null)[],
  spanMs: number,
): boolean[] {
  const width = cells.length;
  const cellMs = spanMs > 0 ? spanMs / width : 1;
  const sorted = ops.map((op) => ({ op, ...opInterval(op) })).sort((x, y) => x.start - y.start);
  const lower = new Array<boolean>(width).fill(false);
  const bestCover = new Float64Array(width);
  let opLower = false;
  sorted.forEach(({ op, start, end }, i) => {
    const previous = sorted[i - 1]?.op;
    if (previous && previous.chunk !== op.chunk) opLower = !opLower;
    const first = Math.max(0, Math.floor(start / cellMs));
    const last = Math.min(width - 1, Math.floor(end / cellMs));
    for (let c = first; c <= last; c += 1) {
      if (cells[c] !== op.kind) continue;
      const cover = Math.min((c + 1) * cellMs, end) - Math.max(c * cellMs, start);
      if (cover > bestCover[c]!) {
        bestCover[c] = cover;
        lower[c] = opLower;
      }
    }
  });
  return lower;
}

type Cell = { readonly stage: Stage; readonly letter: string } | typeof QUEUED | null;

const QUEUED = 'queued';
/** A cell in which an op sat queued (CUPTI only): its stream had reached it, its engine had not started it. */
export const QUEUED_CELL = '~';

/**
 * Cells at least half covered by some op's queued part (from its begin event to its engine's start). A stream's ops
 * queue one after another, so each op visits only the cells its own queued part covers.
 */
export function queuedCells(ops: readonly TimelineOp[], spanMs: number, width: number): boolean[] {
  const cellMs = spanMs > 0 ? spanMs / width : 1;
  const covered = new Float64Array(width);
  for (const op of ops) {
    if (op.engineStartMs === undefined || !(op.engineStartMs > op.startMs)) continue;
    const first = Math.max(0, Math.floor(op.startMs / cellMs));
    const last = Math.min(width - 1, Math.floor(op.engineStartMs / cellMs));
    for (let c = first; c <= last; c += 1)
      covered[c]! += Math.max(0, Math.min((c + 1) * cellMs, op.engineStartMs) - Math.max(c * cellMs, op.startMs));
  }
  return Array.from(covered, (ms) => ms >= cellMs / 2);
}

/** A Fenwick tree of per-cell counts: add at a cell, count over a range, each in O(log width). */
class CellCounts {
  private readonly tree: Int32Array;

  constructor(size: number) {
    this.tree = new Int32Array(size + 1);
  }

  add(cell: number, delta: number): void {
    for (let i = cell + 1; i < this.tree.length; i += i & -i) this.tree[i]! += delta;
  }

  /** Cells first..last, both included. */
  count(first: number, last: number): number {
    return this.prefix(last + 1) - this.prefix(first);
  }

  private prefix(end: number): number {
    let total = 0;
    for (let i = end; i > 0; i -= i & -i) total += this.tree[i]!;
    return total;
  }
}

/** What a cell prints: its letter, the queued mark or the idle mark. */
const cellKey = (cell: Cell): string => (cell === null ? IDLE_CELL : cell === QUEUED ? QUEUED_CELL : cell.letter);

/** Consecutive equal cells, so each run gets one pair of colour codes rather than one per cell. */
function runs(cells: readonly Cell[]): { cell: Cell; length: number }[] {
  const out: { cell: Cell; length: number }[] = [];
  for (const cell of cells) {
    const last = out[out.length - 1];
    if (last && cellKey(last.cell) === cellKey(cell)) last.length += 1;
    else out.push({ cell, length: 1 });
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
  const queued = reps.some((r) => r.timing?.source === 'cupti')
    ? `  ${style.dim(QUEUED_CELL)} queued (engine not yet started)`
    : '';
  return `legend: ${items.join('  ')}  ${style.dim(IDLE_CELL)} idle${queued}\nletters change case from one chunk to the next`;
}

function analysisLines(result: RunResult, rep: TracedRep, multiDevice: boolean): string[] {
  const a = analyzeTracedRep(result, rep);
  const heading = multiDevice ? `analysis, ${deviceLabel(deviceOf(result, rep.device), rep.device)}` : 'analysis';
  const facts = analysisFacts(a, rep);
  const labelWidth = facts.reduce((widest, f) => Math.max(widest, f.label.length), 0);
  const table = [[...IDLE_COLUMNS], ...idleRows(a, MAX_PICTURE_ROWS)];
  const widths = IDLE_COLUMNS.map((_, c) => table.reduce((widest, r) => Math.max(widest, r[c]!.length), 0));
  return [
    `${heading}:`,
    ...facts.map((f) => `  ${f.label.padEnd(labelWidth)}  ${f.value}`),
    '  idle time by cause (host: not yet issued; engine: its copy engine busy on another stream; dependency: the rest):',
    ...table.map((r) =>
      `  ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}`.trimEnd(),
    ),
  ];
}
