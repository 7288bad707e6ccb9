import type { TimelineOp, TracedRep } from '../result/timeline.js';
import { engineSharing, SM_STAGES, STAGES } from '../kinds/index.js';
import { clip, type Interval, type IntervalSet, intersect, measure, union } from './intervals.js';

// What one traced rep says about the pipeline, computed from its ops alone: how busy each engine was, how much the
// stages overlapped, why each stream sat idle, and whether the host could issue work as fast as the GPU ran it.
// Every time here is GPU time in ms from the rep's start event, unless a name says host. Where CUPTI timed an op,
// its interval is the engine's (engineStartMs to engineEndMs): the time it sat queued behind another stream's work
// is its stream's idle time, not its engine's busy time.

export type OpKind = TimelineOp['kind'];

export interface AnalysisOptions {
  /**
   * The device's asyncEngineCount. With two or more, H2D and D2H copies have an engine each; with one (or none),
   * both directions queue on one engine, so a D2H can keep an H2D waiting. Default 2.
   */
  readonly copyEngines?: number;
  /**
   * Host time, from issuing the start event, at which the GPU executed it: GPU time t is host time t + offset.
   * Unknown in a Result, hence 0 by default, which assumes the start event ran as soon as it was issued. A start
   * event that ran later (behind a gate kernel, or queued work) makes 0 overstate the waits blamed on the host.
   */
  readonly hostOffsetMs?: number;
}

/** Fractions of the rep's totalMs, each in [0, 1]. */
export interface BusyFractions {
  /** Some H2D copy ran (union of the H2D ops' intervals). */
  readonly h2d: number;
  readonly d2h: number;
  /** Some kernel ran: the SMs were (at least partly) busy. */
  readonly sm: number;
  readonly host: number;
  /** No op of any kind ran. */
  readonly idle: number;
}

/** Fractions of the rep's totalMs during which two kinds of work ran at once. */
export interface OverlapFractions {
  /** A copy in either direction ran together with a kernel. */
  readonly copyWithKernel: number;
  /** An H2D copy ran together with a D2H copy. */
  readonly h2dWithD2h: number;
}

export const IDLE_CAUSES = ['host', 'engine', 'dependency'] as const;
/**
 * Why a stream sat idle before one of its ops. Each moment of a gap gets exactly one cause, tried in this order:
 * - host: the op had not been issued yet (its issue time, mapped to GPU time, lies after that moment);
 * - engine: the op was issued, it is a copy, and a copy sharing its engine ran on another stream at that moment;
 * - dependency: the op was issued and its engine was free, so it waited on something else: its stream's order, an
 *   event wait, or launch latency and the hardware queues. This is the remainder, so it also holds what the trace
 *   cannot see.
 * Kernels never wait for an engine here: kernels of several streams can share the SMs, so a kernel running
 * elsewhere does not show the SMs were full.
 */
export type IdleCause = (typeof IDLE_CAUSES)[number];

/** One stretch in which a stream waited for its next op; causes in ms, summing to the gap. */
export interface IdleGap {
  readonly stream: string;
  /** Index in the rep's ops of the op the stream waited for. */
  readonly op: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly hostMs: number;
  readonly engineMs: number;
  readonly dependencyMs: number;
}

export interface StreamIdle {
  readonly stream: string;
  /** Sum of the stream's gaps: from the rep's start to its first op, and between consecutive ops. */
  readonly idleMs: number;
  readonly hostMs: number;
  readonly engineMs: number;
  readonly dependencyMs: number;
  /** From the stream's last op to the rep's end: finished, not waiting, so apart from idleMs. */
  readonly tailMs: number;
}

export interface IssueRate {
  readonly ops: number;
  /** Host time to issue the rep. */
  readonly issueMs: number;
  readonly totalMs: number;
  /** Time in which some op ran (the union of all ops). */
  readonly gpuBusyMs: number;
  /** ops / issueMs, per µs. */
  readonly issuedPerUs: number;
  /** ops / totalMs, per µs. */
  readonly completedPerUs: number;
  /**
   * True when issuing took longer than the GPU was busy: handed all the work at once, the GPU would have run it and
   * drained before the host finished issuing it, so faster issue (fewer, larger ops, or graphs) would pay.
   */
  readonly hostIssueBound: boolean;
}

export interface RepAnalysis {
  readonly mode: string;
  readonly device: number;
  readonly totalMs: number;
  readonly busy: BusyFractions;
  readonly overlap: OverlapFractions;
  readonly gaps: readonly IdleGap[];
  /** In the order of the rep's streams list, then any stream only the ops name. */
  readonly streams: readonly StreamIdle[];
  /** Every stream's causes added up. */
  readonly idle: {
    readonly idleMs: number;
    readonly hostMs: number;
    readonly engineMs: number;
    readonly dependencyMs: number;
  };
  readonly issue: IssueRate;
}

