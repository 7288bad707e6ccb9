import { exposedCommunication } from './communication.js';
import type { GpuEvent } from '../traces/events.js';
import { union } from './intervals.js';
import { EDGE_KINDS, type Edge, edgesOfKindInto, opEnd, opStart, type ReplayGraph } from './graph.js';
import { linkHoldMs } from './graph-edges.js';
import type { StepWindow } from './steps.js';
import type { Cause, CauseContext } from './cause.js';

export type { Cause, CauseContext, CauseFacts } from './cause.js';

// The causes a finding can name, each as the evidence the trace holds that it cost time and the change that removes
// it: an edit of the replay graph (replay.ts), whose replay says what the step would take without the cause. A rule
// that finds no evidence names no cause: a pattern that cost nothing is not a finding.

/** The host spans of the steps, by start: a synchronize inside one, before more launches, is mid-step. */
function hostStepsOf(windows: readonly StepWindow[]): { readonly start: number; readonly end: number }[] {
  return windows.flatMap((w) => (w.host ? [w.host] : [])).sort((a, b) => a.start - b.start);
}

/** Every cause with evidence in the graph, in FINDING_CODES order. */
export function causesOf(context: CauseContext): Cause[] {
  return [
    pageableCopies,
    defaultStream,
    serialisedCopies,
    copiesOnComputeStreams,
    exposedCommunication,
    hostSyncs,
    hostBound,
  ].flatMap((rule) => {
    const cause = rule(context);
    return cause ? [cause] : [];
  });
}

/** Reads back a few bytes (`.item()`, `.cpu()` of a scalar): a synchronize, not a transfer to make faster. */
const READBACK_BYTES = 64 * 1024;

/** The edges of one kind into a point. */
const into = (graph: ReplayGraph, point: number, kind: Edge['kind']): number[] =>
  edgesOfKindInto(graph.edges, point, kind);

/** Calls `visit` with each wait edge: its index and the ops at its two ends. */
function eachWait(graph: ReplayGraph, visit: (k: number, from: GpuEvent, to: GpuEvent) => void): void {
  const { edges, ops } = graph;
  const wait = EDGE_KINDS.indexOf('wait');
  for (let k = 0; k < edges.count; k++) {
    if (edges.kind[k] !== wait) continue;
    visit(k, ops[edges.from[k]! >> 1]!, ops[edges.to[k]! >> 1]!);
  }
}

/**
 * Copies from or to pageable memory: the driver stages them through a pinned buffer at a fraction of the link's rate,
 * and the call that issued them returns only when they are done. Moved to pinned memory, each takes its bytes at the
 * pinned rate (the direction's own, else the other's: the link's two directions run at about one rate) plus the
 * fixed cost the trace's fastest copy shows, and its call returns at once.
 */
function pageableCopies({ graph, pinned }: CauseContext): Cause | null {
  const opDuration = new Map<number, number>();
  const dropped = new Set<number>();
  const ops: number[] = [];
  let bytes = 0;
  let ms = 0;
  let used: number | null = null;
  const fixed = Math.min(0.01, ...graph.ops.filter((op) => op.kind === 'memcpy').map((op) => op.end - op.start));
  graph.ops.forEach((op, i) => {
    if (op.hostMemory !== 'pageable' || op.bytes === null || !(op.bytes > READBACK_BYTES)) return;
    if (op.direction !== 'h2d' && op.direction !== 'd2h') return;
    const rate = pinned[op.direction] ?? pinned[op.direction === 'h2d' ? 'd2h' : 'h2d'];
    if (rate === null || !(rate > 0)) return;
    const faster = op.bytes / (rate * 1e6) + fixed;
    if (!(faster < op.end - op.start)) return;
    opDuration.set(i, faster);
    const call = graph.callOf[i]!;
    if (call >= 0) for (const k of into(graph, 2 * (graph.ops.length + call) + 1, 'blocking')) dropped.add(k);
    ops.push(i);
    bytes += op.bytes;
    ms += op.end - op.start;
    used = rate;
  });
  if (!ops.length || used === null) return null;
  return {
    code: 'pageable-copy',
    edit: { opDuration, dropped },
    ops,
    facts: {
      count: ops.length,
      streams: streamsOf(graph, ops),
      rateGbPerSecond: used,
      observedGbPerSecond: bytes / ms / 1e6,
    },
  };
}

