import { type Builder, EDGE_KINDS, type EdgeTable, medianOfSorted, type ReplayGraph, TOLERANCE_MS } from './graph.js';

/** Among edges that allow a point the same time, which binds: lower first (by EDGE_KINDS' codes). */
const BINDS_FIRST: readonly number[] = [5, 4, 3, 0, 1, 2, 6];

/**
 * Every point the latest of its edges (and, for an end, its start plus its task's duration) plus a lag. An edge the
 * trace contradicts (its point came earlier than the edge allows) is dropped; the binding edge's lag is what is left to
 * the observed time, every other edge's the least of the same kind's binding lags (so that a replay in which it binds
 * delays it as that kind of edge usually does) and of its own slack (so that the trace replays exactly).
 */
export function calibrate(graph: Omit<ReplayGraph, 'edges' | 'order'>, found: Builder, perOpMs: number): ReplayGraph {
  const { observed, duration } = graph;
  const points = observed.length;
  // The live edges, and each point's incoming ones in CSR form.
  const keep = new Int32Array(found.count);
  let count = 0;
  for (let k = 0; k < found.count; k++)
    if (observed[found.from[k]!]! + found.weight[k]! <= observed[found.to[k]!]! + TOLERANCE_MS) keep[count++] = k;
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
      if (
        at > bestAt + 1e-12 ||
        (Math.abs(at - bestAt) <= 1e-12 && best >= 0 && BINDS_FIRST[kind[e]!]! < BINDS_FIRST[kind[best]!]!)
      ) {
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
  // A stream's next op, or an engine's next copy, follows after the GPU's usual gap between ops issued in time (the
  // median the stream edges that bound show; the least, perOpMs, where none bound); the host's next call after no
  // delay. The least gap is right for a floor, not for a replay: on an H200 it is 0.96 µs where the median is 1.25 to
  // 1.6 µs, and an engine turning from one stream's copy to another's took 2.1 µs (the serialised finding pair).
  const stream = EDGE_KINDS.indexOf('stream');
  const gap = binding.some((e) => e >= 0 && kind[e] === stream) ? typical(stream) : perOpMs;
  const usual = EDGE_KINDS.map((k, code) => (k === 'stream' || k === 'link' ? gap : k === 'host' ? 0 : typical(code)));
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
  while (count < points) {
    let p = heap.pop();
    // A cycle (points within the tolerance of each other) is broken at its earliest unplaced point.
    if (p < 0) for (let q = 0; q < points; q++) if (!placed[q] && (p < 0 || observed[q]! < observed[p]!)) p = q;
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
