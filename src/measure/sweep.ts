import type { Schedule } from '../plan/types.js';
import { RepGuard } from './guard.js';
import { type RepetitionPolicy, StoppingCriterion } from './policy.js';
import type { MeasuredSchedule } from './repeat.js';
import type { RepRunner } from './runner.js';
import { summarize } from './stats.js';

export interface SweepProgress {
  /** Layouts finished or dropped, of all. */
  readonly done: number;
  readonly total: number;
  readonly elapsedMs: number;
}

export interface LayoutRace {
  /** Reps every layout gets before any is judged. */
  readonly probeReps: number;
  /** Reps a still-running layout gets per round. */
  readonly batchReps: number;
  /** Host time for the whole race; layouts still running when it is spent stop with 'max-time'. */
  readonly budgetMs: number;
  /** Measure every layout until the policy stops it, dropping none (to check what the race concluded). */
  readonly exhaustive?: boolean;
  /** Interrupts and deadlines, as for every other rep. */
  readonly guard?: RepGuard;
  readonly onProgress?: (progress: SweepProgress) => void;
}

interface Runner {
  readonly schedule: Schedule;
  readonly gpuMs: number[];
  readonly hostIssueMs: number[];
  readonly criterion: StoppingCriterion;
  started: number;
  stopped: MeasuredSchedule['stoppedBy'] | null;
  gateTimeouts: number;
}

/**
 * Measures many layouts against each other, spending the time where it matters: every layout gets a few reps, then
 * rounds of more reps go only to layouts that could still be the best. A layout whose first quartile is above the
 * best layout's third quartile (their spreads separated) is clearly slower and stops early ('clearly-slower'); the
 * others run until the policy's noise rule stops them or the budget is spent.
 */
export async function raceLayouts(runner: RepRunner, schedules: readonly Schedule[], policy: RepetitionPolicy, race: LayoutRace): Promise<MeasuredSchedule[]> {
  const start = performance.now();
  const guard = race.guard ?? new RepGuard();
  const states: Runner[] = schedules.map((schedule) => ({
    schedule,
    gpuMs: [],
    hostIssueMs: [],
    criterion: new StoppingCriterion(policy),
    started: 0,
    stopped: null,
    gateTimeouts: 0,
  }));
  const rep = async (state: Runner) => {
    runner.restoreInputs();
    const timing = await guard.rep(runner, state.schedule);
    state.gpuMs.push(timing.gpuMs);
    state.hostIssueMs.push(timing.hostIssueMs);
    if (timing.gateTimedOut) state.gateTimeouts += 1;
    if (!state.stopped) state.stopped = state.criterion.check(state.gpuMs, performance.now() - state.started);
  };
  const progress = () => race.onProgress?.({ done: states.filter((s) => s.stopped).length, total: states.length, elapsedMs: performance.now() - start });
  for (const state of states) {
    for (let i = 0; i < policy.warmup; i++) {
      runner.restoreInputs();
      await guard.rep(runner, state.schedule);
    }
    state.started = performance.now();
    for (let i = 0; i < race.probeReps && !state.stopped; i++) await rep(state);
    progress();
  }
  for (;;) {
    if (!race.exhaustive) dropClearlySlower(states);
    const running = states.filter((s) => !s.stopped);
    progress();
    if (!running.length) break;
    if (performance.now() - start >= race.budgetMs) {
      for (const s of running) s.stopped = 'max-time';
      break;
    }
    for (const state of running) for (let i = 0; i < race.batchReps && !state.stopped; i++) await rep(state);
  }
  return states.map((s) => ({
    schedule: s.schedule,
    gpuMs: s.gpuMs,
    hostIssueMs: s.hostIssueMs,
    stoppedBy: s.stopped ?? 'max-time',
    elapsedMs: performance.now() - s.started,
    smClockMHz: [],
    gateTimeouts: s.gateTimeouts,
  }));
}

/** Stops every layout whose middle half lies wholly above the best layout's. */
export function dropClearlySlower(states: Array<{ gpuMs: readonly number[]; stopped: MeasuredSchedule['stoppedBy'] | null }>): void {
  const judged = states.filter((s) => s.gpuMs.length >= 2 && s.stopped !== 'clearly-slower');
  if (judged.length < 2) return;
  const stats = new Map(judged.map((s) => [s, summarize(s.gpuMs)]));
  const best = judged.reduce((a, b) => ((stats.get(b)?.median ?? Infinity) < (stats.get(a)?.median ?? Infinity) ? b : a));
  const bestQ3 = stats.get(best)?.q3 ?? Infinity;
  for (const s of judged) {
    if (s === best || s.stopped) continue;
    if ((stats.get(s)?.q1 ?? 0) > bestQ3) s.stopped = 'clearly-slower';
  }
}

/**
 * The fastest layout of a sweep by median, and the layouts that tie with it within noise: those whose middle half
 * (q1 to q3) overlaps the best's.
 */
export function bestOfSweep(modes: ReadonlyArray<{ id: string; stats: { median: number; q1: number; q3: number } }>): { mode: string; ties: string[] } {
  const best = modes.reduce<(typeof modes)[number] | null>((a, b) => (!a || b.stats.median < a.stats.median ? b : a), null);
  if (!best) throw new RangeError('a sweep with no layout');
  return { mode: best.id, ties: modes.filter((m) => m !== best && m.stats.q1 <= best.stats.q3).map((m) => m.id) };
}
