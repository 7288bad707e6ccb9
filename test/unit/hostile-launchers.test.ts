import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { launcherDevice, runIdentity } from '../../src/api/identity.js';
import type { CudaRuntime } from '../../src/cuda/runtime.js';
import { UsageError } from '../../src/errors.js';
import { openDevice } from '../../src/exec/open.js';
import { runCli } from '../helpers/cli.js';

// A launcher's variables choose this rank's device, name its files (%r) and count the ranks of a collective; a value
// that is not a whole number, or that JavaScript would round, must be refused under its own name, never read as a
// flag the user did not type.

const HUGE = '99999999999999999999';

/** Each launcher with its rank, local rank and size variables, as LAUNCHERS in src/api/identity.ts reads them. */
const LAUNCHER_VARIABLES = [
  {
    name: 'OpenMPI',
    rank: 'OMPI_COMM_WORLD_RANK',
    localRank: 'OMPI_COMM_WORLD_LOCAL_RANK',
    size: 'OMPI_COMM_WORLD_SIZE',
  },
  { name: 'Slurm', rank: 'SLURM_PROCID', localRank: 'SLURM_LOCALID', size: 'SLURM_NTASKS' },
  { name: 'MVAPICH', rank: 'MV2_COMM_WORLD_RANK', localRank: 'MV2_COMM_WORLD_LOCAL_RANK', size: 'MV2_COMM_WORLD_SIZE' },
  { name: 'MPICH/PMI', rank: 'PMI_RANK', localRank: 'MPI_LOCALRANKID', size: 'PMI_SIZE' },
  { name: 'torchrun', rank: 'RANK', localRank: 'LOCAL_RANK', size: 'WORLD_SIZE' },
] as const;

function refusal(read: () => unknown): UsageError {
  try {
    read();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a usage error, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the launcher variable to be refused');
}

describe("a launcher's variables that are not whole numbers", () => {
  for (const launcher of LAUNCHER_VARIABLES) {
    it(`${launcher.name}: a local rank past 2^53 is refused naming ${launcher.localRank} and its digits as written`, () => {
      const error = refusal(() => runIdentity({ [launcher.rank]: '0', [launcher.localRank]: HUGE }, 'h'));
      assert.equal(
        error.message,
        `${launcher.localRank}=${HUGE}: ${launcher.name} sets ${launcher.localRank} to this process's rank on its host (its local rank), which must be a whole number from 0 to 9007199254740991.`,
      );
      assert.doesNotMatch(error.message, /--device|1e\+20|100000000000000000000/);
    });

    it(`${launcher.name}: a local rank that is negative, fractional or a word is refused naming ${launcher.localRank}`, () => {
      for (const value of ['-1', '1.5', 'abc', ' 1', '0x1']) {
        const error = refusal(() => runIdentity({ [launcher.rank]: '0', [launcher.localRank]: value }, 'h'));
        assert.ok(
          error.message.startsWith(`${launcher.localRank}=${value === ' 1' ? '" 1"' : value}: ${launcher.name} sets`),
          error.message,
        );
      }
    });

    it(`${launcher.name}: a rank or size past 2^53, or a rank not below the size, is refused naming the variable`, () => {
      assert.match(
        refusal(() => runIdentity({ [launcher.rank]: HUGE }, 'h')).message,
        new RegExp(`^${launcher.rank}=${HUGE}: .*'s rank, which must be a whole number`),
      );
      assert.match(
        refusal(() => runIdentity({ [launcher.rank]: '0', [launcher.size]: HUGE }, 'h')).message,
        new RegExp(`^${launcher.size}=${HUGE}: `),
      );
      assert.equal(
        refusal(() => runIdentity({ [launcher.rank]: '4', [launcher.size]: '4' }, 'h')).message,
        `${launcher.rank}=4 is not below ${launcher.size}=4: ${launcher.name}'s ranks count from 0 to the number of ranks less one.`,
      );
    });
  }

  it('leaves an unrelated RANK that is no number alone, as before: no launcher started the process', () => {
    assert.equal(runIdentity({ RANK: 'primary', LOCAL_RANK: 'x' }, 'h').launcher, null);
  });

  it('shows a value with control characters escaped and a long one cut, never raw', () => {
    const message = refusal(() => runIdentity({ PMI_RANK: '0', MPI_LOCALRANKID: '1\u001b[2J' }, 'h')).message;
    assert.ok(message.startsWith('MPI_LOCALRANKID="1\\u001b[2J": '), message);
    const long = refusal(() => runIdentity({ PMI_RANK: '0', MPI_LOCALRANKID: '9'.repeat(1000) }, 'h')).message;
    assert.ok(long.startsWith(`MPI_LOCALRANKID="${'9'.repeat(64)}…": `), long.slice(0, 120));
  });

  it('`run --dry-run` under MPICH with MPI_LOCALRANKID=99999999999999999999 is exit 2 naming the variable, not --device', () => {
    const { code, stderr } = runCli(
      ['run', '--dry-run'],
      { PMI_RANK: '0', MPI_LOCALRANKID: HUGE },
      { timeoutMs: 20_000 },
    );
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^cuda-pipe: MPI_LOCALRANKID=99999999999999999999: MPICH\/PMI sets MPI_LOCALRANKID/);
    assert.doesNotMatch(stderr, /--device 1/);
  });
});

describe('a local rank beyond the devices of this machine', () => {
  const twoDevices = { deviceCount: () => 2 } as unknown as CudaRuntime;
  const rank7 = runIdentity({ PMI_RANK: '7', MPI_LOCALRANKID: '7', PMI_SIZE: '8' }, 'h');

  it('is a usage error naming the variable that chose the device, not a CUDA error or a flag', () => {
    const chosen = launcherDevice(rank7, {}, undefined, 0);
    assert.equal(chosen?.origin, "MPICH/PMI's local rank chose it (MPI_LOCALRANKID=7)");
    const error = refusal(() => openDevice(twoDevices, 7, chosen?.origin));
    assert.equal(
      error.message,
      "Device 7 does not exist: this machine has 2 CUDA devices (0 to 1), and MPICH/PMI's local rank chose it (MPI_LOCALRANKID=7).",
    );
    assert.equal(
      error.hint,
      'Start at most 2 ranks on this host, show each rank its own GPU through CUDA_VISIBLE_DEVICES, or pick one with --device.',
    );
  });

  it('a device the user named keeps the message about --device', () => {
    assert.equal(
      refusal(() => openDevice(twoDevices, 7)).message,
      'Device 7 does not exist: this machine has 2 CUDA devices (0 to 1).',
    );
  });
});
