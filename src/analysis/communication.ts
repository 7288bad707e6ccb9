import type { Cause, CauseContext } from './cause.js';
import { slowdownBeside } from './contention.js';
import { type Edge, type Edit, edgeAt, edgesInto, opEnd, opStart } from './graph.js';
import { replay } from './replay.js';
import { stepMembers } from './steps.js';

// Exposed communication as a counterfactual: the step's collectives started as their gradients become ready during
// the backward pass, as DDP's buckets start them, instead of where the program started them. Which gradients a
// collective reduces the trace does not say; the collectives are taken in order, each ready once the backward pass
// has done the share of its compute that the collectives before it and itself take of the communication (equal
// buckets of layers, the bucket model of src/kinds/collective/buckets.ts). The backward pass is the compute launched
// from a thread other than the one that launched the step's first op (PyTorch's autograd runs on a thread of its own),
// else the compute before the first collective. The compute that then runs beside a collective is slowed by what the
// collective's blocks take of its SMs (contention.ts), found by replaying a few times.

/**
 * The most replays that settle the compute's slowdown beside the moved collectives: each places the collectives by the
 * slowdowns the one before found. On the DDP finding pair the step's saving moves by less than a microsecond after 8.
 */
const ROUNDS = 12;
/** Slowdowns that move no kernel by more than this (ms) have settled. */
const SETTLED_MS = 1e-4;

export function exposedCommunication({ graph, windows, device }: CauseContext): Cause | null {
  const { ops, calls, callOf } = graph;
  const dropped = new Set<number>();
  const added: Edge[] = [];
  const moved: number[] = [];
  for (const members of stepMembers(ops, windows)) {
    const comm = members.filter((i) => ops[i]!.communication);
    if (!comm.length) continue;
    const compute = members.filter((i) => ops[i]!.kind === 'kernel' && !ops[i]!.communication);
    const first = members[0]!;
    const threadOf = (i: number) => (callOf[i]! >= 0 ? (calls[callOf[i]!]!.thread ?? null) : null);
    const main = threadOf(first);
    const lastComm = ops[comm[comm.length - 1]!]!.start;
    let backward = compute.filter(
      (i) => main !== null && threadOf(i) !== null && threadOf(i) !== main && ops[i]!.start < lastComm,
    );
    if (!backward.length) backward = compute.filter((i) => ops[i]!.end <= ops[comm[0]!]!.start);
    if (!backward.length) continue;
    const computeMs = backward.reduce((sum, i) => sum + ops[i]!.end - ops[i]!.start, 0);
    const commMs = comm.reduce((sum, i) => sum + ops[i]!.end - ops[i]!.start, 0);
    if (!(computeMs > 0) || !(commMs > 0)) continue;
    let done = 0;
    let b = 0;
    let readyMs = 0;
    for (const c of comm) {
      done += ops[c]!.end - ops[c]!.start;
      const share = (done / commMs) * computeMs;
      while (b < backward.length - 1 && readyMs + duration(ops, backward[b]!) < share - 1e-9)
        readyMs += duration(ops, backward[b++]!);
      const ready = backward[b]!;
      for (const k of edgesInto(graph.edges, opStart(c))) {
        const edge = edgeAt(graph.edges, k);
        const source = ops[edge.from >> 1];
        // Keep the collective's own stream order; drop what held it to the compute and to its launch.
        if (edge.kind === 'issue' || ((edge.kind === 'wait' || edge.kind === 'stream') && !source?.communication))
          dropped.add(k);
      }
      added.push({ kind: 'wait', from: opEnd(ready), to: opStart(c), weight: 0, lag: 0 });
      moved.push(c);
    }
  }
  if (!moved.length) return null;
  const edit = withContention({ dropped, added }, graph, moved, device);
  return {
    code: 'exposed-communication',
    edit,
    ops: moved,
    facts: { count: moved.length, streams: [...new Set(moved.map((i) => ops[i]!.stream))] },
  };
}

function duration(ops: CauseContext['graph']['ops'], i: number): number {
  return ops[i]!.end - ops[i]!.start;
}

/**
 * The time [start, end] spends beside the pieces (sorted by start): summed in their order, as a sum over all of
 * them would be, but over only those that reach into it. The last piece starting before `end` is found by
 * bisection, and the walk back stops where no earlier piece ends after `start` (the running maximum of their ends),
 * so a trace of many steps costs a few pieces a kernel instead of every piece of the trace.
 */
export function overlapWith(pieces: readonly { start: number; end: number }[]): (start: number, end: number) => number {
  const reach: number[] = [];
  for (const [j, p] of pieces.entries()) reach.push(Math.max(p.end, j > 0 ? reach[j - 1]! : Number.NEGATIVE_INFINITY));
  return (start, end) => {
    let low = 0;
    let high = pieces.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (pieces[mid]!.start < end) low = mid + 1;
      else high = mid;
    }
    const inside: number[] = [];
    for (let j = low - 1; j >= 0 && reach[j]! > start; j--) if (pieces[j]!.end > start) inside.push(j);
    let sum = 0;
    for (let k = inside.length - 1; k >= 0; k--) {
      const p = pieces[inside[k]!]!;
      sum += Math.max(0, Math.min(end, p.end) - Math.max(start, p.start));
    }
    return sum;
  };
}

/** The edit with each compute kernel made as much longer as the collectives it now runs beside take of its SMs. */
function withContention(
  edit: Edit,
  graph: CauseContext['graph'],
  comm: readonly number[],
  device: CauseContext['device'],
): Edit {
  if (!device) return edit;
  const { ops } = graph;
  const kernels = ops.flatMap((op, i) => (op.kind === 'kernel' && !op.communication && op.launch ? [i] : []));
  const commShape = comm.map((i) => ops[i]!.launch).find((shape) => shape);
  if (!commShape || !kernels.length) return edit;
  const slowdown = new Map(kernels.map((i) => [i, slowdownBeside(ops[i]!.launch!, commShape, device)]));
  let current: Edit = edit;
  let previous = new Map<number, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const time = replay(graph, current);
    const pieces = comm
      .map((i) => ({ start: time[opStart(i)]!, end: time[opEnd(i)]! }))
      .sort((a, b) => a.start - b.start);
    const besides = overlapWith(pieces);
    const opDuration = new Map<number, number>();
    for (const i of kernels) {
      const factor = slowdown.get(i)!;
      if (factor <= 1) continue;
      const start = time[opStart(i)]!;
      const end = time[opEnd(i)]!;
      const beside = besides(start, end);
      const share = end > start ? Math.min(1, beside / (end - start)) : 0;
      if (share > 0) opDuration.set(i, duration(ops, i) * (1 + (factor - 1) * share));
    }
    current = { ...edit, opDuration };
    const settled = [...new Set([...opDuration.keys(), ...previous.keys()])].every(
      (i) => Math.abs((opDuration.get(i) ?? duration(ops, i)) - (previous.get(i) ?? duration(ops, i))) <= SETTLED_MS,
    );
    if (settled) break;
    previous = opDuration;
  }
  return current;
}
