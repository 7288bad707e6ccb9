import { opInterval } from '../analysis/timeline.js';
import { type RunExporter, pictured } from './exporter.js';
import type { DeviceFacts } from '../result/environment.js';
import type { RunResult } from '../result/schema.js';
import type { TimelineOp, TracedRep } from '../result/timeline.js';
import { engineRows } from '../kinds/index.js';
import { deviceLabel, deviceOf, opGbPerSecond, opName, queuedMs, repModeLabel, workerRows } from './timeline-common.js';

// The traced reps as Chrome's Trace Event Format (JSON object form), for Perfetto and chrome://tracing.
// - One process per device, named for the GPU. pids start at 1: tools treat pid 0 as the kernel's idle task.
// - In each, a track (thread) per stream, then one per copy engine and one for the SMs, so a viewer shows what the
//   hardware did next to what each stream asked for. Ops are complete events ('X'), ts and dur in µs.
// - Reps of several modes on one device follow each other in time, a gap apart, each announced by an event on a
//   "mode" track: a device runs one traced rep at a time, and this keeps every event at its real duration.
// - A track's events must nest or follow each other (viewers misdraw overlapping slices), and kernels of several
//   streams do overlap on the SMs, so an engine track grows extra lanes ("SMs (2)") for ops that overlap.

/**
 * Chrome Trace Event Format's complete ('X'), instant ('i', `s: 't'` scoping it to its track) and metadata ('M')
 * events.
 */
export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 'i' | 'M';
  readonly s?: 't';
  readonly pid: number;
  readonly tid: number;
  /** µs. */
  readonly ts: number;
  readonly dur?: number;
  readonly cat?: string;
  readonly args?: Readonly<Record<string, string | number | null>>;
}

export interface TraceDocument {
  readonly traceEvents: readonly TraceEvent[];
  readonly displayTimeUnit: 'ms' | 'ns';
  readonly otherData: Readonly<Record<string, string>>;
}

/**
 * Track ids within a device's process: the mode track, then streams, then engines (each stage kind's row), each block
 * with room for lanes.
 */
const TID = { mode: 1, stream: 10 } as const;

export function renderTrace(result: RunResult): string {
  return `${JSON.stringify(buildTrace(result))}\n`;
}

export function buildTrace(result: RunResult): TraceDocument {
  const reps = result.timeline?.reps ?? [];
  const devices = [...new Set(reps.map((r) => r.device))].sort((a, b) => a - b);
  const gapMs = 0.1 * reps.reduce((longest, r) => Math.max(longest, r.totalMs), 0);
  return {
    traceEvents: devices.flatMap((d) =>
      deviceEvents(
        result,
        d,
        reps.filter((r) => r.device === d),
        gapMs,
      ),
    ),
    displayTimeUnit: 'ns',
    otherData: {
      tool: `${result.tool.name} ${result.tool.version}`,
      config: result.config.name,
      createdAt: result.createdAt,
      hostname: result.run.hostname,
      driver: result.environment.software.driver,
      runtime: result.environment.software.runtime,
    },
  };
}

function deviceEvents(result: RunResult, device: number, reps: readonly TracedRep[], gapMs: number): TraceEvent[] {
  const pid = device + 1;
  const facts = deviceOf(result, device);
  const events: TraceEvent[] = [];
  const tracks = new Map<number, string>([[TID.mode, 'mode']]);
  const streams = new Map<string, number>();
  for (const rep of reps) {
    for (const id of [...rep.streams.map((s) => s.id), ...rep.ops.map((op) => op.stream), ...workerRows(rep).keys()])
      if (!streams.has(id)) streams.set(id, TID.stream + streams.size);
  }
  for (const [s, tid] of streams) tracks.set(tid, s.startsWith('worker ') ? s : `stream ${s}`);

  let offsetMs = 0;
  for (const rep of reps) {
    events.push(
      complete(pid, TID.mode, repModeLabel(result, rep.mode), 'rep', offsetMs, offsetMs + rep.totalMs, {
        mode: rep.mode,
        totalMs: rep.totalMs,
        issueMs: rep.issueMs,
        ops: rep.ops.length,
        timing: rep.timing?.source ?? 'events',
      }),
    );
    for (const op of [...rep.ops, ...[...workerRows(rep).values()].flat()])
      events.push(opEvent(pid, streams.get(op.stream)!, op, offsetMs));
    for (const [base, name, ops] of engineTracks(rep, facts)) {
      lanes(ops, offsetMs).forEach((lane, i) => {
        tracks.set(base + i, i === 0 ? name : `${name} (${i + 1})`);
        lane.forEach((op) => events.push(opEvent(pid, base + i, op, offsetMs, true)));
      });
    }
    offsetMs += rep.totalMs + gapMs;
  }
  const meta: TraceEvent[] = [
    metadata(pid, 0, 'process_name', { name: deviceLabel(facts, device) }),
    metadata(pid, 0, 'process_sort_index', { sort_index: device }),
    ...[...tracks]
      .sort(([a], [b]) => a - b)
      .flatMap(([tid, name], i) => [
        metadata(pid, tid, 'thread_name', { name }),
        metadata(pid, tid, 'thread_sort_index', { sort_index: i }),
      ]),
  ];
  return [...meta, ...events];
}

