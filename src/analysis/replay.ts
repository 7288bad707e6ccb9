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

export const EDGE_KINDS: readonly EdgeKind[] = ['host', 'issue', 'stream', 'wait', 'sync', 'blocking', 'link'];
/** Among edges that allow a point the same time, which binds: lower first (by EDGE_KINDS' codes). */
const BINDS_FIRST: readonly number[] = [5, 4, 3, 0, 1, 2, 6];

/**
 * The edges, one column each (a million ops make millions of edges: objects would spend the time in the garbage
 * collector), and each point's incoming edges as a slice of `into` from `firstInto[p]` to `firstInto[p + 1]`.
 */
export interface EdgeTable {
  readonly count: number;
  readonly kind: Uint8Array;
  readonly from: Int32Array;
  readonly to: Int32Array;
  readonly weight: Float64Array;
  readonly lag: Float64Array;
  readonly firstInto: Int32Array;
  readonly into: Int32Array;
}

export interface ReplayGraph {
  readonly ops: readonly GpuEvent[];
  readonly calls: readonly HostCall[];
  /** Each point's time in the trace. */
  readonly observed: Float64Array;
  /** Each task's own duration: an op's time on its engine; a call's time apart from what it waited for. */
  readonly duration: Float64Array;
  readonly edges: EdgeTable;
  /** The points in an order in which every edge's source comes before its target. */
  readonly order: Int32Array;
  /** Per op, the index of the call that launched it, or -1. */
  readonly callOf: Int32Array;
  /** Per point, a time it never comes before whatever the edit (an op's issue time where no call is known). */
  readonly anchor: Float64Array;
  /** Whether copies of each direction were seen running at once: whether the device overlaps them. */
  readonly concurrentCopies: ConcurrentCopies;
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

/** Edges as they are found, in growing columns. */
class Builder {
  count = 0;
  kind = new Uint8Array(1024);
  from = new Int32Array(1024);
  to = new Int32Array(1024);
  weight = new Float64Array(1024);

