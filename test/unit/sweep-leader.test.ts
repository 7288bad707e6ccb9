import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bimodal, farAbove } from '../../src/bimodal.js';
import { DEFAULT_POLICY, StoppingCriterion } from '../../src/measure/policy.js';
import { summarize } from '../../src/measure/stats.js';
import {
  decideRound,
  dropClearlySlower,
  LEADER_CHECK_REPS,
  type RaceEntry,
  raceLeader,
  runLeaderOn,
} from '../../src/measure/sweep.js';
import { KNOBS, recordedReps, replayRaces } from '../helpers/race-replay.js';

// 32 buckets over four H200s, comm stream at low priority: a sweep raced it for 15 reps, 14 near 4.40 ms and one at
// 5.121, and picked it; a later run of it took 5.28 ms on 55 of 230 reps. 16 buckets was steady near 4.42 ms.
const reps = (file: string, id: string) => recordedReps(join(KNOBS, file), id);
const B16 = 'overlapped:16x3:depth-first:stage-per-stream';
const B32 = 'overlapped:32x3:depth-first:stage-per-stream';

/** The low-priority sweep of sweep-g4.json (the second), as recorded. */
const sweptLow = () => {
  const sweeps = JSON.parse(readFileSync(join(KNOBS, 'sweep-g4.json'), 'utf8')) as {
    modes: { id: string; device: number; samplesMs: number[]; stoppedBy: string }[];
  }[];
  const low = sweeps[1];
  if (!low) throw new Error('sweep-g4.json holds two sweeps');
  return (id: string) => low.modes.find((m) => m.id === id && m.device === 0);
};

const entry = (gpuMs: number[], stopped: RaceEntry['stopped']): RaceEntry => ({
  gpuMs,
  startedMs: 0,
  judged: gpuMs.length,
  criterion: new StoppingCriterion(DEFAULT_POLICY),
  stopped,
});

describe('a rep far above the rest', () => {
  it('is one beyond the gap that would part two clusters: 5.121 ms among 14 reps near 4.40', () => {
    const low32 = sweptLow()(B32);
    assert.equal(low32?.samplesMs.length, 15);
    assert.equal(farAbove(low32?.samplesMs ?? []), 1);
    assert.equal(bimodal(low32?.samplesMs ?? []), null);
  });

  it('needs 1% of the median as well as 4 σ, so reps bunched on the timer never have one', () => {
    // σ is near zero here; 1.009 is 4 σ away yet under 1% above the median.
    assert.equal(farAbove([1, 1, 1, 1, 1, 1, 1, 1, 1.009]), 0);
    assert.equal(farAbove([1, 1, 1, 1, 1, 1, 1, 1, 1.011]), 1);
    // A wide spread lifts the limit far above 1%: 4 σ of these reps (σ from their IQR) is about 0.37.
    assert.equal(farAbove([0.9, 0.95, 1, 1.05, 1.1, 1.3]), 0);
    assert.equal(farAbove([0.9, 0.95, 1, 1.05, 1.1, 1.6]), 1);
  });
});

