import { analyzeRep, opInterval, type RepAnalysis } from '../analysis/timeline.js';
import type { DeviceFacts } from '../result/environment.js';
import type { RunResult } from '../result/schema.js';
import type { TimelineOp, TracedRep } from '../result/timeline.js';
import { STAGE_KINDS, type Stage, type StageKind, stage } from '../kinds/index.js';
import { roleLabel } from './labels.js';

// What every timeline renderer shares, so the terminal, the SVG, the HTML and the trace agree on colours, letters,
// names, rows and numbers.

export type { Stage } from '../kinds/index.js';
export { STAGES } from '../kinds/index.js';

/** The stages a legend lists: those every run has, and the others (peer copies) where the reps have any. */
export function legendStages(reps: readonly TracedRep[]): Stage[] {
  const present = new Set(reps.flatMap((r) => r.ops.map((op) => op.kind)));
  return STAGE_KINDS.filter((s) => s.look.always || present.has(s.id)).map((s) => s.id);
}

const looks = <T>(pick: (look: StageKind['look']) => T): Readonly<Record<Stage, T>> =>
  Object.fromEntries(STAGE_KINDS.map((s) => [s.id, pick(s.look)])) as Record<Stage, T>;

/** One fixed palette for every picture, each stage kind's own colour. */
export const STAGE_COLOURS = looks((l) => l.colour);

/** A letter per stage, so a chart read without colour (NO_COLOR, a printout) still says what ran. */
export const STAGE_LETTERS = looks((l) => l.letter);

export const STAGE_NAMES = looks((l) => l.name);

/** "H2D input #3", "kernel fma #3", "D2H output" (whole buffer): what the op did, to which data. */
export function opName(op: TimelineOp): string {
  const kind = stage(op.kind);
  return [kind.look.prefix, kind.subject(op), op.chunk === null ? null : `#${op.chunk}`]
    .filter((part) => part !== null && part !== '')
    .join(' ');
}

/**
 * bytes / duration in GB/s (1e9 bytes per second), over the engine's time where CUPTI gave it; null where it means
 * nothing.
 */
export function opGbPerSecond(op: TimelineOp): number | null {
  const { start, end } = opInterval(op);
  const ms = end - start;
  return op.bytes > 0 && ms > 0 ? op.bytes / ms / 1e6 : null;
}

/**
 * How long the op sat queued: its stream had reached it (its begin event ran), its engine had not started it. Null
 * without CUPTI.
 */
export function queuedMs(op: TimelineOp): number | null {
  return op.engineStartMs === undefined ? null : Math.max(0, op.engineStartMs - op.startMs);
}

/** What timed a rep's bars, in words: every picture says it. */
export function timingLabel(rep: TracedRep): string {
  if (rep.timing?.source === 'cupti')
    return 'engine times from CUPTI; a pale part before a bar is time queued behind other work';
  return `times from the events around each op (they include time queued behind other work)${rep.timing ? `: ${rep.timing.note}` : ''}`;
}

/** The label of a rep's mode; the raw id when the Result has no such mode (a trace of a mode it did not time). */
export function repModeLabel(result: RunResult, mode: string): string {
  const found = result.modes.find((m) => m.id === mode);
  return found ? roleLabel(found.role) : mode;
}

export function deviceLabel(device: DeviceFacts | undefined, index: number): string {
  return device ? `${device.name} (GPU ${index})` : `GPU ${index}`;
}

export function deviceOf(result: RunResult, index: number): DeviceFacts | undefined {
  return result.devices.find((d) => d.index === index);
}

/** One stream of one traced rep: a row in every picture. */
export interface TimelineRow {
  readonly device: number;
  readonly stream: string;
  readonly rep: TracedRep;
  readonly ops: readonly TimelineOp[];
}

/** The traced reps of one mode (one per device), drawn as one chart on one time scale. */
export interface TimelineGroup {
  readonly mode: string;
  readonly label: string;
  readonly reps: readonly TracedRep[];
  /** Devices in index order, each device's streams in the rep's order. */
  readonly rows: readonly TimelineRow[];
  /** The longest rep of the group: the chart's time span. */
  readonly spanMs: number;
  /** More than one device: rows are grouped and labelled by device. */
  readonly multiDevice: boolean;
}

