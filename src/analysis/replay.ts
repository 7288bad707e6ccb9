import type { GpuEvent, HostCall } from './events.js';

// A device's timeline as a graph of what waited for what, replayed with a change: the counterfactual behind every
// finding (Daydream, dPRO). Each op and host call is a task with a start and an end; an edge says a point cannot come
// before another point plus a weight. The edges are what the trace shows: the calls of a host thread one after
// another with the CPU's own work between them, a launch call before its op, a stream's ops in order, a wait on
// another stream's op (an event, the legacy default stream, a copy engine: told from the trace, see `waitEdges`), a
// synchronize or a blocking copy call until the op it waited for, and copies of one direction sharing the link. The
// graph is calibrated to the trace: every point is the latest of its edges plus a lag, the delay after that edge the
// trace shows (a launch's latency, a copy engine's turnaround), so replaying it unchanged gives the trace back
// exactly; an edge the trace contradicts is dropped. A change (an `Edit`) takes edges out, adds some, and gives ops and
// calls other durations; the replay keeps every lag, so what the model does not explain stays as it was.

/** What an edge stands for. */
export type EdgeKind = 'host' | 'issue' | 'stream' | 'wait' | 'sync' | 'blocking' | 'link';

export interface Edge {
  readonly kind: EdgeKind;
  /** Points: 2 × task for its start, 2 × task + 1 for its end; tasks are the ops, then the calls. */
  readonly from: number;
  readonly to: number;
  readonly weight: number;
  /** The delay after this edge that the trace shows, kept by every replay. */
  readonly lag: number;
}

export interface ReplayGraph {
  readonly ops: readonly GpuEvent[];
  readonly calls: readonly HostCall[];
  /** Each point's time in the trace. */
  readonly observed: Float64Array;
  /** Each task's own duration: an op's time on its engine; a call's time apart from what it waited for. */
  readonly duration: Float64Array;
  readonly edges: readonly Edge[];
  /** Per point, the indexes of its incoming edges. */
  readonly incoming: readonly (readonly number[])[];
  /** The points in an order in which every edge's source comes before its target. */
  readonly order: Int32Array;
  /** Per op, the index of the call that launched it, or -1. */
  readonly callOf: Int32Array;
  /** Per point, a time it never comes before whatever the edit (an op's issue time where no call is known). */
  readonly anchor: Float64Array;
}

/** A change to replay. Edges are named by their index in the graph's `edges`; added edges are evaluated the same way. */
export interface Edit {
  readonly opDuration?: ReadonlyMap<number, number>;
  readonly callDuration?: ReadonlyMap<number, number>;
  /** New weights of edges, by index (a host edge's CPU work made shorter, say). */
  readonly weight?: ReadonlyMap<number, number>;
  readonly dropped?: ReadonlySet<number>;
  readonly added?: readonly Edge[];
}

/** Two points closer than this are taken as simultaneous: Kineto's times are whole µs. */
export const TOLERANCE_MS = 0.0015;
/** A wait on another stream's op: it ended at most this long before the op started (an event's turnaround). */
export const WAIT_WINDOW_MS = 0.02;
/** A call that waited for an op returns at most this long after the op ended. */
const RETURN_MS = 0.1;

export const opStart = (op: number) => 2 * op;
export const opEnd = (op: number) => 2 * op + 1;

interface Builder {
  readonly edges: Edge[];
  add(kind: EdgeKind, from: number, to: number, weight: number): void;
}

export interface GraphOptions {
  /** Each direction's link rate in GB/s, for the share of a copy's time that holds the link; null where unknown. */
  readonly linkRates: { readonly h2d: number | null; readonly d2h: number | null };
  /** The GPU's own gap between two ops of one stream that were issued in time (metrics.ts's perOpMs). */
  readonly perOpMs: number;
}

