import { formatMs, formatRate, gbPerSecond } from '../format.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import { type Column, fitTable, without } from './fold.js';
import { DEFAULT_COLUMNS, fitLines } from './width.js';

/** One row of `run --host-memory`: what one kind of host memory did to the same config. */
export interface HostMemoryRow {
  readonly hostMemory: string;
  readonly h2dGbPerSecond: number | null;
  readonly d2hGbPerSecond: number | null;
  readonly serialMs: number;
  readonly overlappedMs: number;
  readonly speedup: number;
  /** (serial − overlapped) / (serial − bound): the share of the saving overlap could make that it made. */
  readonly overlapAchieved: number | null;
}

const rate = (mode: ModeResult | undefined, direction: 'h2d' | 'd2h') =>
  mode ? gbPerSecond(mode.bytes[direction], mode.stats.median) : null;

export function hostMemoryRow(result: RunResult): HostMemoryRow {
  const kinds = [...new Set(result.buffers.filter((b) => b.role !== 'scratch').map((b) => b.hostMemory))];
  const stage = (s: 'h2d' | 'd2h') => result.modes.find((m) => m.role.kind === 'stage' && m.role.stage === s);
  const headline = result.modes.find((m) => m.id === result.summary.mode);
  const bound = headline?.analysis?.bound.ms ?? null;
  const { serialMs, overlappedMs, speedup } = result.summary;
  return {
    hostMemory: kinds.join('/'),
    h2dGbPerSecond: rate(stage('h2d'), 'h2d'),
    d2hGbPerSecond: rate(stage('d2h'), 'd2h'),
    serialMs,
    overlappedMs,
    speedup,
    overlapAchieved: bound !== null && serialMs > bound ? (serialMs - overlappedMs) / (serialMs - bound) : null,
  };
}

/**
 * The side-by-side table: copy bandwidth, serial and overlapped times, speedup, and how much of the overlap happened,
 * within `columns`: without the copy rates where the whole table is too wide, else folded.
 */
export function renderHostMemoryTable(results: readonly RunResult[], columns = DEFAULT_COLUMNS): string {
  const rows = results.map(hostMemoryRow);
  const column = (head: string, cell: (row: HostMemoryRow) => string, align: Column['align'] = 'right'): Column => ({
    head,
    align,
    cells: rows.map(cell),
  });
  const full = [
    column('host memory', (row) => row.hostMemory, 'left'),
    column('H2D', (row) => (row.h2dGbPerSecond === null ? '' : formatRate(row.h2dGbPerSecond))),
    column('D2H', (row) => (row.d2hGbPerSecond === null ? '' : formatRate(row.d2hGbPerSecond))),
    column('serial', (row) => formatMs(row.serialMs)),
    column('overlapped', (row) => formatMs(row.overlappedMs)),
    column('speedup', (row) => `${row.speedup.toFixed(2)}×`),
    column('overlap achieved', (row) =>
      row.overlapAchieved === null ? '' : `${Math.round(100 * row.overlapAchieved)}%`,
    ),
  ];
  const heading = `${results[0]?.config.name ?? ''} by host memory kind (overlap achieved: (serial − overlapped) / (serial − bound)):`;
  return `${fitLines(heading, columns)}\n${fitTable([full, without(full, 'H2D', 'D2H')], columns)}`;
}
