import type { ConcurrentCopies, EdgeKind, ReplayGraph } from '../../src/analysis/graph.js';
import { EDGE_KINDS } from '../../src/analysis/graph.js';
import type { GpuEvent, HostCall } from '../../src/traces/events.js';
import { gpuEvent } from './gpu-event.js';

// Replay graphs written out edge by edge, for tests of the rules that read one (causes.ts) and of the findings made
// from them (findings.ts): buildGraph decides the edges from the trace and calibrates them away where the trace
// contradicts them, which hides the edge a rule is about.

/** A GPU op: a kernel on its stream unless told otherwise. */
export function gpu(op: Partial<GpuEvent> & Pick<GpuEvent, 'stream' | 'start' | 'end'>): GpuEvent {
  return gpuEvent({ name: 'op', label: null, ...op });
}

export const copy = (
  stream: string,
  direction: GpuEvent['direction'],
  start: number,
  end: number,
  bytes: number | null,
  more: Partial<GpuEvent> = {},
): GpuEvent => gpu({ stream, kind: 'memcpy', direction, start, end, bytes, hostMemory: 'pinned', ...more });

export const call = (
  kind: HostCall['kind'],
  start: number,
  end: number,
  correlation: number | null = null,
  thread: number | null = null,
): HostCall => ({
  kind,
  name: kind === 'sync' ? 'cudaDeviceSynchronize' : 'cudaLaunchKernel',
  start,
  end,
  correlation,
  thread,
});

export interface EdgeSpec {
  readonly kind: EdgeKind;
  readonly from: number;
  readonly to: number;
  readonly weight?: number;
  readonly lag?: number;
}

/** The points of a graph of `n` ops: an op's start and end, a call's start and end (calls come after the ops). */
export function points(n: number) {
  return {
    start: (i: number) => 2 * i,
    end: (i: number) => 2 * i + 1,
    callStart: (j: number) => 2 * (n + j),
    callEnd: (j: number) => 2 * (n + j) + 1,
  };
}

export interface GraphSpec {
  readonly ops: readonly GpuEvent[];
  readonly calls?: readonly HostCall[];
  readonly edges?: readonly EdgeSpec[];
  readonly concurrentCopies?: Partial<ConcurrentCopies>;
}

/**
 * The graph of the ops and calls with exactly the edges given, in their order (edge k of the spec is edge k of the
 * graph). Each op's call is the launch of its correlation; every point is where the trace has it.
 */
export function graphOf(spec: GraphSpec): ReplayGraph {
  const { ops } = spec;
  const calls = spec.calls ?? [];
  const edges = spec.edges ?? [];
  const n = ops.length;
  const tasks = n + calls.length;
  const observed = new Float64Array(2 * tasks);
  const duration = new Float64Array(tasks);
  [...ops, ...calls].forEach((task, t) => {
    observed[2 * t] = task.start;
    observed[2 * t + 1] = task.end;
    duration[t] = Math.max(0, task.end - task.start);
  });
  const callOf = Int32Array.from(ops, (op) =>
    calls.findIndex((c) => c.kind === 'launch' && c.correlation !== null && c.correlation === op.correlation),
  );
  const count = edges.length;
  const firstInto = new Int32Array(2 * tasks + 1);
  for (const e of edges) firstInto[e.to + 1]!++;
  for (let p = 0; p < 2 * tasks; p++) firstInto[p + 1]! += firstInto[p]!;
  const into = new Int32Array(count);
  const filled = firstInto.slice(0, 2 * tasks);
  edges.forEach((e, k) => {
    into[filled[e.to]!++] = k;
  });
  return {
    ops,
    calls,
    observed,
    duration,
    edges: {
      count,
      kind: Uint8Array.from(edges, (e) => EDGE_KINDS.indexOf(e.kind)),
      from: Int32Array.from(edges, (e) => e.from),
      to: Int32Array.from(edges, (e) => e.to),
      weight: Float64Array.from(edges, (e) => e.weight ?? 0),
      lag: Float64Array.from(edges, (e) => e.lag ?? 0),
      firstInto,
      into,
    },
    order: topologicalOrder(2 * tasks, edges),
    callOf,
    anchor: new Float64Array(2 * tasks).fill(Number.NEGATIVE_INFINITY),
    concurrentCopies: { h2d: false, d2h: false, ...spec.concurrentCopies },
  };
}

/** Every point after its edges' sources, and a task's end after its start. */
function topologicalOrder(count: number, edges: readonly EdgeSpec[]): Int32Array {
  const next: number[][] = Array.from({ length: count }, () => []);
  const waiting = new Int32Array(count);
  for (let p = 0; p < count; p += 2) {
    next[p]!.push(p + 1);
    waiting[p + 1]!++;
  }
  for (const e of edges) {
    next[e.from]!.push(e.to);
    waiting[e.to]!++;
  }
  const order: number[] = [];
  const ready = [...waiting.keys()].filter((p) => waiting[p] === 0);
  while (ready.length) {
    const p = ready.shift()!;
    order.push(p);
    for (const q of next[p]!) if (--waiting[q]! === 0) ready.push(q);
  }
  if (order.length !== count) throw new Error('the edges given make a cycle: a replay graph has none');
  return Int32Array.from(order);
}
