import { splitRanges } from '../../chunking.js';
import type { Collective } from '../../vocabulary.js';
import { busFactor } from './analysis.js';

// The bucket model of a data-parallel step: a backward pass of L equal layers on the compute stream, whose gradients
// are cut into B buckets of whole layers, each bucket reduced on the communication stream as soon as its layers are
// computed and the previous bucket's collective is done. A collective of S per-rank bytes costs α + S·f / busbw (the
// α–β model: a fixed cost per call, then the bytes at the bus bandwidth, f nccl-tests' bus factor). Contention
// between the collective's kernels and the compute kernels for the SMs is not modelled: it can only slow the step,
// so the model stays a bound.

/** A collective's cost per call: α ms fixed, then the bus bytes at `gbPerSecond`. */
export interface AlphaBeta {
  readonly collective: Collective;
  readonly ranks: number;
  readonly alphaMs: number;
  /**
   * The bus bandwidth, GB/s. On one rank nothing crosses a link (the bus factor is 0) and the call is a local copy:
   * there it is the algorithm bandwidth.
   */
  readonly gbPerSecond: number;
}

/** Bytes the α–β model charges at its bandwidth for a call over an array of `bytes` (nccl-tests' S). */
export function modelBytes(collective: Collective, bytes: number, ranks: number): number {
  return ranks > 1 ? bytes * busFactor(collective, ranks) : bytes;
}

/** The model's time for one call. */
export function callMs(model: AlphaBeta, bytes: number): number {
  return model.alphaMs + modelBytes(model.collective, bytes, model.ranks) / model.gbPerSecond / 1e6;
}

/** One measured point: `calls` calls of equal size that moved `bytes` per-rank bytes together in `ms`. */
export interface CollectiveSample {
  readonly calls: number;
  readonly bytes: number;
  readonly ms: number;
}

/**
 * α and the bandwidth by least squares of each sample's time per call on its bus bytes per call. It needs two
 * message sizes or more, else α cannot be told from the bandwidth: then null, as for a fit whose bandwidth is not
 * positive. An intercept below zero (α is a cost) is refitted through the origin.
 */
export function fitAlphaBeta(
  collective: Collective,
  ranks: number,
  samples: readonly CollectiveSample[],
): AlphaBeta | null {
  const points = samples
    .filter((s) => s.calls > 0 && s.ms > 0)
    .map((s) => ({ x: modelBytes(collective, s.bytes / s.calls, ranks), y: s.ms / s.calls }));
  if (new Set(points.map((p) => p.x)).size < 2) return null;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  let slope = sxy / sxx;
  let alphaMs = my - slope * mx;
  if (alphaMs < 0) {
    alphaMs = 0;
    slope = points.reduce((a, p) => a + p.x * p.y, 0) / points.reduce((a, p) => a + p.x * p.x, 0);
  }
  if (!(slope > 0)) return null;
  return { collective, ranks, alphaMs, gbPerSecond: 1 / slope / 1e6 };
}

/** The bandwidth that one sample implies for a given α; null when α leaves no time for the bytes. */
export function withAlpha(
  collective: Collective,
  ranks: number,
  sample: CollectiveSample,
  alphaMs: number,
): AlphaBeta | null {
  const perCallMs = sample.ms / sample.calls - alphaMs;
  const bytes = modelBytes(collective, sample.bytes / sample.calls, ranks);
  if (!(perCallMs > 0) || !(bytes > 0)) return null;
  return { collective, ranks, alphaMs, gbPerSecond: bytes / perCallMs / 1e6 };
}

/** One step of the backward pass: its layers, their compute together, and the gradient bytes per rank. */
export interface StepShape {
  readonly layers: number;
  readonly computeMs: number;
  readonly gradientBytes: number;
}

export interface StepBound {
  /** Buckets the layers were cut into (fewer than asked when equal whole-layer buckets cannot make that many). */
  readonly buckets: number;
  /** The largest bucket's per-rank bytes. */
  readonly bucketBytes: number;
  /** When the last collective ends: the step's bound. */
  readonly ms: number;
  readonly computeMs: number;
  /** Every bucket's collective, back to back. */
  readonly commMs: number;
  /** The last bucket's collective, which no compute is left to hide. */
  readonly lastCommMs: number;
  /**
   * compute: the compute and then the last bucket's collective; communication: the collectives back to back once
   * the first bucket's layers are computed.
   */
  readonly limitedBy: 'compute' | 'communication';
}

/**
 * The step's bound with `buckets` buckets: bucket b's collective starts when its layers are computed and bucket
 * b − 1's collective is done. With B equal buckets, C the whole compute and a each collective, that is
 * max(C + a, C/B + B·a): the compute then the last collective, or the first bucket then every collective.
 */
export function stepBound(shape: StepShape, buckets: number, cost: (bytes: number) => number): StepBound {
  const ranges = splitRanges(shape.layers, buckets);
  let computed = 0;
  let commEnd = 0;
  let commMs = 0;
  let lastCommMs = 0;
  for (const range of ranges) {
    computed += (shape.computeMs * range.count) / shape.layers;
    lastCommMs = cost((shape.gradientBytes * range.count) / shape.layers);
    commEnd = Math.max(commEnd, computed) + lastCommMs;
    commMs += lastCommMs;
  }
  const firstComputeMs = (shape.computeMs * ranges[0]!.count) / shape.layers;
  return {
    buckets: ranges.length,
    bucketBytes: (shape.gradientBytes * ranges[0]!.count) / shape.layers,
    ms: commEnd,
    computeMs: shape.computeMs,
    commMs,
    lastCommMs,
    limitedBy: firstComputeMs + commMs > shape.computeMs + lastCommMs ? 'communication' : 'compute',
  };
}
