import type { RunIdentity } from '../result/schema.js';

/** Which launcher started this process, read from the variables each one sets for its ranks. */
const LAUNCHERS: ReadonlyArray<{ name: string; rank: string; localRank: string; size: string; job: string | null }> = [
  { name: 'OpenMPI', rank: 'OMPI_COMM_WORLD_RANK', localRank: 'OMPI_COMM_WORLD_LOCAL_RANK', size: 'OMPI_COMM_WORLD_SIZE', job: 'OMPI_MCA_ess_base_jobid' },
  { name: 'Slurm', rank: 'SLURM_PROCID', localRank: 'SLURM_LOCALID', size: 'SLURM_NTASKS', job: 'SLURM_JOB_ID' },
  { name: 'MPICH/PMI', rank: 'PMI_RANK', localRank: 'MPI_LOCALRANKID', size: 'PMI_SIZE', job: null },
];

const integer = (text: string | undefined): number | null => {
  if (text === undefined || !/^\d+$/.test(text)) return null;
  return Number(text);
};

/** Host, rank and job of this run; the rank fields are null when no launcher started it. */
export function runIdentity(env: NodeJS.ProcessEnv, hostname: string): RunIdentity {
  for (const launcher of LAUNCHERS) {
    const rank = integer(env[launcher.rank]);
    if (rank === null) continue;
    return {
      hostname, rank, localRank: integer(env[launcher.localRank]), size: integer(env[launcher.size]),
      jobId: (launcher.job ? env[launcher.job] : undefined) ?? env.SLURM_JOB_ID ?? null, launcher: launcher.name,
    };
  }
  return { hostname, rank: null, localRank: null, size: null, jobId: env.SLURM_JOB_ID ?? null, launcher: null };
}