/**
 * The legacy default stream synchronises with every blocking stream (one created without cudaStreamNonBlocking): work
 * on it waits for theirs, and theirs for it. A stream whose work ever ran beside the default stream's is not blocking
 * (PyTorch creates its streams non-blocking); the waits between the default stream and a stream that never did are
 * the cost, taken out.
 */
function defaultStream({ graph }: CauseContext): Cause | null {
  const { ops } = graph;
  const onDefault = ops.flatMap((op, i) => (op.defaultStream ? [i] : []));
  if (!onDefault.length) return null;
  const beside = new Set<string>();
  const busy = union(onDefault.map((i) => ({ start: ops[i]!.start + TOLERANCE, end: ops[i]!.end - TOLERANCE })));
  const starts = Float64Array.from(busy, (piece) => piece.start);
  for (const op of ops) {
    if (op.defaultStream || beside.has(op.stream)) continue;
    // The last piece of the default stream's work starting before this op ends: the only one that can overlap it.
    const k = lastBefore(starts, op.end);
    if (k >= 0 && busy[k]!.end > op.start) beside.add(op.stream);
  }
  const dropped = new Set<number>();
  const involved = new Set<number>();
  eachWait(graph, (k, from, to) => {
    if (from.defaultStream === to.defaultStream) return;
    const other = from.defaultStream ? to : from;
    if (beside.has(other.stream)) return;
    dropped.add(k);
    involved.add(graph.edges.from[k]! >> 1);
    involved.add(graph.edges.to[k]! >> 1);
  });
  if (!dropped.size) return null;
  const list = [...involved];
  return {
    code: 'default-stream',
    edit: { dropped },
    ops: list,
    facts: { count: dropped.size, streams: streamsOf(graph, list) },
  };
}

const TOLERANCE = 0.0015;

/**
 * Copies of one direction on two streams, the second waiting for the first to end. Without the wait the second
 * starts as soon as the first is done with what they share (replay.ts's link edges): on a device that runs such
 * copies side by side (the trace shows it), once the first moved its bytes at the link's rate, so only where the
 * link had room (the first ran below that rate); on one that runs them one after another, right after the first
 * instead of an event's turnaround later. Where the link ran full, overlapping saves nothing, and no cause is named.
 */
function serialisedCopies({ graph, pinned }: CauseContext): Cause | null {
  const dropped = new Set<number>();
  const involved = new Set<number>();
  eachWait(graph, (k, from, to) => {
    if (from.kind !== 'memcpy' || to.kind !== 'memcpy' || from.direction !== to.direction || from.stream === to.stream)
      return;
    if (from.direction !== 'h2d' && from.direction !== 'd2h') return;
    if (graph.concurrentCopies[from.direction]) {
      const rate = pinned[from.direction];
      if (rate === null || !(linkHoldMs(from, rate) < ROOM * (from.end - from.start))) return;
    }
    dropped.add(k);
    involved.add(graph.edges.from[k]! >> 1);
    involved.add(graph.edges.to[k]! >> 1);
  });
  if (!dropped.size) return null;
  const list = [...involved];
  return {
    code: 'serialised-copies',
    edit: { dropped },
    ops: list,
    facts: { count: dropped.size, streams: streamsOf(graph, list) },
  };
}

/** A copy that held its link for less than this share of its time left the link room for another. */
const ROOM = 0.8;

/**
 * Copies on a stream that also computes hold the kernels after them. On a stream of their own an H2D copy still
 * feeds the kernel after it but no longer waits for the kernel before it; a D2H copy still waits for the kernel
 * that made its data but no longer holds the kernel after it. The stream's kernels keep their own order.
 */
