import type { TimelineOp, TracedRep } from '../result/schema.js';
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
  readonly idle: { readonly idleMs: number; readonly hostMs: number; readonly engineMs: number; readonly dependencyMs: number };
  readonly issue: IssueRate;
}

export function analyzeRep(rep: TracedRep, options: AnalysisOptions = {}): RepAnalysis {
  const gaps = idleGaps(rep, options);
  const streams = streamOrder(rep).map((id) => streamIdle(rep, id, gaps));
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
export function activity(rep: TracedRep, kinds: readonly OpKind[], exceptStream?: string): IntervalSet {
  const intervals = rep.ops.filter((op) => kinds.includes(op.kind) && op.stream !== exceptStream).map(opInterval);
  return clip(union(intervals), 0, rep.totalMs);
}

export function busyFractions(rep: TracedRep): BusyFractions {
  const share = (kinds: readonly OpKind[]) => fraction(measure(activity(rep, kinds)), rep.totalMs);
  return {
    h2d: share(['h2d']),
    d2h: share(['d2h']),
    sm: share(['kernel']),
    host: share(['host']),
    idle: rep.totalMs > 0 ? 1 - share(['h2d', 'd2h', 'kernel', 'host', 'peer']) : 0,
  };
}

export function overlapFractions(rep: TracedRep): OverlapFractions {
  const together = (a: readonly OpKind[], b: readonly OpKind[]) =>
    fraction(measure(intersect(activity(rep, a), activity(rep, b))), rep.totalMs);
  return { copyWithKernel: together(['h2d', 'd2h'], ['kernel']), h2dWithD2h: together(['h2d'], ['d2h']) };
}

/** Every gap of every stream, in stream order and then time; see IdleCause for how a gap is split. */
export function idleGaps(rep: TracedRep, options: AnalysisOptions = {}): IdleGap[] {
  const hostOffsetMs = options.hostOffsetMs ?? 0;
  const engineKinds = copyEngineKinds(options.copyEngines ?? 2);
  const gaps: IdleGap[] = [];
  for (const stream of streamOrder(rep)) {
    let previousEnd = 0;
    for (const index of opsOfStream(rep, stream)) {
      const op = opInterval(rep.ops[index]!);
      if (op.start > previousEnd) {
        const issuedAt = rep.ops[index]!.issuedMs - hostOffsetMs;
        const hostMs = Math.max(0, Math.min(op.start, issuedAt) - previousEnd);
        const waitStart = previousEnd + hostMs;
        const sharing = engineKinds.get(rep.ops[index]!.kind);
        const engineMs = sharing ? measure(clip(activity(rep, sharing, stream), waitStart, op.start)) : 0;
        const gapMs = op.start - previousEnd;
        gaps.push({
          stream, op: index, startMs: previousEnd, endMs: op.start,
          hostMs, engineMs, dependencyMs: Math.max(0, gapMs - hostMs - engineMs),
        });
      }
      previousEnd = Math.max(previousEnd, op.end);
    }
  }
  return gaps;
}

export function issueRate(rep: TracedRep): IssueRate {
  const ops = rep.ops.length;
  const gpuBusyMs = measure(activity(rep, ['h2d', 'd2h', 'kernel', 'host', 'peer']));
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

function streamIdle(rep: TracedRep, stream: string, gaps: readonly IdleGap[]): StreamIdle {
  const own = gaps.filter((g) => g.stream === stream);
  const lastEnd = Math.max(0, ...opsOfStream(rep, stream).map((i) => opInterval(rep.ops[i]!).end));
  return {
    stream,
    idleMs: sum(own.map((g) => g.endMs - g.startMs)),
    hostMs: sum(own.map((g) => g.hostMs)),
    engineMs: sum(own.map((g) => g.engineMs)),
    dependencyMs: sum(own.map((g) => g.dependencyMs)),
    tailMs: Math.max(0, rep.totalMs - lastEnd),
  };
}

/** Which kinds keep a copy of each direction waiting, given how many copy engines the device has. */
function copyEngineKinds(copyEngines: number): ReadonlyMap<OpKind, readonly OpKind[]> {
  return copyEngines >= 2
    ? new Map([['h2d', ['h2d']], ['d2h', ['d2h']], ['peer', ['peer']]])
    : new Map([['h2d', ['h2d', 'd2h']], ['d2h', ['h2d', 'd2h']], ['peer', ['peer']]]);
}

/** The rep's streams as listed, then any stream only its ops name, so no op is left out of the idle breakdown. */
export function streamOrder(rep: TracedRep): string[] {
  const ids = rep.streams.map((s) => s.id);
  for (const op of rep.ops) if (!ids.includes(op.stream)) ids.push(op.stream);
  return ids;
}

/** Indexes of a stream's ops by start time (stable for equal starts, so issue order breaks ties). */
export function opsOfStream(rep: TracedRep, stream: string): number[] {
  return rep.ops.flatMap((op, i) => (op.stream === stream ? [i] : [])).sort((a, b) => rep.ops[a]!.startMs - rep.ops[b]!.startMs || a - b);
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
