// The overlap model: the best time the hardware allows for a chunk-per-stream layout, from parts measured in the
// same run. Each term is a lower bound on the layout's time; the bound is the largest. It is a property of the
// hardware (stage rates, the link both ways at its best, the fixed cost of a copy and of a launch on the device, the
// host's cost to issue an op) plus the layout (chunks, streams, how many ops, how they are issued), so the same model
// evaluated over other layouts predicts the workload's floor (floor.ts). No part is taken from the mode being
// bounded: a term that followed the measurement would make the bound meet it by construction.

import { MODEL_RESOURCES, type ModelParts, type ModelResource } from '../kinds/index.js';
import type { Bound, BoundCandidate, BoundTerm } from '../model/bound.js';

export type { Bound, BoundCandidate, BoundTerm } from '../model/bound.js';

/**
 * What was measured on the device, independent of any layout. Times in ms. The parts a stage kind's model resource
 * reads (each stage alone on whole buffers, copies and kernels a chunk makes, the small ops' GPU cost) are the stage
 * table's `ModelParts`; the rest are the link, the engines and the host's costs.
 */
export interface DeviceParts extends ModelParts {
  /** Both directions of all the bytes at once, in large pieces; null when not measured. */
  readonly linkMs: number | null;
  /** The pieces each buffer was cut into for linkMs. */
  readonly linkPieces: number;
  readonly copyEngines: number;
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
   * The kernels alone, chunked over the streams and issued as the layout issues them (a graph for a graph replay):
   * the time of the resources estimated from their steps alone (the SMs); null to estimate from the whole buffers.
   */
  readonly kernelsChunkedMs: number | null;
}

const candidate = (term: BoundTerm, steadyMs: number, perOpMs: number, fillDrainMs: number): BoundCandidate => ({
  term,
  steadyMs,
  perOpMs,
  fillDrainMs,
  ms: steadyMs + fillDrainMs,
});

/** A resource's time on a layout (see `ModelResource` in src/kinds/api/result.ts). */
export interface ResourceTime {
  readonly resource: ModelResource;
  /** One chunk's time on it, its fixed per-op cost included. */
  readonly chunkMs: number;
  /** Every chunk's: its term's steady time. */
  readonly steadyMs: number;
  /** The part of steadyMs that is fixed per-op cost beyond what its measurement on whole buffers paid. */
  readonly perOpMs: number;
  /**
   * Its time where nothing overlaps (no copy engine): copies as measured on whole buffers, compute as on the layout.
   */
  readonly serialMs: number;
}

/** One resource's time on the layout, by how the kind that names it is estimated. */
function timeOn(resource: ModelResource, parts: DeviceParts, layout: LayoutShape): ResourceTime {
  const C = layout.chunks;
  const { wholeMs, opMs, opsPerChunk } = resource.measured(parts);
  if (resource.estimate === 'copy') {
    const fixed = opsPerChunk * opMs;
    // The whole-buffer copies paid one fixed cost per buffer; chunked, every chunk pays it.
    const chunkMs = Math.max(0, wholeMs - fixed) / C + (wholeMs > 0 ? fixed : 0);
    return { resource, chunkMs, steadyMs: C * chunkMs, perOpMs: wholeMs > 0 ? (C - 1) * fixed : 0, serialMs: wholeMs };
  }
  // A launch's fixed cost was measured stream-issued; a graph's replay does not pay it whole, so it is left out there.
  const fixed = layout.issue === 'graph' ? 0 : opsPerChunk * opMs;
  const totalMs = layout.kernelsChunkedMs ?? (wholeMs > 0 ? wholeMs + (C - 1) * fixed : 0);
  return {
    resource,
    chunkMs: totalMs / C,
    steadyMs: totalMs,
    perOpMs: wholeMs > 0 ? (C - 1) * fixed : 0,
    serialMs: totalMs,
  };
}

/** Each of the model's resources (the stage table's, in pipeline order) timed on the layout. */
export function resourceTimes(parts: DeviceParts, layout: LayoutShape): ResourceTime[] {
  return MODEL_RESOURCES.map((resource) => timeOn(resource, parts, layout));
}

const chunkSum = (times: readonly ResourceTime[]) => times.reduce((sum, t) => sum + t.chunkMs, 0);

/** Ops the host issues per rep of a chunk-per-stream layout: the work, the start/end events, forks and joins. */
export function issuedOps(parts: DeviceParts, layout: LayoutShape): { copies: number; launches: number; sync: number } {
  // Copies cost the host a copy each; the compute on the SMs a launch per step.
  const perChunk = (estimate: ModelResource['estimate']) =>
    MODEL_RESOURCES.filter((r) => r.estimate === estimate).reduce((n, r) => n + r.measured(parts).opsPerChunk, 0);
  return {
    copies: layout.chunks * perChunk('copy'),
    launches: layout.chunks * perChunk('alone'),
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
 * An engine term, one per resource of the stage table's kinds (the two copy directions as one on a device with one
 * copy engine; none at all without one, where everything is serial), is that resource for the whole layout (every
 * chunk paying its copies' or launches' fixed costs) plus the other resources' time for one chunk: while the
 * pipeline fills, the resource waits for the first chunk to pass the stages before it, and while it drains, the last
 * chunk still has the stages after it to pass.
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
  const times = resourceTimes(parts, layout);
  let terms: BoundCandidate[];
  if (parts.copyEngines === 0) {
    const serialMs = times.reduce((sum, t) => sum + t.serialMs, 0);
    terms = [candidate('serial', serialMs, 0, 0)];
  } else {
    terms = engineTerms(times, C, parts.copyEngines);
    const link = parts.copyEngines > 1 ? linkTerm(parts, C, times) : null;
    if (link) terms.push(link);
  }
  const perStream = Math.ceil(C / Math.max(1, layout.streams));
  if (layout.streams < C) terms.push(candidate('streams', perStream * chunkSum(times), 0, 0));
  if (!parts.gated && layout.issue === 'stream') {
    // After its last op is issued the rep still runs the last chunk's last stage: the last resource after the loads
    // with time on it (the loads went out before the chunk's other ops).
    const tail = times.slice(1).reduce((last, t) => (t.chunkMs > 0 ? t.chunkMs : last), 0);
    terms.push(candidate('host issue', hostIssueEstimate(parts, layout), 0, tail));
  }
  const binding = terms.reduce((best, c) => (c.ms > best.ms ? c : best));
  return { ...binding, terms };
}

