// The overlap model: the best time the hardware allows for a chunk-per-stream layout, from parts measured in the
// same run. Each term is a lower bound on the layout's time; the bound is the largest. It is a property of the
// hardware (stage rates, the link both ways at its best, the fixed cost of a copy and of a launch on the device, the
// host's cost to issue an op) plus the layout (chunks, streams, how many ops, how they are issued), so the same model
// evaluated over other layouts predicts the workload's floor (floor.ts). No part is taken from the mode being
// bounded: a term that followed the measurement would make the bound meet it by construction.

export type BoundTerm = 'H2D' | 'kernels' | 'D2H' | 'link' | 'copy engine' | 'serial' | 'streams' | 'host issue' | 'CPU stage';

/** What was measured on the device, independent of any layout. Times in ms. */
export interface DeviceParts {
  /** Each stage alone on whole buffers (one copy per buffer); 0 for a stage the pipeline does not have. */
  readonly h2dMs: number;
  readonly d2hMs: number;
  readonly kernelWholeMs: number;
  readonly h2dBytes: number;
  readonly d2hBytes: number;
  /** Copies a chunk makes each way, and kernels it launches (one per buffer and per kernel). */
  readonly h2dCopiesPerChunk: number;
  readonly d2hCopiesPerChunk: number;
  readonly kernelsPerChunk: number;
  /** Both directions of all the bytes at once, in large pieces; null when not measured. */
  readonly linkMs: number | null;
  /** The pieces each buffer was cut into for linkMs. */
  readonly linkPieces: number;
  readonly copyEngines: number;
  /** Fixed GPU-side cost of one small copy each way and of one launch (from op-cost modes, behind the gate). */
  readonly h2dOpMs: number;
  readonly d2hOpMs: number;
  readonly launchOpMs: number;
  /** Host cost of issuing one copy and one launch, from the small-op batches (their fastest rep, per op). */
  readonly hostCopyMs: number;
  readonly hostLaunchMs: number;
  /** Host cost of one event record or stream wait (the issue-cost batches' cheapest); absent in older files: 0. */
  readonly hostSyncMs?: number;
  /** True when a gate held each rep until it was issued: host issue cost is out of the measured time. */
  readonly gated: boolean;
}

export interface LayoutShape {
  readonly chunks: number;
  /** Streams that run independently: streams that are all one stream (the per-thread default) count once. */
  readonly streams: number;
  /** stream: the host issues every op each rep; graph: one replay of a captured graph, no per-op host cost. */
  readonly issue: 'stream' | 'graph';
  /**
   * The kernels alone, chunked over the streams and issued as the layout issues them (a graph for a graph replay);
   * null to estimate from the whole buffers.
   */
  readonly kernelsChunkedMs: number | null;
}

export interface BoundCandidate {
  readonly term: BoundTerm;
  /** The time the resource needs in steady state, per-op costs included. */
  readonly steadyMs: number;
  /** The part of steadyMs that is fixed per-op cost (copies and launches on the device). */
  readonly perOpMs: number;
  /** Filling and draining the pipeline around it. */
  readonly fillDrainMs: number;
  readonly ms: number;
}

/** The largest candidate (its `term` is what limits the layout), with every candidate considered. */
export interface Bound extends BoundCandidate {
  readonly terms: readonly BoundCandidate[];
}

const candidate = (term: BoundTerm, steadyMs: number, perOpMs: number, fillDrainMs: number): BoundCandidate => ({
  term,
  steadyMs,
  perOpMs,
  fillDrainMs,
  ms: steadyMs + fillDrainMs,
});

/** One chunk's stage times, and the whole layout's per-op costs. */
export function chunkStages(parts: DeviceParts, layout: LayoutShape) {
  const C = layout.chunks;
  const h2dFixed = parts.h2dCopiesPerChunk * parts.h2dOpMs;
  const d2hFixed = parts.d2hCopiesPerChunk * parts.d2hOpMs;
  const launchFixed = parts.kernelsPerChunk * parts.launchOpMs;
  // The whole-buffer stages paid one fixed cost per buffer; chunked, every chunk pays it.
  const a = Math.max(0, parts.h2dMs - h2dFixed) / C + (parts.h2dMs > 0 ? h2dFixed : 0);
  const d = Math.max(0, parts.d2hMs - d2hFixed) / C + (parts.d2hMs > 0 ? d2hFixed : 0);
  // A launch's fixed cost was measured stream-issued; a graph's replay does not pay it whole, so it is left out there.
  const launchEstimate = layout.issue === 'graph' ? 0 : launchFixed;
  const kernelsMs = layout.kernelsChunkedMs ?? (parts.kernelWholeMs > 0 ? parts.kernelWholeMs + (C - 1) * launchEstimate : 0);
  const k = kernelsMs / C;
  return {
    a,
    k,
    d,
    kernelsMs,
    h2dPerOpMs: parts.h2dMs > 0 ? (C - 1) * h2dFixed : 0,
    d2hPerOpMs: parts.d2hMs > 0 ? (C - 1) * d2hFixed : 0,
    launchPerOpMs: parts.kernelWholeMs > 0 ? (C - 1) * launchEstimate : 0,
  };
}

/** Ops the host issues per rep of a chunk-per-stream layout: the work, the start/end events, forks and joins. */
export function issuedOps(parts: DeviceParts, layout: LayoutShape): { copies: number; launches: number; sync: number } {
  return {
    copies: layout.chunks * (parts.h2dCopiesPerChunk + parts.d2hCopiesPerChunk),
    launches: layout.chunks * parts.kernelsPerChunk,
    sync: syncOps(layout.streams),
  };
}

