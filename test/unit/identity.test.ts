import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runIdentity } from '../../src/api/identity.js';

describe('run identity', () => {
  it('reads the rank, local rank, size and job from OpenMPI', () => {
    assert.deepEqual(runIdentity({ OMPI_COMM_WORLD_RANK: '3', OMPI_COMM_WORLD_LOCAL_RANK: '1', OMPI_COMM_WORLD_SIZE: '4', OMPI_MCA_ess_base_jobid: '1234' }, 'n1'), {
      hostname: 'n1', rank: 3, localRank: 1, size: 4, jobId: '1234', launcher: 'OpenMPI',
    });
  });

  it("reads Slurm's task variables", () => {
    assert.deepEqual(runIdentity({ SLURM_PROCID: '5', SLURM_LOCALID: '1', SLURM_NTASKS: '8', SLURM_JOB_ID: '77' }, 'n2'), {
      hostname: 'n2', rank: 5, localRank: 1, size: 8, jobId: '77', launcher: 'Slurm',
    });
  });

  it("reads MPICH's PMI variables, with the Slurm job when both are there", () => {
    assert.deepEqual(runIdentity({ PMI_RANK: '0', PMI_SIZE: '2', MPI_LOCALRANKID: '0', SLURM_JOB_ID: '9' }, 'n3'), {
      hostname: 'n3', rank: 0, localRank: 0, size: 2, jobId: '9', launcher: 'MPICH/PMI',
    });
  });

  it('has no rank outside a launcher, and ignores values that are not numbers', () => {
    assert.deepEqual(runIdentity({ PMI_RANK: 'x' }, 'h'), { hostname: 'h', rank: null, localRank: null, size: null, jobId: null, launcher: null });
  });
});
