// Whether the SM clock NVML read while the parts of a bound ran matches the clock of the mode they bound, and how to
// put a kernel's time at another clock: a kernel takes cycles, time × MHz, so the same cycles at another clock take
// time × (its MHz / the other MHz). Shared by the model (measure/) and the reports, which import nothing else here.

/** An SM clock range NVML read between reps, MHz. */
export interface ClockRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Clock readings further apart than this, as a fraction of the highest, are different clocks (measure/warnings.ts's
 * clock-change rule takes the same).
 */
export const CLOCK_SPREAD = 0.05;

/**
 * `matching`: every range within CLOCK_SPREAD of each other; `rebuilt`: every part's range apart from the mode's, so
 * the parts can be put at the mode's clock; `moving`: the ranges overlap but spread more than that, so no one factor
 * puts a part at the mode's clock; `unknown`: some clock was not read.
 */
export type ClockStatus = 'matching' | 'rebuilt' | 'moving' | 'unknown';

export interface ClockMatch {
  readonly status: ClockStatus;
  readonly mode: ClockRange | null;
  /** Every part's range together. */
  readonly parts: ClockRange | null;
}

const spread = (ranges: readonly ClockRange[]) => {
  const high = Math.max(...ranges.map((r) => r.max));
  return (high - Math.min(...ranges.map((r) => r.min))) / high;
};

/** The clocks of the kernel parts of a bound against the bounded mode's. No parts: matching (nothing to put right). */
export function clockMatch(mode: ClockRange | null, parts: readonly (ClockRange | null)[]): ClockMatch {
  if (!parts.length) return { status: 'matching', mode, parts: null };
  const known = parts.filter((p): p is ClockRange => p !== null);
  const together = known.length
    ? { min: Math.min(...known.map((p) => p.min)), max: Math.max(...known.map((p) => p.max)) }
    : null;
  if (!mode || known.length < parts.length) return { status: 'unknown', mode, parts: together };
  if (spread([mode, ...known]) <= CLOCK_SPREAD) return { status: 'matching', mode, parts: together };
  const apart = known.every((p) => p.max < mode.min || p.min > mode.max);
  return { status: apart ? 'rebuilt' : 'moving', mode, parts: together };
}

/**
 * The factor that puts a part's time at the mode's clock as a floor: its cycles are at least its time × its lowest
 * clock, and the mode runs them at most at its highest. 1 where the clocks are not `rebuilt`.
 */
export function clockFactor(match: Pick<ClockMatch, 'status' | 'mode'>, part: ClockRange | null): number {
  return match.status === 'rebuilt' && match.mode && part ? part.min / match.mode.max : 1;
}

/** "1515 MHz", "1305 to 1560 MHz". */
export const clockText = (range: ClockRange) =>
  range.min === range.max ? `${range.min} MHz` : `${range.min} to ${range.max} MHz`;