export function analyzeRep(rep: TracedRep, options: AnalysisOptions = {}): RepAnalysis {
  const gaps = idleGaps(rep, options);
  const gapsOf = groupBy(gaps, (g) => g.stream);
  const byStream = opsByStream(rep);
  const streams = streamOrder(rep).map((id) => streamIdle(rep, id, gapsOf.get(id) ?? [], byStream.get(id) ?? []));
  return {
    mode: rep.mode,
    device: rep.device,
    totalMs: rep.totalMs,
    busy: busyFractions(rep),
    overlap: overlapFractions(rep),
    gaps,
    streams,
    idle: {
      idleMs: sum(streams.map((s) => s.idleMs)),
      hostMs: sum(streams.map((s) => s.hostMs)),
      engineMs: sum(streams.map((s) => s.engineMs)),
      dependencyMs: sum(streams.map((s) => s.dependencyMs)),
    },
    issue: issueRate(rep),
  };
}

/** Where in the rep some op of one of `kinds` ran, clipped to the rep: a union, so concurrent ops count once. */
export function activity(rep: TracedRep, kinds: readonly OpKind[]): IntervalSet {
  const intervals = rep.ops.filter((op) => kinds.includes(op.kind)).map(opInterval);
  return clip(union(intervals), 0, rep.totalMs);
}

/** The stages whose ops run on the SMs (kernels and GEMMs), from the stage table's engine rows. */

export function busyFractions(rep: TracedRep): BusyFractions {
  const share = (kinds: readonly OpKind[]) => fraction(measure(activity(rep, kinds)), rep.totalMs);
  return {
    h2d: share(['h2d']),
    d2h: share(['d2h']),
    sm: share(SM_STAGES),
    host: share(['host']),
    idle: rep.totalMs > 0 ? 1 - share(STAGES) : 0,
  };
}

export function overlapFractions(rep: TracedRep): OverlapFractions {
  const together = (a: readonly OpKind[], b: readonly OpKind[]) =>
    fraction(measure(intersect(activity(rep, a), activity(rep, b))), rep.totalMs);
  return { copyWithKernel: together(['h2d', 'd2h'], SM_STAGES), h2dWithD2h: together(['h2d'], ['d2h']) };
}

/** Every gap of every stream, in stream order and then time; see IdleCause for how a gap is split. */
export function idleGaps(rep: TracedRep, options: AnalysisOptions = {}): IdleGap[] {
  const hostOffsetMs = options.hostOffsetMs ?? 0;
  const engineKinds = engineSharing(options.copyEngines ?? 2);
  // One index per set of kinds that share an engine, built once: asking it is logarithmic in the rep's ops.
  const others = new Map<readonly OpKind[], OtherStreamsActivity>();
  const engineBusy = (kinds: readonly OpKind[]) => {
    let index = others.get(kinds);
    if (!index) others.set(kinds, (index = new OtherStreamsActivity(rep, kinds)));
    return index;
  };
  const gaps: IdleGap[] = [];
  const byStream = opsByStream(rep);
  for (const stream of streamOrder(rep)) {
    let previousEnd = 0;
    for (const index of byStream.get(stream) ?? []) {
      const traced = rep.ops[index]!;
      const op = opInterval(traced);
      if (op.start > previousEnd) {
        const issuedAt = traced.issuedMs - hostOffsetMs;
        const hostMs = Math.max(0, Math.min(op.start, issuedAt) - previousEnd);
        const waitStart = previousEnd + hostMs;
        const sharing = engineKinds.get(traced.kind);
        const engineMs = sharing ? engineBusy(sharing).measure(stream, waitStart, op.start) : 0;
        const gapMs = op.start - previousEnd;
        gaps.push({
          stream,
          op: index,
          startMs: previousEnd,
          endMs: op.start,
          hostMs,
          engineMs,
          dependencyMs: Math.max(0, gapMs - hostMs - engineMs),
        });
      }
      previousEnd = Math.max(previousEnd, op.end);
    }
  }
  return gaps;
}

/**
 * Where some op of `kinds` ran on a stream other than a given one, within the rep (`activity` with that stream's
 * ops left out), for every stream at once. The time line is cut where any stream's union of such ops begins or
 * ends; a piece covered by one stream alone remembers that stream, so "covered by another" is "covered" less the
 * pieces the asking stream covers alone. Prefix sums answer each question by binary search, so the whole analysis
 * is O(n log n) in the rep's ops where asking `activity` per gap was quadratic.
 */
class OtherStreamsActivity {
  private readonly all: Pieces;
  private readonly alone = new Map<string, Pieces>();

