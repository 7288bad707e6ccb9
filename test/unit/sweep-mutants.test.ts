import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { dropClearlySlower, raceLayouts, type SweepProgress } from '../../src/measure/sweep.js';
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
