// How the host stage's worker pool scales with its workers, on the CPU alone (issue 18's target: where the CPU
// stage limits, 8 workers give at least 6× one). Usage: node scripts/bench/workers-scaling.mjs [DIST] [WORKERS...]
// DIST is a compiled dist/ folder (default: this checkout's; the bundle's is /tmp/cuda-pipe/dist), WORKERS the
// pool sizes to try (default 1 2 4 8 and the default size). Prints, per pool size, the best of three rounds of:
//   cost   128 tasks of 1 MiB at 2 ms/MiB (256 ms of CPU work at one worker): wall ms, speedup against 1 worker;
//   decode 256 MiB of float32 random pattern in 4 MiB chunks (the loader's fill, no added cost, its pattern computed
//          once as a run does): GB/s.
// Native memory is malloc'd (pageable): the workers see it by address exactly as they would see pinned memory.
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [distArg, ...sizeArgs] = process.argv.slice(2);
const dist = resolve(distArg ?? join(import.meta.dirname, '..', '..', 'dist'));
const load = (path) => import(pathToFileURL(join(dist, 'src', path)).href);
const { WorkerPool, defaultWorkers } = await load('kinds/host/workers/pool.js');
const { allocPageable, freePageable } = await load('cuda/host.js');
const { precomputeDecode } = await load('kinds/host/workers/functions.js');

const MiB = 2 ** 20;
const sizes =
  sizeArgs.length > 0 ? sizeArgs.map(Number) : [...new Set([1, 2, 4, 8, defaultWorkers()])].sort((a, b) => a - b);
const decodeBytes = 256 * MiB;
const decodeChunk = 4 * MiB;
const memory = allocPageable(decodeBytes);

async function best(run) {
  let fastest = Infinity;
  for (let round = 0; round < 3; round++) fastest = Math.min(fastest, await run());
  return fastest;
}

async function timeAll(pool, tasks) {
  const start = performance.now();
  await Promise.all(tasks.map((task) => pool.submit(task)));
  return performance.now() - start;
}

process.stdout.write(`cores ${availableParallelism()}, default pool ${defaultWorkers()} workers\n`);
process.stdout.write('workers  cost ms  speedup  busy/wall  decode GB/s\n');
let oneWorkerMs = null;
try {
  for (const workers of sizes) {
    const pool = await WorkerPool.open({
      workers,
      queueLimit: 1024,
      functions: {
        cost: { kind: 'cost', msPerMiB: 2 },
        decode: precomputeDecode(
          { kind: 'decode', msPerMiB: 0, buffers: { input: { type: 'float32', init: { kind: 'random', seed: 1 } } } },
          { input: decodeBytes },
        ),
      },
    });
    try {
      const costTasks = Array.from({ length: 128 }, (_, chunk) => ({
        fn: 'cost',
        chunk,
        regions: [{ address: memory, bytes: MiB, buffer: 'input', offset: 0 }],
      }));
      const busyBefore = pool.busyMs().reduce((a, b) => a + b, 0);
      const costMs = await best(() => timeAll(pool, costTasks));
      const busyPerRound = (pool.busyMs().reduce((a, b) => a + b, 0) - busyBefore) / 3;
      oneWorkerMs ??= costMs;
      const decodeTasks = Array.from({ length: decodeBytes / decodeChunk }, (_, chunk) => ({
        fn: 'decode',
        chunk,
        regions: [
          {
            address: memory + BigInt(chunk * decodeChunk),
            bytes: decodeChunk,
            buffer: 'input',
            offset: chunk * decodeChunk,
          },
        ],
      }));
      const decodeMs = await best(() => timeAll(pool, decodeTasks));
      process.stdout.write(
        `${String(workers).padStart(7)}  ${costMs.toFixed(1).padStart(7)}  ${(oneWorkerMs / costMs).toFixed(2).padStart(7)}  ${(busyPerRound / costMs).toFixed(2).padStart(9)}  ${(decodeBytes / decodeMs / 1e6).toFixed(2).padStart(11)}\n`,
      );
    } finally {
      await pool.close();
    }
  }
} finally {
  freePageable(memory);
}
