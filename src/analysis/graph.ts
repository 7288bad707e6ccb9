import type { GpuEvent, HostCall } from '../traces/events.js';

// The replay graph's shapes (replay.ts has the why): a device's ops and host calls as tasks with a start and an end,
// the edges between those points in typed columns, and the edit a finding replays.

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

/**
 * A change to replay. Edges are named by their index in the graph's `edges`; added edges are evaluated the same way.
 */
export interface Edit {
  readonly opDuration?: ReadonlyMap<number, number>;
  readonly callDuration?: ReadonlyMap<number, number>;
  /** New weights of edges, by index (a host edge's CPU work made shorter, say). */
  readonly weight?: ReadonlyMap<number, number>;
  readonly dropped?: ReadonlySet<number>;
  readonly added?: readonly Edge[];
}

/** Per direction, whether the trace shows two copies of it running at once on different streams. */
export interface ConcurrentCopies {
  readonly h2d: boolean;
  readonly d2h: boolean;
}

/** Two points closer than this are taken as simultaneous: Kineto's times are whole µs. */
export const TOLERANCE_MS = 0.0015;
/** A wait on another stream's op: it ended at most this long before the op started (an event's turnaround). */
export const WAIT_WINDOW_MS = 0.02;

export const opStart = (op: number) => 2 * op;
export const opEnd = (op: number) => 2 * op + 1;

/** Edges as they are found, in growing columns. */
export class Builder {
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
  return {
    kind: EDGE_KINDS[edges.kind[k]!]!,
    from: edges.from[k]!,
    to: edges.to[k]!,
    weight: edges.weight[k]!,
    lag: edges.lag[k]!,
  };
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

export function upperBound(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function medianOf(values: readonly number[]): number | null {
  return medianOfSorted(Float64Array.from(values).sort());
}

export function medianOfSorted(sorted: Float64Array): number | null {
  if (!sorted.length) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
