import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_POLICY, StoppingCriterion } from '../../src/measure/policy.js';
import {
  bestOfSweep,
  decideRound,
  dropClearlySlower,
  type RaceEntry,
  raceLayouts,
  raceLeader,
  runLeaderOn,
  type SweepProgress,
} from '../../src/measure/sweep.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { tinySweepPlan } from '../helpers/tiny-sweep.js';

// The race of a sweep's layouts, round by round: what mutation testing (npm run mutation) found unpinned.

const {
  plan,
  layouts: [fast, slow],
} = tinySweepPlan();

describe('the race, round by round', () => {
  it('gives each running layout its batch of reps in turn, and drops one the round its spread separates', async () => {
    assert.ok(fast && slow);
    // Both start at 1 ms; from its third rep on the slow layout takes 5 ms. Its first quartile passes the fast
    // layout's third quartile at 6 samples, after 4 rounds of 1 rep.
    const runner = new FakeRunner(plan.schedules, plan.buffers, { gpuMs: (s, n) => (s === slow && n >= 2 ? 5 : 1) });
    const measured = await raceLayouts(
      runner,
      [fast, slow],
      { ...DEFAULT_POLICY, warmup: 0, fixedReps: 10 },
      { probeReps: 2, batchReps: 1, budgetMs: 60_000 },
    );
    assert.deepEqual(
      measured.map((m) => [m.stoppedBy, m.gpuMs.length]),
      [
        ['fixed-reps', 10],
        ['clearly-slower', 6],
      ],
    );
    const order = runner.calls.flatMap((c) => (c.call === 'rep' ? [c.id === fast.id ? 'f' : 's'] : [])).join('');
    assert.equal(order, 'ffss' + 'fs'.repeat(4) + 'ffff');
  });

  it("reads the SM clock after each of a layout's reps, outside its timing, and keeps what NVML gave", async () => {
    assert.ok(fast && slow);
    // NVML answers 1980, then 1860, then nothing (null: the read failed), in turn.
    const readings = [1980, 1860, null];
    let reads = 0;
    const measured = await raceLayouts(
      new FakeRunner(plan.schedules, plan.buffers),
      [fast, slow],
      { ...DEFAULT_POLICY, warmup: 1, fixedReps: 3 },
      { probeReps: 3, batchReps: 1, budgetMs: 60_000, smClock: () => readings[reads++ % 3] ?? null },
    );
    assert.equal(reads, 6, 'one read a timed rep, none for the warm-ups');
    assert.deepEqual(
      measured.map((m) => m.smClockMHz),
      [
        [1980, 1860],
        [1980, 1860],
      ],
    );
  });

  it('reports progress after each layout of the probe round and after every later round', async () => {
    assert.ok(fast && slow);
    const progress: SweepProgress[] = [];
    await raceLayouts(
      new FakeRunner(plan.schedules, plan.buffers),
      [fast, slow],
      { ...DEFAULT_POLICY, warmup: 0, fixedReps: 4 },
      { probeReps: 2, batchReps: 1, budgetMs: 60_000, onProgress: (p) => progress.push(p) },
    );
    // Probe round: one report a layout. Then rounds 1 and 2 (a rep each) and round 3, where both stop on their
    // fixed count: a report each.
    assert.deepEqual(
      progress.map((p) => [p.done, p.total]),
      [
        [0, 2],
        [0, 2],
        [0, 2],
        [0, 2],
        [2, 2],
      ],
    );
  });

  it('times the race and each layout from when it began', async () => {
    assert.ok(fast && slow);
    const progress: SweepProgress[] = [];
    const before = performance.now();
    const measured = await raceLayouts(
      new FakeRunner(plan.schedules, plan.buffers),
      [fast, slow],
      { ...DEFAULT_POLICY, warmup: 0, fixedReps: 3 },
      { probeReps: 2, batchReps: 1, budgetMs: 60_000, onProgress: (p) => progress.push(p) },
    );
    const took = performance.now() - before;
    assert.ok(
      progress.length > 0 && progress.every((p) => p.elapsedMs >= 0 && p.elapsedMs <= took),
      JSON.stringify({ progress, took }),
    );
    assert.ok(
      measured.every((m) => m.elapsedMs >= 0 && m.elapsedMs <= took),
      JSON.stringify({ measured: measured.map((m) => m.elapsedMs), took }),
    );
  });
});

