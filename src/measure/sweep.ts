import type { Schedule } from '../plan/types.js';
import type { StopRule } from '../vocabulary.js';
import { RepGuard } from './guard.js';
import { type RepetitionPolicy, StoppingCriterion } from './policy.js';
import type { MeasuredSchedule } from './repeat.js';
import { ALONE, type RepRunner } from './runner.js';
import { summarize } from './stats.js';
import { farAbove, fastestWithTies, standing } from '../bimodal.js';

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
  /**
   * The SM clock NVML reads after each rep, MHz (null where it cannot): each layout's range, so that the best of two
   * settings, raced apart, can be told apart from a clock that moved between them.
   */
  readonly smClock?: (() => number | null) | undefined;
}

/** A sweep's rounds: reps every layout gets before the race judges it, and per round after. */
export const SWEEP_ROUNDS = { probeReps: 5, batchReps: 5 } as const;

/**
 * The reps a leading layout runs on to when its noise rule would stop it with a rep far above the rest (farAbove).
 * On four H200s, 32 buckets won a race on 15 reps, 14 near 4.40 ms and one at 5.12, and took 5.28 ms on 55 of 230 reps
 * of a later run (docs/measurements/2026-11-28-bimodal/): a slower mode that holds a fifth of the reps or more shows
 * as a cluster (bimodal.ts) in this many with high odds, and one rare slow rep stays one.
 */
export const LEADER_CHECK_REPS = 45;

/** A layout in the race: its samples so far, and what the race has decided about it. */
export interface RaceEntry {
  readonly gpuMs: readonly number[];
  /** When its timed reps began (host ms), for the policy's time limit. */
  readonly startedMs: number;
  /** Samples its stopping criterion has already seen. */
  judged: number;
  readonly criterion: StoppingCriterion;
  stopped: StopRule | null;
}

/**
 * What the race decided at a round's end: each layout's stop (null: it runs on) and its reps in the next round (0
 * once stopped), in the race's order. Plain data, so that ranks can share one decision.
 */
export interface RaceRound {
  readonly stopped: ReadonlyArray<StopRule | null>;
  readonly reps: readonly number[];
}

/** The most timed reps a layout may still take under the policy's fixed count or its ceiling. */
const repsLeft = (policy: RepetitionPolicy, taken: number) => Math.max(0, (policy.fixedReps ?? policy.maxReps) - taken);

/**
 * Every decision of the race that changes which reps run, in one place: the policy's noise rule over the samples
 * taken since the last round (seen one prefix at a time, as measureSchedule sees them), the layouts clearly slower
 * than the best, the budget, and how many reps each layout gets next. `nowMs` is the host clock at the round's end;
 * `round` 0 is the probe round, before any sample. The entries' `stopped` and `judged` are updated.
 */
export function decideRound(
  entries: readonly RaceEntry[],
  policy: RepetitionPolicy,
  race: Pick<LayoutRace, 'probeReps' | 'batchReps' | 'budgetMs' | 'exhaustive'>,
  clock: { readonly round: number; readonly raceStartMs: number; readonly nowMs: number },
): RaceRound {
  if (clock.round > 0) {
    for (const entry of entries) {
      for (; entry.judged < entry.gpuMs.length; entry.judged++) {
        const rule = entry.criterion.check(entry.gpuMs.slice(0, entry.judged + 1), clock.nowMs - entry.startedMs);
        if (rule && !entry.stopped) entry.stopped = rule;
      }
    }
    // Both judge against the same leader: dropping stops layouts, and never changes which one leads.
    const best = raceLeader(entries);
    if (!race.exhaustive) dropClearlySlower(entries, best);
    runLeaderOn(policy, best);
    if (clock.nowMs - clock.raceStartMs >= race.budgetMs) for (const entry of entries) entry.stopped ??= 'max-time';
  }
  const batch = clock.round === 0 ? race.probeReps : race.batchReps;
  return {
    stopped: entries.map((e) => e.stopped),
    reps: entries.map((e) => (e.stopped ? 0 : Math.min(batch, repsLeft(policy, e.gpuMs.length)))),
  };
}

interface Racer extends RaceEntry {
  readonly schedule: Schedule;
  readonly gpuMs: number[];
  readonly hostIssueMs: number[];
  readonly probeMs: number[];
  readonly smClockMHz: number[];
  startedMs: number;
  gateTimeouts: number;
}

/**
 * Measures many layouts against each other, spending the time where it matters: every layout gets its warm-up and a
 * few reps, then rounds of more reps go only to layouts that could still be the best. A layout whose first quartile
 * is above the best layout's third quartile (their spreads separated) is clearly slower and stops early
 * ('clearly-slower'); the others run until the policy's noise rule stops them or the budget is spent. Layouts are
 * judged only between rounds (`decideRound`), never within one.
 */
