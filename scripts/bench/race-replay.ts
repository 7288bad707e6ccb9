// How often `sweep` picks 32 buckets over 16 on four H200s, had it met the reps recorded for them: each race draws its
// reps at random from one recorded run of each (test/helpers/race-replay.ts), 200 seeded races a pair of runs.
// Usage: npx tsx scripts/bench/race-replay.ts [RACES]
import { join } from 'node:path';
import { KNOBS, recordedReps, replayRaces } from '../../test/helpers/race-replay.js';

const races = Number(process.argv[2] ?? 200);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const priority of ['low', 'high']) {
  const pools = [16, 32].map((b) =>
    recordedReps(join(KNOBS, `run-g4-${priority}-${b}-2.json`), `overlapped:${b}x3:depth-first:stage-per-stream`),
  );
  const { picks, reps } = await replayRaces(pools, races);
  const of32 = picks.filter((p) => p === 1).length;
  const [r16, r32] = [0, 1].map((i) => median(reps.map((r) => r[i] ?? 0)));
  console.log(
    `comm stream ${priority}: ${races} races over run-g4-${priority}-{16,32}-2.json: 32 buckets picked in ${of32}, ` +
      `16 in ${races - of32}; median reps 16 buckets ${r16}, 32 buckets ${r32}`,
  );
}
