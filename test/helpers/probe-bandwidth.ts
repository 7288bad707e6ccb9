/**
 * One row of a probe's `bandwidth` list (`probe --bandwidth --json`): 256 MiB copied one way, or both, at
 * `gbPerSecond`, three samples of 5 ms each. The tests of the link rates build probes of these.
 */
export const probeBandwidth = (direction: string, hostMemory: string, gbPerSecond: number) => ({
  bytes: 268435456,
  hostMemory,
  direction,
  pieces: 1,
  streamsPerDirection: 1,
  samplesMs: [5, 5, 5],
  stats: {
    n: 3,
    median: 5,
    mean: 5,
    min: 5,
    max: 5,
    stdev: 0,
    q1: 5,
    q3: 5,
    iqr: 0,
    relativeStdev: 0,
    relativeNoise: 0,
    outliers: [],
  },
  gbPerSecond,
});
