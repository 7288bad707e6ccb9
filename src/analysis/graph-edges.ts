import { calibrate } from './calibrate.js';
import type { GpuEvent, HostCall } from '../traces/events.js';
import {
  Builder,
  type ConcurrentCopies,
  medianOf,
  opEnd,
  opStart,
  type ReplayGraph,
  TOLERANCE_MS,
  upperBound,
  WAIT_WINDOW_MS,
} from './graph.js';

// The replay graph read from a trace (replay.ts says what it is for): the edges each kind of evidence gives, then
// calibrated to the trace (calibrate.ts).

/** A call that waited for an op returns at most this long after the op ended. */
const RETURN_MS = 0.1;
/** The least a call that waited for its op takes. */
const BLOCKED_MS = 0.05;

export interface GraphOptions {
  /** Each direction's link rate in GB/s, for the share of a copy's time that holds the link; null where unknown. */
  readonly linkRates: { readonly h2d: number | null; readonly d2h: number | null };
  /** The GPU's own gap between two ops of one stream that were issued in time (metrics.ts's perOpMs). */
  readonly perOpMs: number;
}

/** The graph of one device's ops (any order) and the host calls of the trace, calibrated to what the trace shows. */
export function buildGraph(
  events: readonly GpuEvent[],
  hostCalls: readonly HostCall[],
  options: GraphOptions,
): ReplayGraph {
  const ops = isSorted(events) ? events : [...events].sort((a, b) => a.start - b.start || a.end - b.end);
  const launched = new Set(ops.flatMap((op) => (op.correlation === null ? [] : [op.correlation])));
  // Only the calls that matter to this device: its launches, and every synchronize (which may wait on it).
  const calls = [...hostCalls]
    .filter((c) => c.kind === 'sync' || (c.correlation !== null && launched.has(c.correlation)))
    .sort((a, b) => a.start - b.start);
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

/**
 * A thread's calls one after another; a call inside another (a driver call under a runtime call) hangs off its start.
 * A thread that takes over from another (the call just before its next one is the other thread's, and ended after its
 * own last one) waited for that thread, not for its own work: PyTorch's backward runs on autograd's thread once the
 * main thread calls it, and the main thread goes on once backward is done. Its next call then follows the other
 * thread's, so that a replay in which the other thread gets there sooner moves it too.
 */
function hostEdges(builder: Builder, calls: readonly HostCall[], n: number): void {
  const last = new Map<number | null, number>();
  calls.forEach((call, j) => {
    const thread = call.thread ?? null;
    const previous = last.get(thread);
    last.set(thread, j);
    if (previous === undefined) return;
    const before = calls[previous]!;
    if (call.start < before.end) {
      builder.add('host', 2 * (n + previous), 2 * (n + j), call.start - before.start);
      return;
    }
    const other = calls[j - 1]!;
    if ((other.thread ?? null) !== thread && other.end > before.end && other.end <= call.start) {
      builder.add('host', 2 * (n + previous) + 1, 2 * (n + j), 0);
      builder.add('host', 2 * (n + j - 1) + 1, 2 * (n + j), call.start - other.end);
      return;
    }
    builder.add('host', 2 * (n + previous) + 1, 2 * (n + j), call.start - before.end);
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
function linkEdges(
  builder: Builder,
  ops: readonly GpuEvent[],
  rates: GraphOptions['linkRates'],
  together: ConcurrentCopies,
): void {
  for (const direction of ['h2d', 'd2h'] as const) {
    const rate = rates[direction];
    let previous = -1;
    ops.forEach((op, i) => {
      if (op.kind !== 'memcpy' || op.direction !== direction) return;
      const before = ops[previous];
      if (before)
        builder.add(
          'link',
          opStart(previous),
          opStart(i),
          together[direction] ? linkHoldMs(before, rate) : Math.max(0, before.end - before.start),
        );
      previous = i;
    });
  }
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
function waitEdges(
  builder: Builder,
  ops: readonly GpuEvent[],
  calls: readonly HostCall[],
  callOf: Int32Array,
  byEnd: ByEnd,
): void {
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
function syncEdges(
  builder: Builder,
  ops: readonly GpuEvent[],
  calls: readonly HostCall[],
  callOf: Int32Array,
  n: number,
  plainMs: number,
  { order, ends }: ByEnd,
): Set<number> {
  const waited = new Set<number>();
  callOf.forEach((j, i) => {
    if (j < 0) return;
    const call = calls[j]!;
    const op = ops[i]!;
    // Far longer than a launch, and returning about when its op ended: it waited for the op (a copy to pageable
    // memory, `.item()`'s, waits for the work before it on its stream too; a copy from pageable memory returns as its
    // last staged piece is handed over, a little before the op ends). The weight is where the call returned against
    // the op's end.
    // Long means held, not slow: under a profiler a launch can take 20 µs, three times its usual, and a 2 µs kernel
    // end inside it; a call that waited for its op lasts at least 50 µs.
    const long = call.end - call.start > Math.max(5 * plainMs, BLOCKED_MS);
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