/** Traced reps grouped by mode, in the order the Result lists them; `mode` keeps only that mode's group. */
export function timelineGroups(result: RunResult, mode?: string): TimelineGroup[] {
  const reps = result.timeline?.reps ?? [];
  const modes = [...new Set(reps.map((r) => r.mode))].filter((m) => mode === undefined || m === mode);
  return modes.map((m) => {
    const own = reps.filter((r) => r.mode === m).sort((a, b) => a.device - b.device);
    const rows = own.flatMap((rep) => {
      const byStream = opsByStream(rep);
      const streams = [...byStream].map(([stream, ops]) => ({ device: rep.device, stream, rep, ops }));
      return [...streams, ...[...workerRows(rep)].map(([stream, ops]) => ({ device: rep.device, stream, rep, ops }))];
    });
    let spanMs = 0;
    for (const rep of own) {
      spanMs = Math.max(spanMs, rep.totalMs);
      for (const op of [...rep.ops, ...(rep.workerTasks ?? [])]) spanMs = Math.max(spanMs, op.endMs);
    }
    return {
      mode: m,
      label: repModeLabel(result, m),
      reps: own,
      rows,
      spanMs,
      multiDevice: new Set(own.map((r) => r.device)).size > 1,
    };
  });
}

/**
 * A row per worker of a host stage on worker threads, its tasks drawn as host ops: the pictures' rows after the
 * streams. They are the host's, not the GPU's, so the analysis of the rep's streams never sees them.
 */
export function workerRows(rep: TracedRep): Map<string, TimelineOp[]> {
  const rows = new Map<string, TimelineOp[]>();
  const tasks = [...(rep.workerTasks ?? [])].sort((a, b) => a.worker - b.worker || a.startMs - b.startMs);
  for (const t of tasks) {
    const stream = `worker ${t.worker}`;
    const op: TimelineOp = {
      mode: rep.mode,
      device: rep.device,
      stream,
      kind: 'host',
      chunk: t.chunk,
      buffer: null,
      kernel: null,
      bytes: 0,
      startMs: t.startMs,
      endMs: t.endMs,
      issuedMs: t.startMs,
    };
    rows.set(stream, [...(rows.get(stream) ?? []), op]);
  }
  return rows;
}

/**
 * The rep's streams as listed, then any only its ops name, each with its ops in the rep's order: one pass over the ops.
 */
function opsByStream(rep: TracedRep): Map<string, TimelineOp[]> {
  const out = new Map<string, TimelineOp[]>(rep.streams.map((s) => [s.id, []]));
  for (const op of rep.ops) {
    const list = out.get(op.stream);
    if (list) list.push(op);
    else out.set(op.stream, [op]);
  }
  return out;
}

/**
 * The most rows a picture draws of one mode, and the most bars a row draws one op at a time: beyond them a picture
 * would take minutes to draw and be unreadable anyway. Rows past the first are left out with a note (the Chrome
 * trace keeps every op); a row with more ops than it has pixels or columns is drawn as cells, each showing the
 * stage that covered most of it, so its cost stays linear in its ops.
 */
export const MAX_PICTURE_ROWS = 128;

/** The rows a picture draws, and a note naming what it leaves out (null when nothing). */
export function drawnRows(group: TimelineGroup): { rows: readonly TimelineRow[]; note: string | null } {
  if (group.rows.length <= MAX_PICTURE_ROWS) return { rows: group.rows, note: null };
  const hidden = group.rows.length - MAX_PICTURE_ROWS;
  return {
    rows: group.rows.slice(0, MAX_PICTURE_ROWS),
    note: `${hidden} more stream${hidden === 1 ? '' : 's'} not drawn: a picture shows the first ${MAX_PICTURE_ROWS} of ${group.rows.length}; the analysis counts every one, and --trace writes every op.`,
  };
}

export function rowLabel(row: TimelineRow, multiDevice: boolean): string {
  return multiDevice ? `GPU${row.device} ${row.stream}` : row.stream;
}

/**
 * The analysis of a rep with its device's copy engines taken into account. Under a gate the GPU starts only once
 * the whole rep is issued, so no wait is the host's: issue times are then mapped as if all came before GPU time 0,
 * and a stream waiting for the gate counts as waiting on a dependency.
 */
export function analyzeTracedRep(result: RunResult, rep: TracedRep): RepAnalysis {
  return analyzeRep(rep, {
    copyEngines: deviceOf(result, rep.device)?.asyncEngineCount ?? 2,
    hostOffsetMs: result.policy.gate ? rep.issueMs : 0,
  });
}

