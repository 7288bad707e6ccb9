import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { cliEntry } from '../helpers/cli.js';
import { type SlurmCluster, slurmSkipReason, startSlurm } from '../helpers/slurm.js';

// A real one-node Slurm (munged, slurmctld, slurmd started here) runs cuda-pipe as two tasks, as `srun` on a GPU
// node would; this machine has no GPU, so the real run must fail in each rank with the clear "no driver" error.

let cluster: SlurmCluster | null = null;
let skip: string | null = slurmSkipReason();

before(async () => {
  if (skip) return;
  try {
    cluster = await startSlurm();
  } catch (error) {
    skip = `the Slurm daemons did not start: ${(error as Error).message}`;
  }
});
after(async () => cluster?.stop());

/** srun -l prefixes each line with its task's rank ("1: …"); -I5 gives up when the node has no room within 5 s. */
function srun(args: readonly string[]) {
  const c = cluster as SlurmCluster;
  const out = spawnSync('srun', ['-l', '-I5', '-t', '1', '-n', '2', process.execPath, ...cliEntry(), ...args], {
    env: { ...c.env, NO_COLOR: '1', CUDA_PIPE_CACHE_DIR: join(c.dir, 'cache') },
    cwd: packageRoot(),
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('under srun -n 2 on a one-node Slurm', () => {
  it('runs the dry run once per rank, each on the device of its local rank', (t) => {
    if (skip) return t.skip(skip);
    const { code, stdout, stderr } = srun(['run', '--dry-run']);
    assert.equal(code, 0, stderr);
    const headers = stdout
      .split('\n')
      .filter((l) => l.includes('Plan for'))
      .sort();
    assert.deepEqual(
      headers.map((l) => l.replace(/: \d+ elements.*/, '')),
      ['0: Plan for balanced on device 0 (rank 0 of 2)', '1: Plan for balanced on device 1 (rank 1 of 2)'],
    );
  });

  it('fails the real run in both ranks with "No CUDA driver" and exit 3, writing no result', (t) => {
    if (skip) return t.skip(skip);
    const results = join((cluster as SlurmCluster).dir, 'results');
    mkdirSync(results);
    const { code, stderr } = srun(['run', '--json', join(results, '%r.json')]);
    assert.equal(code, 3, stderr);
    const failed = stderr
      .split('\n')
      .filter((l) => /^\s*\d+: cuda-pipe: No CUDA driver/.test(l))
      .map((l) => l.trim()[0])
      .sort();
    assert.deepEqual(failed, ['0', '1']);
    // srun sums up the tasks' exits on one line ("tasks 0-1") or on one line per task, as they happen to end.
    const exits =
      /tasks 0-1: Exited with exit code 3/.test(stderr) ||
      [0, 1].every((r) => new RegExp(`task ${r}: Exited with exit code 3`).test(stderr));
    assert.ok(exits, stderr);
    assert.equal(existsSync(join(results, '0.json')) || existsSync(join(results, '1.json')), false);
  });
});
