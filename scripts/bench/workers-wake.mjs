// How fast a host stage's worker starts a task once the JS thread raises its flag (the hand-over of a chunk whose
// event completed), on the CPU alone. Usage: node scripts/bench/workers-wake.mjs [DIST] [WORKERS] [ROUNDS]. Each round
// submits one task per worker waiting on its flag, lets them fall asleep, then raises the flags 0.1 ms apart and
// records each task's start minus its raise; prints the median, p90 and max over the rounds, per worker and in all.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [distArg, workersArg, roundsArg] = process.argv.slice(2);
const dist = resolve(distArg ?? join(import.meta.dirname, '..', '..', 'dist'));
const { WorkerPool } = await import(pathToFileURL(join(dist, 'src', 'workers', 'pool.js')).href);
const workers = Number(workersArg ?? 8);
const rounds = Number(roundsArg ?? 200);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const spin = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * (xs.length - 1)))];

const pool = await WorkerPool.open({ workers, functions: { cost: { kind: 'cost', msPerMiB: 0 } }, flags: workers });
const late = Array.from({ length: workers }, () => []);
try {
  for (let round = 0; round < rounds; round++) {
    const generation = pool.nextGeneration();
    const tasks = Array.from({ length: workers }, (_, flag) =>
      pool.submit({ fn: 'cost', chunk: flag, regions: [], waitFor: { kind: 'flag', flag, generation } }),
    );
    await sleep(2);
    const raisedAt = [];
    for (let flag = 0; flag < workers; flag++) {
      raisedAt.push(performance.now());
      pool.raise(flag, generation);
      spin(0.1);
    }
    const done = await Promise.all(tasks);
    done.forEach(({ timing }, flag) => late[timing.worker].push(timing.startedMs - raisedAt[flag]));
  }
} finally {
  await pool.close();
}
const all = late.flat();
const fmt = (xs) =>
  `median ${(1000 * q(xs, 0.5)).toFixed(0)} µs, p90 ${(1000 * q(xs, 0.9)).toFixed(0)} µs, max ${(1000 * Math.max(...xs)).toFixed(0)} µs`;
late.forEach((xs, w) => console.log(`worker ${w}: ${fmt(xs)}`));
console.log(`all ${workers} workers, ${rounds} rounds: task start after its flag was raised: ${fmt(all)}`);
