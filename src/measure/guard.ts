import { Interrupted } from '../errors.js';
import { modeName } from '../plan/describe.js';
import type { Schedule } from '../plan/types.js';
import type { RepRunner, RepTiming, TracedRepTiming } from './runner.js';

/** The longest wait for a rep of a mode with no rep seen yet (its checked rep, its first warm-up): `--timeout`. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Once a mode has run, a rep may take this many times its slowest rep so far... */
export const DEADLINE_FACTOR = 20;
/** ...but never less than this, so a rep of microseconds survives a page fault or a busy host. */
export const DEADLINE_FLOOR_MS = 1_000;
/** Node's timers hold a signed 32-bit count of ms: a longer delay fires at once (TimeoutOverflowWarning). */
export const MAX_DEADLINE_MS = 2 ** 31 - 1;

export interface GuardOptions {
  /** Aborted on Ctrl-C or SIGTERM: the next rep boundary throws Interrupted. */
  readonly signal?: AbortSignal | undefined;
  /** Deadline of a rep of a mode that has not run yet, in ms (DEFAULT_TIMEOUT_MS unless given). */
  readonly timeoutMs?: number | undefined;
}

/**
 * What every rep of a run passes through: a check for an interrupt before it (a rep boundary, where stopping
 * leaves nothing half-done on the device), and a deadline for the runner's waits, derived from the slowest rep of
 * the same mode seen so far. One guard spans verification, measurement and tracing, so the deadlines of timed reps
 * already know the checked ones.
 */
export class RepGuard {
  private readonly slowest = new Map<string, number>();

  constructor(private readonly options: GuardOptions = {}) {}

  /** How long the next rep of `id` may take before the runner gives up on it, in ms. */
  deadlineMs(id: string): number {
    const slowest = this.slowest.get(id);
    if (slowest === undefined) return Math.min(MAX_DEADLINE_MS, this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    return Math.min(MAX_DEADLINE_MS, Math.max(DEADLINE_FLOOR_MS, DEADLINE_FACTOR * slowest));
  }

  /** Throws Interrupted when a signal arrived; `before` says where the run stopped ("a rep of the serial mode"). */
  checkpoint(before: string): void {
    const { signal } = this.options;
    if (signal?.aborted) {
      throw new Interrupted(
        `Interrupted (${String(signal.reason)}) before ${before}: the device was released and nothing was written.`,
      );
    }
  }

  async rep(runner: RepRunner, schedule: Schedule, options: { checked?: boolean } = {}): Promise<RepTiming> {
    this.checkpoint(`a rep of ${modeName(schedule)}`);
    const timing = await runner.runRep(schedule.id, {
      ...options,
      deadlineMs: this.deadlineMs(schedule.id),
      signal: this.options.signal,
    });
    this.saw(schedule.id, timing.gpuMs);
    return timing;
  }

  async trace(runner: RepRunner, schedule: Schedule): Promise<TracedRepTiming> {
    this.checkpoint(`the traced rep of ${modeName(schedule)}`);
    const timing = await runner.traceRep(schedule.id, {
      deadlineMs: this.deadlineMs(schedule.id),
      signal: this.options.signal,
    });
    this.saw(schedule.id, timing.totalMs);
    return timing;
  }

  private saw(id: string, ms: number): void {
    if (Number.isFinite(ms)) this.slowest.set(id, Math.max(ms, this.slowest.get(id) ?? 0));
  }
}