/**
 * A term per engine: each resource on its own, but on a device with one copy engine the host link's two directions
 * share it, as one term. Each term fills and drains through the chunk's time on every other resource.
 */
function engineTerms(times: readonly ResourceTime[], C: number, copyEngines: number): BoundCandidate[] {
  const shared = copyEngines === 1 ? times.filter((t) => t.resource.hostLink) : [];
  const othersMs = (on: readonly ResourceTime[]) => chunkSum(times.filter((t) => !on.includes(t)));
  const terms: BoundCandidate[] = [];
  for (const t of times) {
    if (!shared.includes(t)) terms.push(candidate(t.resource.term, t.steadyMs, t.perOpMs, othersMs([t])));
    else if (t === shared[0]) {
      const perOpMs = shared.reduce((sum, s) => sum + s.perOpMs, 0);
      terms.push(candidate('copy engine', C * chunkSum(shared), perOpMs, othersMs(shared)));
    }
  }
  // A resource with no work (a config without H2D) is never what limits a layout: its term, the other resources'
  // time for one chunk, is at most the busiest resource's, and a tie must not name it.
  const working = terms.filter((t) => t.steadyMs > 0);
  return working.length ? working : terms;
}

/** Host time to issue one rep of a stream-issued layout, from per-op costs measured apart from it. */
export function hostIssueEstimate(parts: DeviceParts, layout: LayoutShape): number {
  const ops = issuedOps(parts, layout);
  return ops.copies * parts.hostCopyMs + ops.launches * parts.hostLaunchMs + ops.sync * (parts.hostSyncMs ?? 0);
}

function linkTerm(parts: DeviceParts, C: number, times: readonly ResourceTime[]): BoundCandidate | null {
  // The link's two directions: the first resource over it (the loads) and the last (the stores).
  const sides = times.filter((t) => t.resource.hostLink);
  const up = sides[0];
  const down = sides[sides.length - 1];
  if (!up || !down || up === down) return null;
  const upParts = up.resource.measured(parts);
  const downParts = down.resource.measured(parts);
  const { linkMs } = parts;
  // With one chunk nothing overlaps, and without traffic both ways there is no sharing to model.
  if (
    linkMs === null ||
    C < 2 ||
    upParts.bytes <= 0 ||
    downParts.bytes <= 0 ||
    upParts.wholeMs <= 0 ||
    downParts.wholeMs <= 0
  )
    return null;
  const fillMs = chunkSum(times.slice(0, times.indexOf(down)));
  const drainMs = chunkSum(times.slice(times.indexOf(up) + 1));
  const movedAlone =
    upParts.bytes * Math.min(1, fillMs / (C * up.chunkMs)) +
    downParts.bytes * Math.min(1, drainMs / (C * down.chunkMs));
  const extraCopies = C - parts.linkPieces;
  const perOpMs = extraCopies * Math.max(upParts.opsPerChunk * upParts.opMs, downParts.opsPerChunk * downParts.opMs);
  const steady = Math.max(0, linkMs * (1 - movedAlone / (upParts.bytes + downParts.bytes)) + perOpMs);
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
  const each = MODEL_RESOURCES.map((resource) => {
    const { wholeMs, opMs, opsPerChunk } = resource.measured(parts);
    const ms =
      resource.estimate === 'copy'
        ? pure(wholeMs, opsPerChunk * opMs)
        : kernelsChunkedMs !== null && wholeMs > 0
          ? Math.min(wholeMs, kernelsChunkedMs)
          : wholeMs;
    return { resource, ms };
  });
  const sides = each.filter((e) => e.resource.hostLink);
  const up = sides[0];
  const down = sides[sides.length - 1];
  const upParts = up?.resource.measured(parts);
  const link =
    parts.linkMs !== null && up && down && up !== down && upParts && up.ms > 0 && down.ms > 0
      ? pure(parts.linkMs, parts.linkPieces * upParts.opsPerChunk * upParts.opMs)
      : 0;
  const sum = (of: readonly { ms: number }[]) => of.reduce((total, e) => total + e.ms, 0);
  if (parts.copyEngines === 0) return sum(each);
  if (parts.copyEngines === 1)
    return Math.max(sum(sides), ...each.filter((e) => !e.resource.hostLink).map((e) => e.ms));
  return Math.max(...each.map((e) => e.ms), link);
}
