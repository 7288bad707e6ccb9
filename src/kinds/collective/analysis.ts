import type { Interval, IntervalSet } from '../../model/timeline.js';
import type { Collective } from '../../vocabulary.js';
import type { ReportContext } from '../api/index.js';

// Communication against computation on each device, from traced ops alone, and the collectives' bandwidths as
// nccl-tests report them (doc/PERFORMANCE.md there). Times in ms, bandwidths in GB/s (1e9 bytes per second).

/**
 * The fields of a timeline op this module reads. A communication op (a collective) names its collective and carries
 * the per-rank message bytes (the NCCL call's count × element size).
 */
export interface CommOp {
  readonly kind: string;
  readonly device: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly engineStartMs?: number;
  readonly engineEndMs?: number;
  readonly bytes: number;
  readonly collective?: Collective;
}

/**
 * What the overlap reads of the list of kinds and of the analysis, which the report passes in. Computation is the
 * stages on the SMs (kernels, GEMMs), communication the collectives, whose NCCL kernels run there too. Copies and host
 * ops are neither side, as in Holistic Trace Analysis, which sorts kernels into communication, memory and computation
 * and compares the first and the last.
 */
export type OverlapFacts = Pick<ReportContext, 'computeStages' | 'communicationStages' | 'intervals'>;

/**
 * nccl-tests' bus bandwidth factor: all-reduce moves 2(n−1)/n of its array across each rank's links, reduce-scatter
 * and all-gather (n−1)/n. Zero on one rank, where nothing crosses a link.
 */
export function busFactor(collective: Collective, ranks: number): number {
  const share = (ranks - 1) / ranks;
  return collective === 'allreduce' ? 2 * share : share;
}

export interface CollectiveBandwidth {
  /** S / t. */
  readonly algGbPerSecond: number;
  /** algbw × busFactor: comparable with the links' peak whatever the rank count. */
  readonly busGbPerSecond: number;
}

/**
 * Bandwidths of one call that took `ms`, as nccl-tests gives them: algbw = S / t with S the whole array (its
 * ReduceScatter and AllGather count × ranks × element size), which a collective op's `bytes` is already (the chunk
 * reduced, scattered or gathered in place; each rank's part of it is 1/n). NaN for a time that is not positive.
 */
export function collectiveBandwidth(
  collective: Collective,
  bytes: number,
  ranks: number,
  ms: number,
): CollectiveBandwidth {
  const alg = ms > 0 ? bytes / ms / 1e6 : Number.NaN;
  return { algGbPerSecond: alg, busGbPerSecond: alg * busFactor(collective, ranks) };
}

/** How much of one device's communication ran while it computed. */
export interface CommOverlap {
  readonly device: number;
  /** Time some collective ran (the union of their intervals). */
  readonly commMs: number;
  /** Time some collective and some computation ran at once. */
  readonly overlappedMs: number;
  /** Communication with no computation beside it: commMs − overlappedMs. */
  readonly exposedMs: number;
  /** overlappedMs / commMs, Holistic Trace Analysis' comm/compute overlap; null without communication. */
  readonly overlap: number | null;
}

export interface CommAnalysis {
  /** One entry per device that ran a collective, by device index. */
  readonly perDevice: readonly CommOverlap[];
  /** Every device's times added up; its overlap weighs each device by its communication time. */
  readonly total: Omit<CommOverlap, 'device'>;
}

/**
 * Exposed communication and the overlap fraction per device and over all of them. Ops of one device share a clock
 * (a traced rep per device); devices are never compared with each other's times. Where CUPTI timed an op, its
 * engine's interval is taken, as the rest of the analysis does.
 */
export function commOverlap(ops: readonly CommOp[], facts: OverlapFacts): CommAnalysis {
  const { computeStages, communicationStages, intervals } = facts;
  const devices = [...new Set(ops.filter((op) => communicationStages.includes(op.kind)).map((op) => op.device))].sort(
    (a, b) => a - b,
  );
  const perDevice = devices.map((device) => {
    const own = ops.filter((op) => op.device === device);
    const comm = intervals.union(own.filter((op) => communicationStages.includes(op.kind)).map(interval));
    const compute = intervals.union(own.filter((op) => computeStages.includes(op.kind)).map(interval));
    return overlapOf(device, comm, compute, intervals);
  });
  const commMs = sum(perDevice.map((d) => d.commMs));
  const overlappedMs = sum(perDevice.map((d) => d.overlappedMs));
  return {
    perDevice,
    total: {
      commMs,
      overlappedMs,
      exposedMs: commMs - overlappedMs,
      overlap: commMs > 0 ? overlappedMs / commMs : null,
    },
  };
}

function overlapOf(
  device: number,
  comm: IntervalSet,
  compute: IntervalSet,
  intervals: OverlapFacts['intervals'],
): CommOverlap {
  const commMs = intervals.measure(comm);
  // The overlap is at most the communication time; clamping keeps rounding from making the exposed time negative.
  const overlappedMs = Math.min(commMs, intervals.measure(intervals.intersect(comm, compute)));
  return {
    device,
    commMs,
    overlappedMs,
    exposedMs: commMs - overlappedMs,
    overlap: commMs > 0 ? overlappedMs / commMs : null,
  };
}

function interval(op: CommOp): Interval {
  return op.engineStartMs !== undefined && op.engineEndMs !== undefined
    ? { start: op.engineStartMs, end: op.engineEndMs }
    : { start: op.startMs, end: op.endMs };
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