/** The graph of one device's ops (any order) and the host calls of the trace, calibrated to what the trace shows. */
export function buildGraph(events: readonly GpuEvent[], hostCalls: readonly HostCall[], options: GraphOptions): ReplayGraph {
  const ops = [...events].sort((a, b) => a.start - b.start || a.end - b.end);
  const launched = new Set(ops.flatMap((op) => (op.correlation === null ? [] : [op.correlation])));
  // Only the calls that matter to this device: its launches, and every synchronize (which may wait on it).
  const calls = [...hostCalls].filter((c) => c.kind === 'sync' || (c.correlation !== null && launched.has(c.correlation))).sort((a, b) => a.start - b.start);
  const n = ops.length;
  const tasks = n + calls.length;
  const observed = new Float64Array(2 * tasks);
  const duration = new Float64Array(tasks);
  ops.forEach((op, i) => {
    observed[opStart(i)] = op.start;
    observed[opEnd(i)] = op.end;
    duration[i] = Math.max(0, op.end - op.start);
  });
  calls.forEach((call, j) => {
    observed[2 * (n + j)] = call.start;
    observed[2 * (n + j) + 1] = call.end;
    duration[n + j] = Math.max(0, call.end - call.start);
  });
  const edges: Edge[] = [];
  const builder: Builder = { edges, add: (kind, from, to, weight) => edges.push({ kind, from, to, weight, lag: 0 }) };
  const callOf = issueEdges(builder, ops, calls, n);
  hostEdges(builder, calls, n);
  streamEdges(builder, ops);
  linkEdges(builder, ops, options.linkRates);
  waitEdges(builder, ops, calls, callOf);
  // What a launch takes when it waits for nothing: the typical launch call.
  const plain = medianOf(calls.flatMap((c) => (c.kind === 'launch' ? [c.end - c.start] : []))) ?? 0;
  const waited = syncEdges(builder, ops, calls, callOf, n, plain);
  // A call that waited keeps, of its own time, what a launch takes without waiting.
  for (const j of waited) duration[n + j] = Math.min(duration[n + j]!, plain);
  const anchor = new Float64Array(2 * tasks).fill(Number.NEGATIVE_INFINITY);
  // Where no call is known, an op is held by the time the trace says it was issued (cuda-pipe's own traces).
  ops.forEach((op, i) => {
    if (callOf[i]! < 0) anchor[opStart(i)] = Math.min(op.issued ?? op.start, op.start);
  });
  return calibrate({ ops, calls, observed, duration, edges, callOf, anchor }, options.perOpMs);
}

/** Launch call → its op: the op cannot start before the call reached the point where it submitted it. */
function issueEdges(builder: Builder, ops: readonly GpuEvent[], calls: readonly HostCall[], n: number): Int32Array {
  const byCorrelation = new Map<number, number>();
  calls.forEach((c, j) => {
    if (c.kind === 'launch' && c.correlation !== null) byCorrelation.set(c.correlation, j);
  });
  const callOf = new Int32Array(ops.length).fill(-1);
  ops.forEach((op, i) => {
    const j = op.correlation === null ? undefined : byCorrelation.get(op.correlation);
    if (j === undefined) return;
    callOf[i] = j;
    const call = calls[j]!;
    // A blocking copy's op starts while its call still runs: the weight is where in the call it started.
    builder.add('issue', 2 * (n + j), opStart(i), Math.max(0, Math.min(call.end, op.start) - call.start));
  });
  return callOf;
}

/** A thread's calls one after another; a call inside another (a driver call under a runtime call) hangs off its start. */
function hostEdges(builder: Builder, calls: readonly HostCall[], n: number): void {
  const last = new Map<number | null, number>();
  calls.forEach((call, j) => {
    const thread = call.thread ?? null;
    const previous = last.get(thread);
    if (previous !== undefined) {
      const before = calls[previous]!;
      if (call.start < before.end) {
        builder.add('host', 2 * (n + previous), 2 * (n + j), call.start - before.start);
        return;
      }
      builder.add('host', 2 * (n + previous) + 1, 2 * (n + j), call.start - before.end);
    }
    last.set(thread, j);
  });
}