  constructor(rep: TracedRep, kinds: readonly OpKind[]) {
    const perStream = new Map<string, Interval[]>();
    for (const op of rep.ops) {
      if (!kinds.includes(op.kind)) continue;
      let list = perStream.get(op.stream);
      if (!list) perStream.set(op.stream, (list = []));
      list.push(opInterval(op));
    }
    // Ends sort before starts at the same time: intervals are half-open, so touching is not overlapping.
    const edges: { at: number; delta: 1 | -1; stream: string }[] = [];
    for (const [stream, intervals] of perStream) {
      for (const piece of clip(union(intervals), 0, rep.totalMs)) {
        edges.push({ at: piece.start, delta: 1, stream }, { at: piece.end, delta: -1, stream });
      }
    }
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    const all = new PiecesBuilder();
    const alone = new Map<string, PiecesBuilder>();
    const active = new Set<string>();
    for (let i = 0; i < edges.length; i += 1) {
      const edge = edges[i]!;
      if (edge.delta > 0) active.add(edge.stream);
      else active.delete(edge.stream);
      const next = edges[i + 1];
      if (!next || next.at <= edge.at || active.size === 0) continue;
      all.add(edge.at, next.at);
      if (active.size === 1) {
        const owner = active.values().next().value as string;
        let own = alone.get(owner);
        if (!own) alone.set(owner, (own = new PiecesBuilder()));
        own.add(edge.at, next.at);
      }
    }
    this.all = all.build();
    for (const [stream, builder] of alone) this.alone.set(stream, builder.build());
  }

  /** Time in [from, to) during which a stream other than `stream` ran one of the kinds. */
  measure(stream: string, from: number, to: number): number {
    if (!(to > from)) return 0;
    const own = this.alone.get(stream);
    return Math.max(0, this.all.measure(from, to) - (own ? own.measure(from, to) : 0));
  }
}

/** Sorted disjoint pieces with the time covered before each, for the covered time of any window in O(log n). */
class Pieces {
  constructor(
    private readonly starts: Float64Array,
    private readonly ends: Float64Array,
    private readonly before: Float64Array,
  ) {}

  measure(from: number, to: number): number {
    return this.upTo(to) - this.upTo(from);
  }

  /** Time covered before `t`. */
  private upTo(t: number): number {
    let low = 0;
    let high = this.starts.length;
    // The first piece starting at or after t.
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.starts[mid]! < t) low = mid + 1;
      else high = mid;
    }
    if (low === 0) return 0;
    const last = low - 1;
    return this.before[last]! + Math.min(t, this.ends[last]!) - this.starts[last]!;
  }
}

class PiecesBuilder {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  add(start: number, end: number): void {
    const last = this.ends.length - 1;
    if (last >= 0 && this.ends[last] === start) this.ends[last] = end;
    else {
      this.starts.push(start);
      this.ends.push(end);
    }
  }

  build(): Pieces {
    const before = new Float64Array(this.starts.length);
    for (let i = 1; i < before.length; i += 1) before[i] = before[i - 1]! + (this.ends[i - 1]! - this.starts[i - 1]!);
    return new Pieces(Float64Array.from(this.starts), Float64Array.from(this.ends), before);
  }
}

export function issueRate(rep: TracedRep): IssueRate {
  const ops = rep.ops.length;
  const gpuBusyMs = measure(activity(rep, STAGES));
  return {
    ops,
    issueMs: rep.issueMs,
    totalMs: rep.totalMs,
    gpuBusyMs,
    issuedPerUs: perUs(ops, rep.issueMs),
    completedPerUs: perUs(ops, rep.totalMs),
    hostIssueBound: ops > 0 && rep.issueMs > gpuBusyMs,
  };
}

function streamIdle(rep: TracedRep, stream: string, own: readonly IdleGap[], ops: readonly number[]): StreamIdle {
  let lastEnd = 0;
  for (const i of ops) lastEnd = Math.max(lastEnd, opInterval(rep.ops[i]!).end);
  return {
    stream,
    idleMs: sum(own.map((g) => g.endMs - g.startMs)),
    hostMs: sum(own.map((g) => g.hostMs)),
    engineMs: sum(own.map((g) => g.engineMs)),
    dependencyMs: sum(own.map((g) => g.dependencyMs)),
    tailMs: Math.max(0, rep.totalMs - lastEnd),
  };
}

/** The rep's streams as listed, then any stream only its ops name, so no op is left out of the idle breakdown. */
export function streamOrder(rep: TracedRep): string[] {
  const ids = new Set(rep.streams.map((s) => s.id));
  for (const op of rep.ops) ids.add(op.stream);
  return [...ids];
}

/** Each stream's op indexes by start time (stable for equal starts, so issue order breaks ties), in one pass. */
function opsByStream(rep: TracedRep): Map<string, number[]> {
  const out = groupBy(
    rep.ops.map((_, i) => i),
    (i) => rep.ops[i]!.stream,
  );
  for (const list of out.values()) list.sort((a, b) => rep.ops[a]!.startMs - rep.ops[b]!.startMs || a - b);
  return out;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** Where the op's engine ran it: CUPTI's interval where the rep has one, else the events' around the op. */
export function opInterval(op: TimelineOp): Interval {
  return op.engineStartMs !== undefined && op.engineEndMs !== undefined
    ? { start: op.engineStartMs, end: op.engineEndMs }
    : { start: op.startMs, end: op.endMs };
}

function fraction(part: number, whole: number): number {
  return whole > 0 ? part / whole : 0;
}

function perUs(count: number, ms: number): number {
  return ms > 0 ? count / (ms * 1000) : 0;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