function copiesOnComputeStreams({ graph }: CauseContext): Cause | null {
  const { ops } = graph;
  const computes = new Set(ops.filter((op) => op.kind === 'kernel' && !op.communication).map((op) => op.stream));
  const previous = new Map<string, number>();
  const before = new Int32Array(ops.length).fill(-1);
  const after = new Int32Array(ops.length).fill(-1);
  ops.forEach((op, i) => {
    const p = previous.get(op.stream);
    if (p !== undefined) {
      before[i] = p;
      after[p] = i;
    }
    previous.set(op.stream, i);
  });
  const dropped = new Set<number>();
  const added: Edge[] = [];
  const moved: number[] = [];
  const streamEdge = (from: number, to: number) =>
    into(graph, opStart(to), 'stream').find((k) => graph.edges.from[k] === opEnd(from));
  ops.forEach((op, i) => {
    if (op.kind !== 'memcpy' || !computes.has(op.stream) || (op.direction !== 'h2d' && op.direction !== 'd2h')) return;
    const p = before[i]!;
    const s = after[i]!;
    // Nothing before an H2D, or after a D2H, on its stream: it already holds nothing.
    const held = op.direction === 'h2d' ? p : s;
    if (held < 0) return;
    const cut = op.direction === 'h2d' ? streamEdge(p, i) : streamEdge(i, s);
    if (cut === undefined) return;
    dropped.add(cut);
    if (p >= 0 && s >= 0)
      added.push({ kind: 'stream', from: opEnd(p), to: opStart(s), weight: 0, lag: graph.edges.lag[cut]! });
    moved.push(i);
  });
  if (!moved.length) return null;
  return {
    code: 'copy-on-compute-stream',
    edit: { dropped, added },
    ops: moved,
    facts: { count: moved.length, streams: streamsOf(graph, moved) },
  };
}

/**
 * A synchronize (torch.cuda.synchronize, stream.synchronize) or a small read back (`.item()`, `.cpu()`) in the middle
 * of a step: the host stops until the GPU drains, then the GPU waits for the host to issue what follows. Without it
 * the host goes on issuing; the synchronize that ends a step (no launch after it within the step) is left alone.
 */
function hostSyncs({ graph, windows }: CauseContext): Cause | null {
  const { calls, ops } = graph;
  const hostSteps = hostStepsOf(windows);
  const n = ops.length;
  const callDuration = new Map<number, number>();
  const weight = new Map<number, number>();
  const dropped = new Set<number>();
  const involved: number[] = [];
  const readback = new Set<number>();
  graph.callOf.forEach((j, i) => {
    const op = ops[i]!;
    if (j >= 0 && op.kind === 'memcpy' && op.direction === 'd2h' && op.bytes !== null && op.bytes <= READBACK_BYTES)
      readback.add(j);
  });
  const lastLaunch = lastLaunchPerStep(graph, hostSteps);
  calls.forEach((call, j) => {
    const waits = [
      ...into(graph, 2 * (n + j) + 1, 'sync'),
      ...(readback.has(j) ? into(graph, 2 * (n + j) + 1, 'blocking') : []),
    ];
    if (!waits.length) return;
    const step = stepAt(hostSteps, call.start);
    const last =
      step === null
        ? (lastLaunch.get(null) ?? Number.NEGATIVE_INFINITY)
        : (lastLaunch.get(step) ?? Number.NEGATIVE_INFINITY);
    if (!(last > call.end)) return;
    for (const k of waits) dropped.add(k);
    if (call.kind === 'sync' || readback.has(j)) callDuration.set(j, 0);
    // `.item()` is a read back and then a synchronize: without it, the host makes neither call nor the work between.
    for (const k of into(graph, 2 * (n + j), 'host')) {
      const before = (graph.edges.from[k]! >> 1) - n;
      if (call.kind === 'sync' && readback.has(before)) {
        weight.set(k, 0);
        callDuration.set(before, 0);
      }
    }
    involved.push(j);
  });
  if (!involved.length) return null;
  const waitedOps = [...dropped].map((k) => graph.edges.from[k]! >> 1);
  return {
    code: 'host-sync',
    edit: { dropped, callDuration, weight },
    ops: waitedOps,
    facts: { count: involved.length, streams: streamsOf(graph, waitedOps) },
  };
}