function streamEdges(builder: Builder, ops: readonly GpuEvent[]): void {
  const last = new Map<string, number>();
  ops.forEach((op, i) => {
    const previous = last.get(op.stream);
    if (previous !== undefined) builder.add('stream', opEnd(previous), opStart(i), 0);
    last.set(op.stream, i);
  });
}

/**
 * Copies of one direction share its link: the next copy (by start) cannot start before this one moved its bytes at
 * the link's rate. Where a copy ran at the link's rate that is its whole time; a small copy holds the link for only
 * part of its time (the rest is its fixed cost), so copies of other streams can overlap it.
 */
function linkEdges(builder: Builder, ops: readonly GpuEvent[], rates: GraphOptions['linkRates']): void {
  for (const direction of ['h2d', 'd2h'] as const) {
    const rate = rates[direction];
    let previous = -1;
    ops.forEach((op, i) => {
      if (op.kind !== 'memcpy' || op.direction !== direction) return;
      if (previous >= 0) builder.add('link', opStart(previous), opStart(i), linkHoldMs(ops[previous]!, rate));
      previous = i;
    });
  }
}

/** How long a copy holds its link: its bytes at the link's rate, at most its own time; its whole time where unknown. */
export function linkHoldMs(op: Pick<GpuEvent, 'start' | 'end' | 'bytes'>, rateGbPerSecond: number | null): number {
  const ms = Math.max(0, op.end - op.start);
  if (rateGbPerSecond === null || !(rateGbPerSecond > 0) || op.bytes === null) return ms;
  return Math.min(ms, op.bytes / (rateGbPerSecond * 1e6));
}

/**
 * An op that started later than its stream and its launch allow waited for something; where another stream's op
 * ended just before it started, that op is what it waited for (an event wait, the legacy default stream's implicit
 * synchronisation, a copy engine that ran one copy after another). Without such an op the delay stays a lag.
 */
function waitEdges(builder: Builder, ops: readonly GpuEvent[], calls: readonly HostCall[], callOf: Int32Array): void {
  const byEnd = ops.map((_, i) => i).sort((a, b) => ops[a]!.end - ops[b]!.end);
  const ends = Float64Array.from(byEnd, (i) => ops[i]!.end);
  const previousOnStream = new Map<string, number>();
  ops.forEach((op, i) => {
    const before = previousOnStream.get(op.stream);
    previousOnStream.set(op.stream, i);
    const j = callOf[i]!;
    const issued = j >= 0 ? Math.min(calls[j]!.end, op.start) : (op.issued ?? Number.NEGATIVE_INFINITY);
    const ready = Math.max(before === undefined ? Number.NEGATIVE_INFINITY : ops[before]!.end, issued);
    if (!(op.start - ready > TOLERANCE_MS)) return;
    // The op on another stream that ended last at or before this op's start, within the window.
    let k = upperBound(ends, op.start + TOLERANCE_MS) - 1;
    while (k >= 0 && ops[byEnd[k]!]!.stream === op.stream) k--;
    if (k < 0) return;
    const blocker = byEnd[k]!;
    const end = ops[blocker]!.end;
    if (op.start - end > WAIT_WINDOW_MS || end <= ready) return;
    builder.add('wait', opEnd(blocker), opStart(i), 0);
  });
}

/**
 * A synchronize returns once the op it waited for ends: the last op to end while it ran. A launch call that returned
 * only after its own op ended (a copy from pageable memory, a synchronous cudaMemcpy) blocked on it the same way.
 * Returns the calls that waited.
 */
