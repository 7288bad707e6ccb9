import { type Bound, type DeviceParts, layoutBound, type LayoutShape } from './bound.js';

/** A layout the model was evaluated at, and the time it predicts. */
export interface LayoutPrediction {
  readonly chunks: number;
  readonly streams: number;
  readonly bound: Bound;
}

const STREAM_COUNTS = [1, 2, 3, 4, 6, 8, 16];

/** Powers of two from 1 up to the most chunks the elements allow (and no more than 4,096). */
export function chunkCandidates(maxChunks: number): number[] {
  const counts: number[] = [];
  for (let c = 1; c <= Math.min(maxChunks, 4096); c *= 2) counts.push(c);
  return counts;
}

/**
 * The model evaluated over chunk and stream counts: the best layout it predicts for the workload and its time. The
 * kernels' chunked time is scaled from the layout that measured it (each extra chunk adds its launches' fixed cost),
 * and the host's issue time from the measured layout's own issue time per op.
 */
export function workloadFloor(parts: DeviceParts, measured: LayoutShape, maxChunks: number): LayoutPrediction {
  let best: LayoutPrediction | null = null;
  for (const chunks of chunkCandidates(maxChunks)) {
    for (const streams of STREAM_COUNTS.filter((s) => s <= chunks)) {
      const bound = layoutBound(parts, predictedShape(parts, measured, chunks, streams));
      if (!best || bound.ms < best.bound.ms) best = { chunks, streams, bound };
    }
  }
  if (!best) throw new RangeError('no layout to evaluate');
  return best;
}

export function predictedShape(parts: DeviceParts, measured: LayoutShape, chunks: number, streams: number): LayoutShape {
  const launchesPerChunk = parts.kernelsPerChunk * parts.launchOpMs;
  const kernelsChunkedMs = measured.kernelsChunkedMs === null ? null : Math.max(0, measured.kernelsChunkedMs + (chunks - measured.chunks) * launchesPerChunk);
  return { chunks, streams, kernelsChunkedMs, hostIssueMs: null };
}
