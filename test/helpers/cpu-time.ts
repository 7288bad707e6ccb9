/**
 * The milliseconds of CPU this process spent in `work`, with its result. Tests that bound work to catch quadratic
 * time measure CPU rather than the clock: `npm test` runs several test files at once on a machine that may be
 * shared, which stretches the wall-clock time of a check without changing how much work it does.
 */
export function cpuTimed<T>(work: () => T): { value: T; ms: number } {
  const started = process.cpuUsage();
  const value = work();
  const { user, system } = process.cpuUsage(started);
  return { value, ms: (user + system) / 1000 };
}