function syncEdges(builder: Builder, ops: readonly GpuEvent[], calls: readonly HostCall[], callOf: Int32Array, n: number, plainMs: number): Set<number> {
  const waited = new Set<number>();
  callOf.forEach((j, i) => {
    if (j < 0) return;
    const call = calls[j]!;
    const op = ops[i]!;
    // Far longer than a launch, its op running through most of it, and returning about when the op ended: it waited
    // for the op (a copy from pageable memory returns as its last staged piece is handed over, a little before the op
    // ends). The edge's weight is where the call returned against the op's end.
    const callMs = call.end - call.start;
    const long = callMs > Math.max(3 * plainMs, 4 * TOLERANCE_MS);
    const within = Math.min(op.end, call.end) - Math.max(op.start, call.start);
    if (long && within >= callMs / 2 && Math.abs(call.end - op.end) <= RETURN_MS) {
      builder.add('blocking', opEnd(i), 2 * (n + j) + 1, Math.min(0, call.end - op.end));
      waited.add(j);
    }
  });
  const byEnd = ops.map((_, i) => i).sort((a, b) => ops[a]!.end - ops[b]!.end);
  const ends = Float64Array.from(byEnd, (i) => ops[i]!.end);
  calls.forEach((call, j) => {
    if (call.kind !== 'sync') return;
    const k = upperBound(ends, call.end + TOLERANCE_MS) - 1;
    if (k < 0 || ops[byEnd[k]!]!.end <= call.start) return;
    builder.add('sync', opEnd(byEnd[k]!), 2 * (n + j) + 1, 0);
    waited.add(j);
  });
  return waited;
}

/**
 * Every point the latest of its edges (and, for an end, its start plus its task's duration) plus a lag. An edge the
 * trace contradicts (its point came earlier than the edge allows) is dropped; the binding edge's lag is what is left to
 * the observed time, every other edge's the least of the same kind's binding lags (so that a replay in which it binds
 * delays it as that kind of edge usually does) and of its own slack (so that the trace replays exactly).
 */
function calibrate(graph: Omit<ReplayGraph, 'incoming' | 'order'>, perOpMs: number): ReplayGraph {
  const { observed, duration } = graph;
  const points = observed.length;
  const live = graph.edges.filter((e) => observed[e.from]! + e.weight <= observed[e.to]! + TOLERANCE_MS);
  const incoming: number[][] = Array.from({ length: points }, () => []);
  live.forEach((e, k) => incoming[e.to]!.push(k));
  // A start no edge holds stays where the trace has it.
  const anchor = Float64Array.from(graph.anchor);
  for (let p = 0; p < points; p += 2) if (!incoming[p]!.length) anchor[p] = observed[p]!;
  const binding = new Int32Array(points).fill(-1);
  const typical = new Map<EdgeKind, number[]>();
  for (let p = 0; p < points; p++) {
    let best = -1;
    let bestAt = Number.NEGATIVE_INFINITY;
    for (const k of incoming[p]!) {
      const at = observed[live[k]!.from]! + live[k]!.weight;
      if (at > bestAt) {
        bestAt = at;
        best = k;
      }
    }
    // An end binds on its start plus the duration where that is as late as any edge.
    if (best >= 0 && (p % 2 === 0 || bestAt > observed[p - 1]! + duration[p >> 1]!)) {
      binding[p] = best;
      const list = typical.get(live[best]!.kind) ?? [];
      list.push(Math.max(0, observed[p]! - bestAt));
      typical.set(live[best]!.kind, list);
    }
  }
  const usual = (kind: EdgeKind): number => (kind === 'stream' ? perOpMs : kind === 'link' || kind === 'host' ? 0 : (medianOf(typical.get(kind) ?? []) ?? 0));
  const edges = live.map((e, k): Edge => {
    const slack = Math.max(0, observed[e.to]! - observed[e.from]! - e.weight);
    return { ...e, lag: binding[e.to] === k ? slack : Math.min(slack, usual(e.kind)) };
  });
  return { ...graph, anchor, edges, incoming, order: topologicalOrder(points, edges, observed, incoming) };
}

