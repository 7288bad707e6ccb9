import { EDGE_KINDS, type Edge, type Edit, type ReplayGraph } from './graph.js';

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

/** Every point's time with the edit applied. Unchanged, it is the trace's. */
export function replay(graph: ReplayGraph, edit: Edit = {}): Float64Array {
  const { observed, duration, edges, order, anchor } = graph;
  const n = graph.ops.length;
  const added = new Map<number, Edge[]>();
  for (const e of edit.added ?? []) added.set(e.to, [...(added.get(e.to) ?? []), e]);
  const time = new Float64Array(observed.length);
  const own = (task: number): number =>
    (task < n ? edit.opDuration?.get(task) : edit.callDuration?.get(task - n)) ?? duration[task]!;
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