/**
 * The engine tracks of a rep: [first tid, name, ops]. One copy engine serves both directions when the device has one.
 */
function engineTracks(rep: TracedRep, facts: DeviceFacts | undefined): [number, string, TimelineOp[]][] {
  const tracks = engineRows(facts?.asyncEngineCount ?? 2).map(
    ({ row, name, stages }): [number, string, TimelineOp[]] => [
      row,
      name,
      rep.ops.filter((op) => stages.includes(op.kind)),
    ],
  );
  return tracks.filter(([, , ops]) => ops.length > 0);
}

/**
 * Splits ops into lanes in which none overlap (`inLanes`). Compared in the µs the events are written in, so rounding
 * cannot make two events in a lane overlap; where CUPTI timed an op, its engine's interval, so two copies queued on
 * one engine share a lane.
 */
export function lanes(ops: readonly TimelineOp[], offsetMs: number): TimelineOp[][] {
  return inLanes(ops, (op) => {
    const { start, end } = opInterval(op);
    return { start: us(offsetMs + start), end: us(offsetMs + end) };
  });
}

/**
 * Items in lanes whose spans never overlap, for a trace's tracks: by start time, each goes to the lowest lane whose
 * last span has ended. Lanes free up in order of their ends (a heap) and the lowest free one is taken (another
 * heap): O(n log n) in the items.
 */
export function inLanes<T>(
  items: readonly T[],
  span: (item: T) => { readonly start: number; readonly end: number },
): T[][] {
  const out: T[][] = [];
  const busy = new Heap<{ end: number; lane: number }>((a, b) => a.end - b.end || a.lane - b.lane);
  const free = new Heap<number>((a, b) => a - b);
  const timed = items.map((item) => ({ item, ...span(item) })).sort((a, b) => a.start - b.start || a.end - b.end);
  for (const { item, start, end } of timed) {
    while (busy.size && busy.peek()!.end <= start) free.push(busy.pop()!.lane);
    const at = free.size ? free.pop()! : out.length;
    if (at === out.length) out.push([]);
    out[at]!.push(item);
    busy.push({ end, lane: at });
  }
  return out;
}

/** A binary min-heap under `before`. */
class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (this.before(items[i]!, items[parent]!) >= 0) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length && last !== undefined) {
      items[0] = last;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < items.length && this.before(items[left]!, items[least]!) < 0) least = left;
        if (right < items.length && this.before(items[right]!, items[least]!) < 0) least = right;
        if (least === i) break;
        [items[i], items[least]] = [items[least]!, items[i]!];
        i = least;
      }
    }
    return top;
  }
}

/**
 * An op on its stream's track spans its events (queued time included); on an engine's track, the engine's time where
 * CUPTI gave it.
 */
function opEvent(pid: number, tid: number, op: TimelineOp, offsetMs: number, onEngine = false): TraceEvent {
  const gbps = opGbPerSecond(op);
  const { start, end } = onEngine ? opInterval(op) : { start: op.startMs, end: op.endMs };
  const queued = queuedMs(op);
  return complete(pid, tid, opName(op), op.kind, offsetMs + start, offsetMs + end, {
    stream: op.stream,
    chunk: op.chunk,
    ...(op.kernel !== null ? { kernel: op.kernel } : { buffer: op.buffer }),
    ...(op.collective ? { collective: op.collective } : {}),
    bytes: op.bytes,
    'GB/s': gbps === null ? null : Number(gbps.toFixed(2)),
    startMs: op.startMs,
    endMs: op.endMs,
    issuedMs: op.issuedMs,
    ...(queued === null
      ? {}
      : { engineStartMs: op.engineStartMs ?? null, engineEndMs: op.engineEndMs ?? null, queuedMs: queued }),
  });
}

function complete(
  pid: number,
  tid: number,
  name: string,
  cat: string,
  startMs: number,
  endMs: number,
  args: TraceEvent['args'],
): TraceEvent {
  const ts = us(startMs);
  // The duration comes from the rounded ends, so an event ending where the next begins still touches it exactly.
  const dur = Math.max(0, Math.round((us(endMs) - ts) * 1e3) / 1e3);
  return { name, cat, ph: 'X', pid, tid, ts, dur, ...(args ? { args } : {}) };
}

function metadata(pid: number, tid: number, name: string, args: Record<string, string | number>): TraceEvent {
  return { name, ph: 'M', pid, tid, ts: 0, args };
}

/** ms to µs, kept to the ns: CUDA events resolve about half a µs, and shorter numbers keep the file small. */
function us(ms: number): number {
  return Math.round(ms * 1e6) / 1e3;
}

export const traceExporter: RunExporter = {
  description: 'Chrome Trace Event JSON of the traced reps, for Perfetto and chrome://tracing',
  render: (results) => renderTrace(pictured(results)),
};