describe('the race runs a leader on when its noise rule stops it with a far rep', () => {
  it('runs the recorded low-priority sweep of 32 buckets on, which it stopped at 15 reps', () => {
    const recorded = sweptLow();
    const [b8, b16, b32] = ['overlapped:8x3:depth-first:stage-per-stream', B16, B32].map((id) => recorded(id));
    assert.deepEqual(
      [b8?.stoppedBy, b16?.stoppedBy, b32?.stoppedBy],
      ['clearly-slower', 'clearly-slower', 'noise-target'],
    );
    const entries = [b8, b16, b32].map((m) => entry(m?.samplesMs ?? [], m?.stoppedBy as RaceEntry['stopped']));
    const round = decideRound(
      entries,
      DEFAULT_POLICY,
      { probeReps: 5, batchReps: 5, budgetMs: 60_000 },
      {
        round: 3,
        raceStartMs: 0,
        nowMs: 100,
      },
    );
    assert.deepEqual(round, { stopped: ['clearly-slower', 'clearly-slower', null], reps: [0, 0, 5] });
  });

  it('lets it stop at LEADER_CHECK_REPS, at the policy ceiling, or once its reps form two clusters', () => {
    const far = [...Array.from({ length: 14 }, (_, i) => 4.4 + i * 0.001), 5.12];
    const at = (gpuMs: number[], maxReps = DEFAULT_POLICY.maxReps) => {
      const leader = { gpuMs, stopped: 'noise-target' as RaceEntry['stopped'] };
      runLeaderOn({ ...DEFAULT_POLICY, maxReps }, raceLeader([leader, { gpuMs: [4.6, 4.61, 4.62], stopped: null }]));
      return leader.stopped;
    };
    assert.equal(at(far), null);
    const padded = [...far, ...Array.from({ length: LEADER_CHECK_REPS - far.length }, () => 4.405)];
    assert.equal(at(padded), 'noise-target');
    assert.equal(at(far, 15), 'noise-target');
    const clusters = [...far.slice(0, 10), 5.1, 5.12, 5.13, 5.11];
    assert.ok(bimodal(clusters));
    assert.equal(at(clusters), 'noise-target');
    assert.equal(at(far.slice(0, 14)), 'noise-target', 'without the far rep');
  });

  it('leaves a stop by a fixed count, the ceiling or the time limit, and a layout that is not the leader', () => {
    const far = [...Array.from({ length: 14 }, () => 4.4), 5.12];
    for (const stopped of ['fixed-reps', 'max-reps', 'max-time'] as const) {
      const leader = { gpuMs: far, stopped: stopped as RaceEntry['stopped'] };
      runLeaderOn(DEFAULT_POLICY, raceLeader([leader]));
      assert.equal(leader.stopped, stopped);
    }
    const second = { gpuMs: far.map((x) => x + 1), stopped: 'noise-target' as RaceEntry['stopped'] };
    runLeaderOn(DEFAULT_POLICY, raceLeader([{ gpuMs: [4, 4.01, 4.02], stopped: null }, second]));
    assert.equal(second.stopped, 'noise-target');
  });
});

describe('a layout dropped as clearly slower', () => {
  it('runs again once the best shows a slower cluster that its middle half lies under', () => {
    const b16 = { gpuMs: reps('run-g4-low-16-2.json', B16).slice(0, 5), stopped: 'clearly-slower' as const };
    const b32 = { gpuMs: reps('run-g4-low-32-2.json', B32).slice(0, 45), stopped: null };
    const split = bimodal(b32.gpuMs);
    assert.ok(split && split.slow.median > summarize(b16.gpuMs).q1, 'the first 45 reps of the run form two clusters');
    const states: { gpuMs: number[]; stopped: RaceEntry['stopped'] }[] = [b16, b32];
    dropClearlySlower(states);
    // 16 buckets leads now, and the fast reps of 32 keep its middle half from lying wholly above 16's.
    assert.deepEqual(
      states.map((s) => s.stopped),
      [null, null],
    );
  });
});

describe('races replayed from the recorded reps of 16 and 32 buckets on four H200s', () => {
  it('pick the steady 16 buckets over 32, which took 5.28 ms on a quarter of its reps, in each of 60', async () => {
    const pools = [reps('run-g4-low-16-2.json', B16), reps('run-g4-low-32-2.json', B32)];
    const { picks, reps: taken } = await replayRaces(pools, 60);
    // Before the leader rule, 82 of 200 such races picked 32 buckets (race-replay-before.txt); after it 6 of 200,
    // none of these 60: races whose 32-bucket reps held no slow rep, where nothing tells the layouts apart.
    assert.deepEqual(
      picks.flatMap((p, i) => (p === 1 ? [i + 1] : [])),
      [],
      'races that picked 32 buckets',
    );
    // 32 buckets ran on to LEADER_CHECK_REPS in some races, and was dropped within them in others.
    assert.ok(taken.some((t) => (t[1] ?? 0) >= LEADER_CHECK_REPS));
  });
});