  add(kind: EdgeKind, from: number, to: number, weight: number): void {
    if (this.count === this.kind.length) {
      const grow = <T extends Uint8Array | Int32Array | Float64Array>(column: T): T => {
        const next = new (column.constructor as new (n: number) => T)(column.length * 2);
        next.set(column);
        return next;
      };
      this.kind = grow(this.kind);
      this.from = grow(this.from);
      this.to = grow(this.to);
      this.weight = grow(this.weight);
    }
    this.kind[this.count] = EDGE_KINDS.indexOf(kind);
    this.from[this.count] = from;
    this.to[this.count] = to;
    this.weight[this.count] = weight;
    this.count++;
  }
}

/** Edge k of the table as an object, for the rules that read a few. */
export function edgeAt(edges: EdgeTable, k: number): Edge {
  return { kind: EDGE_KINDS[edges.kind[k]!]!, from: edges.from[k]!, to: edges.to[k]!, weight: edges.weight[k]!, lag: edges.lag[k]! };
}

/** The indexes of the edges into point p. */
export function edgesInto(edges: EdgeTable, p: number): Int32Array {
  return edges.into.subarray(edges.firstInto[p]!, edges.firstInto[p + 1]!);
}

/** The edges of one kind into point p. */
export function edgesOfKindInto(edges: EdgeTable, p: number, kind: EdgeKind): number[] {
  const code = EDGE_KINDS.indexOf(kind);
  return [...edgesInto(edges, p)].filter((k) => edges.kind[k] === code);
}

export interface GraphOptions {
  /** Each direction's link rate in GB/s, for the share of a copy's time that holds the link; null where unknown. */
  readonly linkRates: { readonly h2d: number | null; readonly d2h: number | null };
  /** The GPU's own gap between two ops of one stream that were issued in time (metrics.ts's perOpMs). */
  readonly perOpMs: number;
}

/** The graph of one device's ops (any order) and the host calls of the trace, calibrated to what the trace shows. */
export function buildGraph(events: readonly GpuEvent[], hostCalls: readonly HostCall[], options: GraphOptions): ReplayGraph {
  const ops = isSorted(events) ? events : [...events].sort((a, b) => a.start - b.start || a.end - b.end);
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
  const builder = new Builder();
  const callOf = issueEdges(builder, ops, calls, n);
  hostEdges(builder, calls, n);
  streamEdges(builder, ops);
  const concurrentCopies = copiesRunTogether(ops);
  linkEdges(builder, ops, options.linkRates, concurrentCopies);
  const byEnd = indexesByEnd(ops);
  waitEdges(builder, ops, calls, callOf, byEnd);
  // What a launch takes when it waits for nothing: the typical launch call.
  const plain = medianOf(calls.flatMap((c) => (c.kind === 'launch' ? [c.end - c.start] : []))) ?? 0;
  const waited = syncEdges(builder, ops, calls, callOf, n, plain, byEnd);
  // A call that waited keeps, of its own time, what a launch takes without waiting.
  for (const j of waited) duration[n + j] = Math.min(duration[n + j]!, plain);
  const anchor = new Float64Array(2 * tasks).fill(Number.NEGATIVE_INFINITY);
  // Where no call is known, an op is held by the time the trace says it was issued (cuda-pipe's own traces).
  ops.forEach((op, i) => {
    if (callOf[i]! < 0) anchor[opStart(i)] = Math.min(op.issued ?? op.start, op.start);
  });
  return calibrate({ ops, calls, observed, duration, callOf, anchor, concurrentCopies }, builder, options.perOpMs);
}

function isSorted(events: readonly GpuEvent[]): boolean {
  for (let i = 1; i < events.length; i++) {
    const a = events[i - 1]!;
    const b = events[i]!;
    if (a.start > b.start || (a.start === b.start && a.end > b.end)) return false;
  }
  return true;
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
 * Copies of one direction share their engine and link: the next copy (by start) cannot start before this one is done
 * with them. Where the trace shows two copies of a direction running at once (on other streams), the device runs
 * them side by side and a copy holds only its link, for its bytes at the link's rate (a small copy's fixed cost
 * leaves room); where it never does, as for an H200's H2D copies in the finding pairs, one copy runs after another
 * and holds its engine for its whole time.
 */
function linkEdges(builder: Builder, ops: readonly GpuEvent[], rates: GraphOptions['linkRates'], together: ConcurrentCopies): void {
  for (const direction of ['h2d', 'd2h'] as const) {
    const rate = rates[direction];
    let previous = -1;
    ops.forEach((op, i) => {
      if (op.kind !== 'memcpy' || op.direction !== direction) return;
      const before = ops[previous];
      if (before) builder.add('link', opStart(previous), opStart(i), together[direction] ? linkHoldMs(before, rate) : Math.max(0, before.end - before.start));
      previous = i;
    });
  }
}

/** Per direction, whether the trace shows two copies of it running at once on different streams. */
export interface ConcurrentCopies {
  readonly h2d: boolean;
  readonly d2h: boolean;
}

function copiesRunTogether(ops: readonly GpuEvent[]): ConcurrentCopies {
  const seen = { h2d: false, d2h: false };
  for (const direction of ['h2d', 'd2h'] as const) {
    let reach = Number.NEGATIVE_INFINITY;
    let stream: string | null = null;
    for (const op of ops) {
      if (op.kind !== 'memcpy' || op.direction !== direction) continue;
      if (op.start < reach - TOLERANCE_MS && op.stream !== stream) {
        seen[direction] = true;
        break;
      }
      if (op.end > reach) {
        reach = op.end;
        stream = op.stream;
      }
    }
  }
  return seen;
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
function waitEdges(builder: Builder, ops: readonly GpuEvent[], calls: readonly HostCall[], callOf: Int32Array, byEnd: ByEnd): void {
  const { order, ends } = byEnd;
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
    while (k >= 0 && ops[order[k]!]!.stream === op.stream) k--;
    if (k < 0) return;
    const blocker = order[k]!;
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
function syncEdges(builder: Builder, ops: readonly GpuEvent[], calls: readonly HostCall[], callOf: Int32Array, n: number, plainMs: number, { order, ends }: ByEnd): Set<number> {
  const waited = new Set<number>();
  callOf.forEach((j, i) => {
    if (j < 0) return;
    const call = calls[j]!;
    const op = ops[i]!;
    // Far longer than a launch, and returning about when its op ended: it waited for the op (a copy to pageable
    // memory, `.item()`'s, waits for the work before it on its stream too; a copy from pageable memory returns as its
    // last staged piece is handed over, a little before the op ends). The weight is where the call returned against
    // the op's end.
    const long = call.end - call.start > Math.max(3 * plainMs, 4 * TOLERANCE_MS);
    if (long && op.end > call.start && Math.abs(call.end - op.end) <= RETURN_MS) {
      builder.add('blocking', opEnd(i), 2 * (n + j) + 1, Math.min(0, call.end - op.end));
      waited.add(j);
    }
  });
  calls.forEach((call, j) => {
    if (call.kind !== 'sync') return;
    const k = upperBound(ends, call.end + TOLERANCE_MS) - 1;
    if (k < 0 || ops[order[k]!]!.end <= call.start) return;
    builder.add('sync', opEnd(order[k]!), 2 * (n + j) + 1, 0);
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
function calibrate(graph: Omit<ReplayGraph, 'edges' | 'order'>, found: Builder, perOpMs: number): ReplayGraph {
  const { observed, duration } = graph;
  const points = observed.length;
  // The live edges, and each point's incoming ones in CSR form.
  const keep = new Int32Array(found.count);
  let count = 0;
  for (let k = 0; k < found.count; k++) if (observed[found.from[k]!]! + found.weight[k]! <= observed[found.to[k]!]! + TOLERANCE_MS) keep[count++] = k;
  const kind = new Uint8Array(count);
  const from = new Int32Array(count);
  const to = new Int32Array(count);
  const weight = new Float64Array(count);
  const firstInto = new Int32Array(points + 1);
  for (let e = 0; e < count; e++) {
    const k = keep[e]!;
    kind[e] = found.kind[k]!;
    from[e] = found.from[k]!;
    to[e] = found.to[k]!;
    // An edge kept within the tolerance though the trace has its point a hair early holds exactly as observed.
    weight[e] = Math.min(found.weight[k]!, observed[to[e]!]! - observed[from[e]!]!);
    firstInto[to[e]! + 1]!++;
  }
  for (let p = 0; p < points; p++) firstInto[p + 1]! += firstInto[p]!;
  const into = new Int32Array(count);
  const fill = firstInto.slice(0, points);
  for (let e = 0; e < count; e++) into[fill[to[e]!]!++] = e;
  // A start no edge holds stays where the trace has it.
  const anchor = Float64Array.from(graph.anchor);
  for (let p = 0; p < points; p += 2) if (firstInto[p] === firstInto[p + 1]) anchor[p] = observed[p]!;
  const binding = new Int32Array(points).fill(-1);
  const bindingLag = new Float64Array(points);
  for (let p = 0; p < points; p++) {
    let best = -1;
    let bestAt = Number.NEGATIVE_INFINITY;
    for (let x = firstInto[p]!; x < firstInto[p + 1]!; x++) {
      const e = into[x]!;
      const at = observed[from[e]!]! + weight[e]!;
      // Edges that allow the same time: the one that says most of why binds (an event wait, before the engine
      // that the same end would also free), so that taking it out takes its lag out too.
      if (at > bestAt + 1e-12 || (Math.abs(at - bestAt) <= 1e-12 && best >= 0 && BINDS_FIRST[kind[e]!]! < BINDS_FIRST[kind[best]!]!)) {
        bestAt = Math.max(at, bestAt);
        best = e;
      }
    }
    // An end binds on its start plus its own duration where that reaches it; otherwise on what it waited for, whose
    // lag then carries the rest (a synchronize's return after the op it waited for ended).
    if (best >= 0 && (p % 2 === 0 || observed[p]! > observed[p - 1]! + duration[p >> 1]! + TOLERANCE_MS)) {
      binding[p] = best;
      bindingLag[p] = Math.max(0, observed[p]! - bestAt);
    }
  }
  const typical = (code: number): number => {
    let size = 0;
    for (let p = 0; p < points; p++) if (binding[p]! >= 0 && kind[binding[p]!] === code) size++;
    const lags = new Float64Array(size);
    let i = 0;
    for (let p = 0; p < points; p++) if (binding[p]! >= 0 && kind[binding[p]!] === code) lags[i++] = bindingLag[p]!;
    return medianOfSorted(lags.sort()) ?? 0;
  };
  // A stream's next op, or an engine's next copy, follows after the GPU's own gap between ops; the host's next call after no delay.
  const usual = EDGE_KINDS.map((k, code) => (k === 'stream' || k === 'link' ? perOpMs : k === 'host' ? 0 : typical(code)));
  const lag = new Float64Array(count);
  for (let e = 0; e < count; e++) {
    const slack = Math.max(0, observed[to[e]!]! - observed[from[e]!]! - weight[e]!);
    lag[e] = binding[to[e]!] === e ? slack : Math.min(slack, usual[kind[e]!]!);
  }
  const edges: EdgeTable = { count, kind, from, to, weight, lag, firstInto, into };
  return { ...graph, anchor, edges, order: topologicalOrder(points, edges, observed) };
}

/** Kahn's algorithm, taking ready points by their observed time, so that the order is the trace's where edges allow. */
function topologicalOrder(points: number, edges: EdgeTable, observed: Float64Array): Int32Array {
  // Each point's successors in CSR form: its outgoing edges, and an end after its start.
  const firstOut = new Int32Array(points + 1);
  for (let e = 0; e < edges.count; e++) firstOut[edges.from[e]! + 1]!++;
  for (let p = 0; p < points; p += 2) firstOut[p + 1]!++;
  for (let p = 0; p < points; p++) firstOut[p + 1]! += firstOut[p]!;
  const out = new Int32Array(firstOut[points]!);
  const fill = firstOut.slice(0, points);
  for (let e = 0; e < edges.count; e++) out[fill[edges.from[e]!]!++] = edges.to[e]!;
  for (let p = 0; p < points; p += 2) out[fill[p]!++] = p + 1;
  const remaining = new Int32Array(points);
  for (let p = 0; p < points; p++) remaining[p] = edges.firstInto[p + 1]! - edges.firstInto[p]! + (p % 2);
  const heap = new PointHeap(observed, points);
  for (let p = 0; p < points; p++) if (remaining[p] === 0) heap.push(p);
  const order = new Int32Array(points);
  const placed = new Uint8Array(points);
  let count = 0;
  let scan = 0;
  while (count < points) {
    let p = heap.pop();
    // A cycle (points within the tolerance of each other) is broken at its earliest unplaced point.
    if (p < 0) {
      for (let q = scan; q < points; q++) if (!placed[q] && (p < 0 || observed[q]! < observed[p]!)) p = q;
      scan = 0;
    }
    if (placed[p]) continue;
    placed[p] = 1;
    order[count++] = p;
    for (let x = firstOut[p]!; x < firstOut[p + 1]!; x++) {
      const q = out[x]!;
      if (--remaining[q]! === 0 && !placed[q]) heap.push(q);
    }
  }
  return order;
}

/** Every point's time with the edit applied. Unchanged, it is the trace's. */
export function replay(graph: ReplayGraph, edit: Edit = {}): Float64Array {
  const { observed, duration, edges, order, anchor } = graph;
  const n = graph.ops.length;
  const added = new Map<number, Edge[]>();
  for (const e of edit.added ?? []) added.set(e.to, [...(added.get(e.to) ?? []), e]);
  const time = new Float64Array(observed.length);
  const own = (task: number): number => (task < n ? edit.opDuration?.get(task) : edit.callDuration?.get(task - n)) ?? duration[task]!;
  const issue = EDGE_KINDS.indexOf('issue');
  const { dropped, weight } = edit;
  for (let x = 0; x < order.length; x++) {
    const p = order[x]!;
    let at = Number.NEGATIVE_INFINITY;
    for (let y = edges.firstInto[p]!; y < edges.firstInto[p + 1]!; y++) {
      const k = edges.into[y]!;
      if (dropped?.has(k)) continue;
      let w = weight?.get(k) ?? edges.weight[k]!;
      // A launch reaches its op no later than the call's own (perhaps shorter) time.
      if (edges.kind[k] === issue) w = Math.min(w, own(edges.from[k]! >> 1));
      const candidate = time[edges.from[k]!]! + w + edges.lag[k]!;
      if (candidate > at) at = candidate;
    }
    const extra = added.get(p);
    if (extra) for (const e of extra) at = Math.max(at, time[e.from]! + e.weight + e.lag);
    if (p % 2 === 1) time[p] = Math.max(time[p - 1]! + own(p >> 1), at);
    else {
      at = Math.max(at, anchor[p]!);
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

interface ByEnd {
  /** Op indexes by end time. */
  readonly order: Int32Array;
  /** Their ends, ascending. */
  readonly ends: Float64Array;
}

/** The ops by end time: ops sorted by start are nearly so by end, which an insertion pass settles in linear time. */
function indexesByEnd(ops: readonly GpuEvent[]): ByEnd {
  const order = Int32Array.from({ length: ops.length }, (_, i) => i);
  const ends = Float64Array.from(ops, (op) => op.end);
  let moves = 0;
  for (let i = 1; i < order.length && moves <= 4 * order.length; i++) {
    const o = order[i]!;
    const e = ends[i]!;
    let j = i - 1;
    while (j >= 0 && ends[j]! > e) {
      order[j + 1] = order[j]!;
      ends[j + 1] = ends[j]!;
      j--;
      moves++;
    }
    order[j + 1] = o;
    ends[j + 1] = e;
  }
  // Far from sorted (one long op among many short ones): a full sort instead.
  if (moves > 4 * order.length) {
    const sorted = Int32Array.from({ length: ops.length }, (_, i) => i).sort((a, b) => ops[a]!.end - ops[b]!.end);
    return { order: sorted, ends: Float64Array.from(sorted, (i) => ops[i]!.end) };
  }
  return { order, ends };
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
  return medianOfSorted(Float64Array.from(values).sort());
}

function medianOfSorted(sorted: Float64Array): number | null {
  if (!sorted.length) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A binary heap of points by observed time, then index; -1 when empty. */
class PointHeap {
  private readonly items: Int32Array;
  private size = 0;

  constructor(
    private readonly observed: Float64Array,
    capacity: number,
  ) {
    this.items = new Int32Array(Math.max(1, capacity));
  }

  push(p: number): void {
    const items = this.items;
    let i = this.size++;
    items[i] = p;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i]!, items[parent]!)) break;
      const t = items[i]!;
      items[i] = items[parent]!;
      items[parent] = t;
      i = parent;
    }
  }

  pop(): number {
    if (!this.size) return -1;
    const items = this.items;
    const top = items[0]!;
    items[0] = items[--this.size]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && this.less(items[l]!, items[m]!)) m = l;
      if (r < this.size && this.less(items[r]!, items[m]!)) m = r;
      if (m === i) break;
      const t = items[i]!;
      items[i] = items[m]!;
      items[m] = t;
      i = m;
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    const oa = this.observed[a]!;
    const ob = this.observed[b]!;
    return oa < ob || (oa === ob && a < b);
  }
}