/** Event records and waits a rep over `streams` streams issues: its start and end, and a fork and join a stream. */
export function syncOps(streams: number): number {
  return 2 + 3 * (streams - 1);
}

/**
 * Each term is a lower bound on the layout's time; the bound is the largest.
 *
 * A stage term is that stage for the whole layout (every chunk paying its copies' or launches' fixed costs) plus the
 * other stages of one chunk: while the pipeline fills, the stage waits for the first chunk to pass the stages before
 * it, and while it drains, the last chunk still has the stages after it to pass.
 *
 * The link term: both directions share the link, so the copies need at least the bidirectional time. But at the
 * start no D2H can run until chunk 0 is loaded and computed, and at the end no H2D is left while the last chunk is
 * computed and stored: in those two phases one direction runs alone, at its single-direction rate. The term is
 * those phases plus the bidirectional time of the bytes they did not move, plus the fixed costs of copies beyond
 * those the link was measured with (each engine pays its own; the two directions' overlap).
 *
 * The streams term: a stream runs its chunks one after another, so the busiest stream needs its chunks' stages in
 * sequence. The host term: the rep cannot end before the host has issued its last op and that op has run; the issue
 * time is the layout's op counts times each op's host cost from the small-op batches, never the layout's own issue
 * loop. A graph replay issues one launch, so it has no host term.
 */
export function layoutBound(parts: DeviceParts, layout: LayoutShape): Bound {
  const C = layout.chunks;
  const s = chunkStages(parts, layout);
  let terms: BoundCandidate[];
  if (parts.copyEngines === 0) {
    terms = [candidate('serial', parts.h2dMs + s.kernelsMs + parts.d2hMs, 0, 0)];
  } else if (parts.copyEngines === 1) {
    terms = [candidate('copy engine', C * (s.a + s.d), s.h2dPerOpMs + s.d2hPerOpMs, s.k), candidate('kernels', s.kernelsMs, s.launchPerOpMs, s.a + s.d)];
  } else {
    terms = [candidate('H2D', C * s.a, s.h2dPerOpMs, s.k + s.d), candidate('kernels', s.kernelsMs, s.launchPerOpMs, s.a + s.d), candidate('D2H', C * s.d, s.d2hPerOpMs, s.a + s.k)];
    const link = linkTerm(parts, C, s);
    if (link) terms.push(link);
  }
  const perStream = Math.ceil(C / Math.max(1, layout.streams));
  if (layout.streams < C) terms.push(candidate('streams', perStream * (s.a + s.k + s.d), 0, 0));
  if (!parts.gated && layout.issue === 'stream') terms.push(candidate('host issue', hostIssueEstimate(parts, layout), 0, s.d > 0 ? s.d : s.k));
  const binding = terms.reduce((best, c) => (c.ms > best.ms ? c : best));
  return { ...binding, terms };
}

/** Host time to issue one rep of a stream-issued layout, from per-op costs measured apart from it. */
export function hostIssueEstimate(parts: DeviceParts, layout: LayoutShape): number {
  const ops = issuedOps(parts, layout);
  return ops.copies * parts.hostCopyMs + ops.launches * parts.hostLaunchMs + ops.sync * (parts.hostSyncMs ?? 0);
}

function linkTerm(parts: DeviceParts, C: number, s: ReturnType<typeof chunkStages>): BoundCandidate | null {
  const { h2dMs, d2hMs, h2dBytes, d2hBytes, linkMs } = parts;
  // With one chunk nothing overlaps, and without traffic both ways there is no sharing to model.
  if (linkMs === null || C < 2 || h2dBytes <= 0 || d2hBytes <= 0 || h2dMs <= 0 || d2hMs <= 0) return null;
  const fillMs = s.a + s.k;
  const drainMs = s.k + s.d;
  const movedAlone = h2dBytes * Math.min(1, fillMs / (C * s.a)) + d2hBytes * Math.min(1, drainMs / (C * s.d));
  const extraCopies = C - parts.linkPieces;
  const perOpMs = extraCopies * Math.max(parts.h2dCopiesPerChunk * parts.h2dOpMs, parts.d2hCopiesPerChunk * parts.d2hOpMs);
  const steady = Math.max(0, linkMs * (1 - movedAlone / (h2dBytes + d2hBytes)) + perOpMs);
  return candidate('link', steady, perOpMs, fillMs + drainMs);
}

/**
 * The workload's ideal, whatever the layout: the slowest resource moving or computing everything with no per-op
 * cost and no fill or drain (the link both ways at its best, each direction alone, the kernels alone). The kernels
 * take their fastest measurement, whole or chunked: on the H200 a compute-bound kernel ran 4% faster chunked over
 * streams than once on the whole buffers, and an ideal from the whole-buffer time sat above the measured pipeline.
 */
export function idealMs(parts: DeviceParts, kernelsChunkedMs: number | null = null): number {
  const pure = (ms: number, fixed: number) => Math.max(0, ms - fixed);
  const h2d = pure(parts.h2dMs, parts.h2dCopiesPerChunk * parts.h2dOpMs);
  const d2h = pure(parts.d2hMs, parts.d2hCopiesPerChunk * parts.d2hOpMs);
  const link = parts.linkMs !== null && h2d > 0 && d2h > 0 ? pure(parts.linkMs, parts.linkPieces * parts.h2dCopiesPerChunk * parts.h2dOpMs) : 0;
  const kernels = kernelsChunkedMs !== null && parts.kernelWholeMs > 0 ? Math.min(parts.kernelWholeMs, kernelsChunkedMs) : parts.kernelWholeMs;
  if (parts.copyEngines === 0) return h2d + kernels + d2h;
  if (parts.copyEngines === 1) return Math.max(h2d + d2h, kernels);
  return Math.max(h2d, d2h, link, kernels);
}
