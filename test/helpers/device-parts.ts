import type { DeviceParts } from '../../src/measure/bound.js';

const MiB = 2 ** 20;

/**
 * The balanced config's parts as the H100 measured them (GPU-FACTS): copies 4.863 and 4.869 ms, kernel 3.695 ms,
 * both directions at once 5.387 ms, gated and with no per-op or host costs, so the model is the plain pipeline bound.
 */
export const H100_BALANCED: DeviceParts = {
  h2dMs: 4.863,
  d2hMs: 4.869,
  kernelWholeMs: 3.695,
  h2dBytes: 256 * MiB,
  d2hBytes: 256 * MiB,
  h2dCopiesPerChunk: 1,
  d2hCopiesPerChunk: 1,
  kernelsPerChunk: 1,
  linkMs: 5.387,
  linkPieces: 32,
  copyEngines: 3,
  h2dOpMs: 0,
  d2hOpMs: 0,
  launchOpMs: 0,
  hostCopyMs: 0,
  hostLaunchMs: 0,
  gated: true,
};

/** Distinct per-op costs and copies per chunk, so that every term of the bound has its own value. */
export const DISTINCT_PARTS: DeviceParts = {
  h2dMs: 4,
  d2hMs: 6,
  kernelWholeMs: 3,
  h2dBytes: 400,
  d2hBytes: 600,
  h2dCopiesPerChunk: 2,
  d2hCopiesPerChunk: 1,
  kernelsPerChunk: 2,
  linkMs: 8,
  linkPieces: 4,
  copyEngines: 2,
  h2dOpMs: 0.01,
  d2hOpMs: 0.02,
  launchOpMs: 0.005,
  hostCopyMs: 0.003,
  hostLaunchMs: 0.004,
  gated: false,
};