/** Tick positions in ms: 0 and multiples of a 1-2-5 step, at most about `maxTicks` of them. */
export function niceTicks(spanMs: number, maxTicks: number): number[] {
  if (!(spanMs > 0) || maxTicks < 1) return [0];
  const step = niceStep(spanMs / maxTicks);
  const count = Math.floor(spanMs / step + 1e-9);
  return Array.from({ length: count + 1 }, (_, i) => roundTo(i * step, step));
}

export function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(rough));
  const mantissa = rough / power;
  const nice = mantissa <= 1 ? 1 : mantissa <= 2 ? 2 : mantissa <= 5 ? 5 : 10;
  return nice * power;
}

/** A tick label with as many decimals as the step needs: 0.25 → "0.25", 2 → "2". */
export function tickLabel(ms: number, ticks: readonly number[]): string {
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : 1;
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return ms.toFixed(decimals);
}

function roundTo(value: number, step: number): number {
  const decimals = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  return Number.parseFloat(value.toFixed(decimals));
}

/** A fact of the analysis, as a label and a formatted value: the terminal and the HTML print the same list. */
export interface Fact {
  readonly label: string;
  readonly value: string;
}

export function analysisFacts(a: RepAnalysis, rep?: TracedRep): Fact[] {
  const pct = (f: number) => `${(f * 100).toFixed(1)}%`;
  const rate = (perUs: number) => `${perUs < 0.01 ? perUs.toFixed(4) : perUs.toFixed(3)} ops/µs`;
  return [
    ...(rep ? [{ label: 'timing', value: rep.timing?.source === 'cupti' ? rep.timing.note : timingLabel(rep) }] : []),
    { label: 'H2D engine busy', value: pct(a.busy.h2d) },
    { label: 'D2H engine busy', value: pct(a.busy.d2h) },
    { label: 'SMs busy', value: pct(a.busy.sm) },
    ...(a.busy.host > 0 ? [{ label: 'host ops running', value: pct(a.busy.host) }] : []),
    { label: 'all idle', value: pct(a.busy.idle) },
    { label: 'copy with kernel', value: pct(a.overlap.copyWithKernel) },
    { label: 'H2D with D2H', value: pct(a.overlap.h2dWithD2h) },
    { label: 'issued', value: `${a.issue.ops} ops in ${ms(a.issue.issueMs)} (${rate(a.issue.issuedPerUs)})` },
    { label: 'completed', value: `${a.issue.ops} ops in ${ms(a.issue.totalMs)} (${rate(a.issue.completedPerUs)})` },
    { label: 'verdict', value: issueVerdict(a) },
  ];
}

export function issueVerdict(a: RepAnalysis): string {
  return a.issue.hostIssueBound
    ? `host-issue-bound: issue took ${ms(a.issue.issueMs)}, longer than the ${ms(a.issue.gpuBusyMs)} the GPU was busy`
    : `not host-issue-bound: issue took ${ms(a.issue.issueMs)}, the GPU was busy ${ms(a.issue.gpuBusyMs)}`;
}

/** Idle breakdown columns, per stream and in total: the same table in the terminal and the HTML. */
export const IDLE_COLUMNS = ['stream', 'idle', 'host', 'engine', 'dependency', 'finished'] as const;

/** The idle table's rows: one per stream (the first `limit`, then one counting the rest) and the total. */
export function idleRows(a: RepAnalysis, limit = Infinity): string[][] {
  const row = (
    name: string,
    s: { idleMs: number; hostMs: number; engineMs: number; dependencyMs: number },
    tail: string,
  ) => [name, ms(s.idleMs), ms(s.hostMs), ms(s.engineMs), ms(s.dependencyMs), tail];
  const shown = a.streams.slice(0, limit).map((s) => row(s.stream, s, ms(s.tailMs)));
  const hidden = a.streams.length - shown.length;
  return [...shown, ...(hidden > 0 ? [[`(${hidden} more)`, '', '', '', '', '']] : []), row('all', a.idle, '')];
}

/** Milliseconds to the µs, as traces resolve them. */
export function ms(value: number): string {
  return `${value.toFixed(3)} ms`;
}

/** Text for XML and HTML, in content and in quoted attributes alike. */
export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
