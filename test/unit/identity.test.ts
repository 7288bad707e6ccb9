import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { launcherDevice, runIdentity } from '../../src/api/identity.js';
import { expandTarget } from '../../src/cli/write-file.js';

describe('run identity', () => {
  it('reads the rank, local rank, size and job from OpenMPI', () => {
    assert.deepEqual(
      runIdentity(
        {
          OMPI_COMM_WORLD_RANK: '3',
          OMPI_COMM_WORLD_LOCAL_RANK: '1',
          OMPI_COMM_WORLD_SIZE: '4',
          OMPI_MCA_ess_base_jobid: '1234',
        },
        'n1',
      ),
      {
        hostname: 'n1',
        rank: 3,
        localRank: 1,
        size: 4,
        jobId: '1234',
        launcher: 'OpenMPI',
      },
    );
  });

  it("reads Slurm's task variables", () => {
    assert.deepEqual(
      runIdentity({ SLURM_PROCID: '5', SLURM_LOCALID: '1', SLURM_NTASKS: '8', SLURM_JOB_ID: '77' }, 'n2'),
      {
        hostname: 'n2',
        rank: 5,
        localRank: 1,
        size: 8,
        jobId: '77',
        launcher: 'Slurm',
      },
    );
  });

  it("reads MPICH's PMI variables, with the Slurm job when both are there", () => {
    assert.deepEqual(runIdentity({ PMI_RANK: '0', PMI_SIZE: '2', MPI_LOCALRANKID: '0', SLURM_JOB_ID: '9' }, 'n3'), {
      hostname: 'n3',
      rank: 0,
      localRank: 0,
      size: 2,
      jobId: '9',
      launcher: 'MPICH/PMI',
    });
  });

  it("reads torchrun's RANK, LOCAL_RANK and WORLD_SIZE, with its run id as the job", () => {
    assert.deepEqual(
      runIdentity(
        { RANK: '3', LOCAL_RANK: '1', WORLD_SIZE: '4', LOCAL_WORLD_SIZE: '2', TORCHELASTIC_RUN_ID: 'abc' },
        'n4',
      ),
      {
        hostname: 'n4',
        rank: 3,
        localRank: 1,
        size: 4,
        jobId: 'abc',
        launcher: 'torchrun',
      },
    );
  });

  it("reads MVAPICH's local rank, and prefers a launcher's own variables to torchrun's generic RANK", () => {
    assert.deepEqual(
      runIdentity(
        { MV2_COMM_WORLD_RANK: '2', MV2_COMM_WORLD_LOCAL_RANK: '0', MV2_COMM_WORLD_SIZE: '4', RANK: '9' },
        'n5',
      ),
      {
        hostname: 'n5',
        rank: 2,
        localRank: 0,
        size: 4,
        jobId: null,
        launcher: 'MVAPICH',
      },
    );
  });

  it('has no rank outside a launcher, and ignores values that are not numbers', () => {
    assert.deepEqual(runIdentity({ PMI_RANK: 'x' }, 'h'), {
      hostname: 'h',
      rank: null,
      localRank: null,
      size: null,
      jobId: null,
      launcher: null,
    });
  });

  const slurmRank1 = runIdentity({ SLURM_PROCID: '3', SLURM_LOCALID: '1', SLURM_NTASKS: '4' }, 'n1');

  it("puts a launcher's rank on the device of its local rank, over the config's device, and names that in a note", () => {
    const chosen = launcherDevice(slurmRank1, {}, undefined, 0);
    assert.equal(chosen?.device, 1);
    assert.equal(
      chosen?.note,
      "The launcher chose the device: Slurm local rank 1 chose device 1 (the config's device 0 gives way to it); --device overrides it.",
    );
  });

  it('lets --device win over the launcher, and leaves a process no launcher started alone', () => {
    assert.equal(launcherDevice(slurmRank1, {}, 0, 0), null);
    assert.equal(launcherDevice(runIdentity({}, 'h'), {}, undefined, 2), null);
  });

  it('takes device 0 when CUDA_VISIBLE_DEVICES shows the rank a single GPU', () => {
    assert.equal(launcherDevice(slurmRank1, { CUDA_VISIBLE_DEVICES: '5' }, undefined, 0)?.device, 0);
    assert.equal(launcherDevice(slurmRank1, { CUDA_VISIBLE_DEVICES: '0,1,2,3' }, undefined, 0)?.device, 1);
  });

  it('expands %r to the rank (0 without a launcher), %h to the host and %% to a %, and refuses other placeholders', () => {
    assert.equal(expandTarget('out/%h-%r-100%%.json', slurmRank1), 'out/n1-3-100%.json');
    assert.equal(expandTarget('out/%r.json', runIdentity({}, 'h')), 'out/0.json');
    assert.throws(() => expandTarget('out/%x.json', slurmRank1), /"%x" is no placeholder/);
    assert.throws(() => expandTarget('out/50%', slurmRank1), /a % ends the name/);
  });
});
