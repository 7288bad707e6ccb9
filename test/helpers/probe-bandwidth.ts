import { summarize } from '../../src/measure/stats.js';

/**
 * One row of a probe's `bandwidth` list (`probe --bandwidth --json`): 256 MiB copied one way, or both, at
 * `gbPerSecond`, three samples of 5 ms each. The tests of the link rates build probes of these.
 */
export function probeBandwidth(direction: string, hostMemory: string, gbPerSecond: number) {
  const samplesMs = [5, 5, 5];
  return {
    bytes: 268435456,
    hostMemory,
    direction,
    pieces: 1,
    streamsPerDirection: 1,
    samplesMs,
    stats: summarize(samplesMs),
    gbPerSecond,
  };
}