export async function raceLayouts(
  runner: RepRunner,
  schedules: readonly Schedule[],
  policy: RepetitionPolicy,
  race: LayoutRace,
): Promise<MeasuredSchedule[]> {
  const start = performance.now();
  const guard = race.guard ?? new RepGuard();
  const racers: Racer[] = schedules.map((schedule) => ({
    schedule,
    gpuMs: [],
    hostIssueMs: [],
    probeMs: [],
    smClockMHz: [],
    startedMs: 0,
    judged: 0,
    criterion: new StoppingCriterion(policy),
    stopped: null,
    gateTimeouts: 0,
  }));
  const rep = async (racer: Racer) => {
    runner.restoreInputs();
    const timing = await guard.rep(runner, racer.schedule);
    racer.gpuMs.push(timing.gpuMs);
    racer.hostIssueMs.push(timing.hostIssueMs);
    if (timing.probesMs) racer.probeMs.push(...timing.probesMs);
    if (timing.gateTimedOut) racer.gateTimeouts += 1;
    const clock = race.smClock?.();
    if (clock) racer.smClockMHz.push(clock);
  };
  const progress = () =>
    race.onProgress?.({
      done: racers.filter((s) => s.stopped).length,
      total: racers.length,
      elapsedMs: performance.now() - start,
    });
  const agreement = runner.agreement ?? ALONE;
  for (let round = 0; ; round++) {
    const decided = decideRound(racers, policy, race, { round, raceStartMs: start, nowMs: performance.now() });
    // Every rank of a launch runs a layout this round while any rank's race still wants it: the same reps everywhere.
    const running = await agreement.any(
      decided.reps.map((n) => n > 0),
      `which layouts take round ${round} of the race`,
    );
    const reps = racers.map((racer, i) =>
      running[i]
        ? decided.reps[i] ||
          Math.min(round === 0 ? race.probeReps : race.batchReps, repsLeft(policy, racer.gpuMs.length))
        : 0,
    );
    // The probe round reports each layout as its probe reps end, below.
    if (round > 0) progress();
    if (reps.every((n) => n === 0)) break;
    for (const [i, racer] of racers.entries()) {
      if (round === 0) {
        for (let w = 0; w < policy.warmup; w++) {
          runner.restoreInputs();
          await guard.rep(runner, racer.schedule);
        }
        racer.startedMs = performance.now();
      }
      for (let n = 0; n < (reps[i] ?? 0); n++) await rep(racer);
      if (round === 0) progress();
    }
  }
  return racers.map((s) => ({
    schedule: s.schedule,
    gpuMs: s.gpuMs,
    hostIssueMs: s.hostIssueMs,
    stoppedBy: s.stopped ?? 'max-time',
    elapsedMs: performance.now() - s.startedMs,
    smClockMHz: s.smClockMHz,
    gateTimeouts: s.gateTimeouts,
    ...(s.probeMs.length ? { probeMs: s.probeMs } : {}),
  }));
}

type Raced = { gpuMs: readonly number[]; stopped: StopRule | null };
/** The layout the race ranks first now, with where it stands. */
export type Leader = { state: Raced; standing: ReturnType<typeof standing> };

/**
 * The layout the race ranks first now, of those with two reps or more, which `dropClearlySlower` and `runLeaderOn`
 * judge by; null if none has.
 */
export function raceLeader(states: ReadonlyArray<Raced>): Leader | null {
  let best: Leader | null = null;
  for (const state of states) {
    if (state.gpuMs.length < 2) continue;
    const now = standing(state.gpuMs, summarize(state.gpuMs));
    if (!best || now.at < best.standing.at) best = { state, standing: now };
  }
  return best;
}

/**
 * Stops every layout whose middle half lies wholly above the best layout's (a bimodal best at its slower cluster).
 * Clearly slower is judged against the best as it stands at every round: a layout dropped against a best whose slower
 * cluster showed later runs on, as it may be the faster one after all.
 */
export function dropClearlySlower(states: ReadonlyArray<Raced>, best = raceLeader(states)): void {
  if (!best) return;
  if (best.state.stopped === 'clearly-slower') best.state.stopped = null;
  for (const s of states) {
    if (s === best.state || s.gpuMs.length < 2) continue;
    const slower = summarize(s.gpuMs).q1 > best.standing.judgedAt;
    if (slower && !s.stopped) s.stopped = 'clearly-slower';
    else if (!slower && s.stopped === 'clearly-slower') s.stopped = null;
  }
}

/**
 * A leader that its noise rule stopped with a rep far above the rest runs on to LEADER_CHECK_REPS (or the policy's
 * ceiling): its low noise is its fast reps', and the far one may be the first of a slower cluster. A fixed count, the
 * ceiling and the time limits still stop it.
 */
export function runLeaderOn(policy: RepetitionPolicy, best: Leader | null): void {
  if (!best || (best.state.stopped !== 'noise-target' && best.state.stopped !== 'noise-stable')) return;
  const { gpuMs } = best.state;
  const checked = gpuMs.length >= Math.min(LEADER_CHECK_REPS, policy.maxReps);
  if (!checked && farAbove(gpuMs) > 0 && !best.standing.split) best.state.stopped = null;
}

/** A raced layout: its id, its timed reps and their statistics. */
export interface SweptLayout {
  readonly id: string;
  readonly samplesMs: readonly number[];
  readonly stats: { readonly median: number; readonly q1: number; readonly q3: number };
}

/**
 * The fastest layout of a sweep, and the layouts that tie with it within noise (bimodal.ts's `fastestWithTies`): a
 * layout whose reps form two clusters is ranked by the slower cluster's median, since its median is whichever cluster
 * held more reps this time and a `run` of it may get the other.
 */
export function bestOfSweep(modes: readonly SweptLayout[]): { mode: string; ties: string[] } {
  if (!modes.length) throw new RangeError('a sweep with no layout');
  const { best, ties } = fastestWithTies(modes);
  return { mode: best.id, ties: ties.map((m) => m.id) };
}