/** Kahn's algorithm, taking ready points by their observed time, so that the order is the trace's where edges allow. */
function topologicalOrder(points: number, edges: readonly Edge[], observed: Float64Array, incoming: readonly (readonly number[])[]): Int32Array {
  const outgoing: number[][] = Array.from({ length: points }, () => []);
  const remaining = new Int32Array(points);
  for (let p = 0; p < points; p++) {
    remaining[p] = incoming[p]!.length + (p % 2 === 1 ? 1 : 0);
    for (const k of incoming[p]!) outgoing[edges[k]!.from]!.push(p);
    if (p % 2 === 0) outgoing[p]!.push(p + 1);
  }
  const heap = new PointHeap(observed);
  for (let p = 0; p < points; p++) if (remaining[p] === 0) heap.push(p);
  const order = new Int32Array(points);
  const placed = new Uint8Array(points);
  let count = 0;
  while (count < points) {
    // A cycle (points within the tolerance of each other) is broken at its earliest point.
    let p = heap.pop();
    if (p === undefined) {
      p = -1;
      for (let q = 0; q < points; q++) if (!placed[q] && (p < 0 || observed[q]! < observed[p]!)) p = q;
    }
    if (placed[p]) continue;
    placed[p] = 1;
    order[count++] = p;
    for (const q of outgoing[p]!) if (--remaining[q]! === 0 && !placed[q]) heap.push(q);
  }
  return order;
}

/** Every point's time with the edit applied. Unchanged, it is the trace's. */
export function replay(graph: ReplayGraph, edit: Edit = {}): Float64Array {
  const { observed, duration, edges, incoming, order } = graph;
  const n = graph.ops.length;
  const added = new Map<number, Edge[]>();
  for (const e of edit.added ?? []) added.set(e.to, [...(added.get(e.to) ?? []), e]);
  const time = new Float64Array(observed.length);
  const own = (task: number): number => (task < n ? edit.opDuration?.get(task) : edit.callDuration?.get(task - n)) ?? duration[task]!;
  const weightOf = (k: number, e: Edge): number => {
    const w = edit.weight?.get(k) ?? e.weight;
    // A launch reaches its op no later than the call's own (perhaps shorter) time.
    return e.kind === 'issue' ? Math.min(w, own(e.from >> 1)) : w;
  };
  for (const p of order) {
    let at = Number.NEGATIVE_INFINITY;
    for (const k of incoming[p]!) {
      if (edit.dropped?.has(k)) continue;
      const e = edges[k]!;
      at = Math.max(at, time[e.from]! + weightOf(k, e) + e.lag);
    }
    for (const e of added.get(p) ?? []) at = Math.max(at, time[e.from]! + e.weight + e.lag);
    if (p % 2 === 1) time[p] = Math.max(time[p - 1]! + own(p >> 1), at);
    else {
      at = Math.max(at, graph.anchor[p]!);
      // A start whose every edge the edit took out stays where it was.
      time[p] = at > Number.NEGATIVE_INFINITY ? at : observed[p]!;
    }
  }
  return time;
}

/** The span of some ops in a replay: from the first start to the last end. */
export function spanOf(time: Float64Array, ops: readonly number[]): { start: number; end: number } {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const i of ops) {
    start = Math.min(start, time[opStart(i)]!);
    end = Math.max(end, time[opEnd(i)]!);
  }
  return { start, end };
}

function upperBound(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function medianOf(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A binary heap of points by observed time, then index. */
class PointHeap {
  private readonly items: number[] = [];
  constructor(private readonly observed: Float64Array) {}

  push(p: number): void {
    const items = this.items;
    items.push(p);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): number | undefined {
    const items = this.items;
    if (!items.length) return undefined;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(items[l]!, items[m]!)) m = l;
        if (r < items.length && this.less(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    return this.observed[a]! < this.observed[b]! || (this.observed[a] === this.observed[b] && a < b);
  }
}
