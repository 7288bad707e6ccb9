import { MODEL_RESOURCES } from '../kinds/index.js';
import { type Bound, type DeviceParts, layoutBound, type LayoutShape } from './bound.js';

/** A layout the model was evaluated at, and the time it predicts. */
export interface LayoutPrediction {
  readonly chunks: number;
  readonly streams: number;
  readonly bound: Bound;
}

/**
 * The kinds' terms beside the GPU's (the CPU stage, a collective's buckets) for the workload cut into `chunks` chunks:
 * the bound with them, or null where a kind's measurements cannot predict that chunk count.
 */
export type KindTerms = (gpu: Bound, chunks: number) => Bound | null;

const STREAM_COUNTS = [1, 2, 3, 4, 6, 8, 16];

/** Powers of two from 1 up to the most chunks the elements allow (and no more than 4,096). */
export function chunkCandidates(maxChunks: number): number[] {
  const counts: number[] = [];
  for (let c = 1; c <= Math.min(maxChunks, 4096); c *= 2) counts.push(c);
  return counts;
}

/**
 * The model evaluated over chunk and stream counts: the best layout it predicts for the workload and its time, issued
 * as the measured layout was, each with the kinds' terms (`terms`) beside the GPU's, so that no prediction is below
 * what a kind measured (the CPU stage's work, a collective's calls); a chunk count a kind cannot predict is left out
 * (the measured layout itself is the model's to compare with, model.ts). Never above `serialMs` (the serial baseline's
 * fastest rep, or null when there is
 * none): one chunk on one stream was measured, and a floor above a measured time would be no floor.
 */
export function workloadFloor(
  parts: DeviceParts,
  measured: LayoutShape,
  maxChunks: number,
  serialMs: number | null = null,
  terms: KindTerms = (gpu) => gpu,
): LayoutPrediction {
  const found = predictedFloor(parts, measured, maxChunks, serialMs, terms);
  if (!found) throw new RangeError('no layout to evaluate');
  return found;
}

/** `workloadFloor`, or null where no layout could be predicted (no chunk count allowed, or none a kind can predict). */
export function predictedFloor(
  parts: DeviceParts,
  measured: LayoutShape,
  maxChunks: number,
  serialMs: number | null = null,
  terms: KindTerms = (gpu) => gpu,
): LayoutPrediction | null {
  let found: LayoutPrediction | null = null;
  for (const chunks of chunkCandidates(maxChunks)) {
    for (const streams of STREAM_COUNTS.filter((s) => s <= chunks)) {
      const bound = terms(layoutBound(parts, predictedShape(parts, measured, chunks, streams)), chunks);
      if (bound && (!found || bound.ms < found.bound.ms)) found = { chunks, streams, bound };
    }
  }
  if (!found) return null;
  if (serialMs !== null && serialMs < found.bound.ms) {
    const serial = { term: 'serial', steadyMs: serialMs, perOpMs: 0, fillDrainMs: 0, ms: serialMs } as const;
    return { chunks: 1, streams: 1, bound: { ...serial, terms: [serial] } };
  }
  return found;
}

/**
 * The measured layout's shape at other chunk and stream counts. The kernels' chunked time is scaled from the layout
 * that measured it (each chunk more or fewer adds or saves its launches' fixed cost), but never above the estimate
 * from the whole buffers, nor below the fastest the kernels ran, whole or chunked: a chunked time taken far from here
 * (thousands of chunks, with their host issue cost) says little about a few chunks, and no layout makes the kernels'
 * own work faster than it was ever measured.
 */
export function predictedShape(
  parts: DeviceParts,
  measured: LayoutShape,
  chunks: number,
  streams: number,
): LayoutShape {
  const shape = { chunks, streams, issue: measured.issue };
  if (measured.kernelsChunkedMs === null || (chunks === measured.chunks && streams === measured.streams))
    return { ...shape, kernelsChunkedMs: measured.kernelsChunkedMs };
  // The compute measured chunked is the resources whose time is their steps alone (the SMs').
  const alone = MODEL_RESOURCES.filter((r) => r.estimate === 'alone').map((r) => r.measured(parts));
  const launchesPerChunk = measured.issue === 'graph' ? 0 : alone.reduce((sum, r) => sum + r.opsPerChunk * r.opMs, 0);
  const wholeMs = alone.reduce((sum, r) => sum + r.wholeMs, 0);
  const scaled = Math.max(0, measured.kernelsChunkedMs + (chunks - measured.chunks) * launchesPerChunk);
  const fromWhole = wholeMs + (chunks - 1) * launchesPerChunk;
  const fastest = wholeMs > 0 ? Math.min(wholeMs, measured.kernelsChunkedMs) : 0;
  return { ...shape, kernelsChunkedMs: Math.max(fastest, Math.min(scaled, fromWhole)) };
}