describe('the best layout of a round', () => {
  it('is the first of equal medians, whose spread then decides the drops', () => {
    const wide = { gpuMs: [0.9, 1, 1.1], stopped: null };
    const tight = { gpuMs: [1, 1, 1], stopped: null };
    const third = { gpuMs: [1.05, 1.06, 1.07], stopped: null };
    // The best is `wide` (q3 1.05): `third`'s q1 (1.055) lies above it. Had `tight` (q3 1) been taken, likewise; so
    // the third layout sits between both: q1 1.055 against 1.05 and 1.
    dropClearlySlower([wide, tight, third]);
    assert.deepEqual([wide.stopped, tight.stopped, third.stopped], [null, null, 'clearly-slower']);
    const closer = { gpuMs: [1.02, 1.03, 1.04], stopped: null };
    const again = { gpuMs: [0.9, 1, 1.1], stopped: null };
    const tightAgain = { gpuMs: [1, 1, 1], stopped: null };
    dropClearlySlower([again, tightAgain, closer]);
    // q1 1.025: below the first best's q3 (1.05), above the second's (1): kept only when the first is the best.
    assert.equal(closer.stopped, null);
  });
});

describe('a round judged at the host clock', () => {
  const policy = { ...DEFAULT_POLICY, minReps: 3, maxNoise: 0, maxTimeMs: 500 };
  const entry = (gpuMs: number[], startedMs: number): RaceEntry => ({
    gpuMs,
    startedMs,
    judged: 0,
    criterion: new StoppingCriterion(policy),
    stopped: null,
  });
  const race = { probeReps: 3, batchReps: 2, budgetMs: 1_000 };

  it("times a layout's limit from when its own reps began, not from the clock's zero", () => {
    // 100 ms since its reps began, under the policy's 500 ms: it runs on.
    const late = entry([1, 2, 3], 900);
    assert.deepEqual(decideRound([late], policy, race, { round: 1, raceStartMs: 900, nowMs: 1_000 }).stopped, [null]);
    // 600 ms since: the time limit stops it.
    const early = entry([1, 2, 3], 400);
    const round = decideRound([early], policy, race, { round: 1, raceStartMs: 400, nowMs: 1_000 });
    assert.deepEqual(round.stopped, ['max-time']);
  });

  it("spends the race's budget from when the race began", () => {
    const running = entry([1, 2], 500);
    const half = decideRound([running], policy, race, { round: 1, raceStartMs: 500, nowMs: 1_000 });
    assert.deepEqual(half, { stopped: [null], reps: [2] });
    const spent = decideRound([running], policy, race, { round: 2, raceStartMs: 0, nowMs: 1_000 });
    assert.deepEqual(spent, { stopped: ['max-time'], reps: [0] });
  });
});

describe('dropping the clearly slower', () => {
  it('does nothing while no layout has two reps', () => {
    const one = { gpuMs: [1], stopped: null };
    const far = { gpuMs: [9], stopped: null };
    dropClearlySlower([one, far]);
    assert.deepEqual([one.stopped, far.stopped], [null, null]);
  });

  it('judges only layouts with two reps or more against the best', () => {
    const best = { gpuMs: [1, 1.01, 1.02], stopped: null };
    const single = { gpuMs: [5], stopped: null };
    dropClearlySlower([best, single]);
    assert.equal(single.stopped, null);
  });

  it('lets a best that an earlier round dropped run again, and a layout no longer above it', () => {
    const best = { gpuMs: [1, 1.01, 1.02], stopped: 'clearly-slower' as const };
    const back = { gpuMs: [1.01, 1.02, 1.03], stopped: 'clearly-slower' as const };
    dropClearlySlower([best, back]);
    assert.deepEqual([best.stopped, back.stopped], [null, null]);
  });

  it('keeps the stop of a layout that its own rule stopped', () => {
    const best = { gpuMs: [1, 1.01, 1.02], stopped: null };
    const steady = { gpuMs: [1.01, 1.02, 1.03], stopped: 'noise-target' as const };
    const slower = { gpuMs: [2, 2.01, 2.02], stopped: 'fixed-reps' as const };
    dropClearlySlower([best, steady, slower]);
    assert.deepEqual([steady.stopped, slower.stopped], ['noise-target', 'fixed-reps']);
  });
});

describe('a leader stopped with a far rep', () => {
  it('runs on whichever noise rule stopped it, the stable-noise rule as the noise target', () => {
    // Nine reps at 1 ms and one at 1.5: far above the rest, and no second cluster.
    const leader = { gpuMs: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1.5], stopped: 'noise-stable' as const };
    runLeaderOn(DEFAULT_POLICY, raceLeader([leader]));
    assert.equal(leader.stopped, null);
  });
});

describe('the best of a sweep', () => {
  it('refuses a sweep with no layout', () => {
    assert.throws(() => bestOfSweep([]), RangeError);
  });
});