/** The start of the last launch call in each step's host span (null: the whole trace, where it marks no steps). */
function lastLaunchPerStep(
  graph: ReplayGraph,
  hostSteps: readonly { readonly start: number; readonly end: number }[],
): Map<number | null, number> {
  const out = new Map<number | null, number>();
  for (const call of graph.calls) {
    if (call.kind !== 'launch') continue;
    const step = hostSteps.length ? stepAt(hostSteps, call.start) : null;
    if (hostSteps.length && step === null) continue;
    out.set(step, Math.max(out.get(step) ?? Number.NEGATIVE_INFINITY, call.start));
  }
  return out;
}

/** The host step holding `time` (steps sorted by start, not overlapping). */
function stepAt(steps: readonly { readonly start: number; readonly end: number }[], time: number): number | null {
  let lo = 0;
  let hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid]!.start <= time) lo = mid + 1;
    else hi = mid;
  }
  const index = lo - 1;
  return index >= 0 && time < steps[index]!.end ? index : null;
}

/** The index of the last value below `time` in a sorted array, or -1. */
function lastBefore(sorted: Float64Array, time: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < time) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The GPU waited for launches: issued all at once (a CUDA graph's replay, torch.compile's reduce-overhead mode), the
 * launches cost the host nothing and the CPU work between them is gone. A call that waited (a synchronize, a blocking
 * copy) still waits: a graph cannot hold it, and another finding names it.
 */
function hostBound({ graph }: CauseContext): Cause | null {
  const { calls, ops } = graph;
  const n = ops.length;
  const callDuration = new Map<number, number>();
  const weight = new Map<number, number>();
  const launches = new Set<number>();
  calls.forEach((call, j) => {
    if (call.kind !== 'launch') return;
    if (into(graph, 2 * (n + j) + 1, 'blocking').length) return;
    callDuration.set(j, 0);
    launches.add(j);
    for (const k of into(graph, 2 * (n + j), 'host')) weight.set(k, 0);
  });
  // Evidence: some op started when its launch let it, after the op before it on its stream had ended.
  const late = ops.flatMap((_, i) => {
    const j = graph.callOf[i]!;
    if (j < 0 || !launches.has(j)) return [];
    const { edges, observed } = graph;
    // Released by its launch: it started within a launch's latency of the point its call submitted it.
    const bindsOnIssue = into(graph, opStart(i), 'issue').some((k) => {
      const released = observed[edges.from[k]!]! + edges.weight[k]!;
      return (
        observed[opStart(i)]! - released <= LAUNCH_LATENCY_MS &&
        Math.abs(released + edges.lag[k]! - observed[opStart(i)]!) <= TOLERANCE
      );
    });
    const streamPrevious = into(graph, opStart(i), 'stream')[0];
    // The first op of a stream waits for its launch as any op must; a later one whose stream sat empty waited on the
    // host.
    const waitedOnHost =
      streamPrevious !== undefined && observed[edges.from[streamPrevious]!]! < observed[opStart(i)]! - TOLERANCE;
    return bindsOnIssue && waitedOnHost ? [i] : [];
  });
  if (!late.length) return null;
  return {
    code: 'host-bound',
    edit: { callDuration, weight },
    ops: late,
    facts: { count: launches.size, streams: streamsOf(graph, late) },
  };
}

/** The most a kernel waits after its launch returns when nothing else holds it. */
const LAUNCH_LATENCY_MS = 0.05;

function streamsOf(graph: ReplayGraph, ops: readonly number[]): string[] {
  return [...new Set(ops.map((i) => (graph.ops[i] as GpuEvent).stream))];
}
