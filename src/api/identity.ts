import type { RunIdentity } from '../result/schema.js';

/** Which launcher started this process, read from the variables each one sets for its ranks. */
// torchrun's names are the most generic (RANK), so it is asked last: a launcher's own variables win.
const LAUNCHERS: ReadonlyArray<{ name: string; rank: string; localRank: string; size: string; job: string | null }> = [
  { name: 'OpenMPI', rank: 'OMPI_COMM_WORLD_RANK', localRank: 'OMPI_COMM_WORLD_LOCAL_RANK', size: 'OMPI_COMM_WORLD_SIZE', job: 'OMPI_MCA_ess_base_jobid' },
  { name: 'Slurm', rank: 'SLURM_PROCID', localRank: 'SLURM_LOCALID', size: 'SLURM_NTASKS', job: 'SLURM_JOB_ID' },
  { name: 'MVAPICH', rank: 'MV2_COMM_WORLD_RANK', localRank: 'MV2_COMM_WORLD_LOCAL_RANK', size: 'MV2_COMM_WORLD_SIZE', job: null },
  { name: 'MPICH/PMI', rank: 'PMI_RANK', localRank: 'MPI_LOCALRANKID', size: 'PMI_SIZE', job: null },
  { name: 'torchrun', rank: 'RANK', localRank: 'LOCAL_RANK', size: 'WORLD_SIZE', job: 'TORCHELASTIC_RUN_ID' },
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
      hostname,
      rank,
      localRank: integer(env[launcher.localRank]),
      size: integer(env[launcher.size]),
      jobId: (launcher.job ? env[launcher.job] : undefined) ?? env.SLURM_JOB_ID ?? null,
      launcher: launcher.name,
    };
  }
  return { hostname, rank: null, localRank: null, size: null, jobId: env.SLURM_JOB_ID ?? null, launcher: null };
}

/** The device a launcher's rank runs on, and the note the Result carries about it. */
export interface LauncherDevice {
  readonly device: number;
  readonly note: string;
}

/**
 * One rank per GPU: a rank started by a launcher takes the device of its local rank, unless `--device` named one
 * (`flagDevice`). The launcher beats the config's `device`, because one config file is shared by every rank and a
 * single index in it would put them all on one GPU. When CUDA_VISIBLE_DEVICES shows the rank a single GPU (Slurm's
 * --gpus-per-task, or a wrapper script), that GPU is device 0 for it. Null when no launcher started the process.
 */
export function launcherDevice(identity: RunIdentity, env: NodeJS.ProcessEnv, flagDevice: number | undefined, configDevice: number): LauncherDevice | null {
  if (flagDevice !== undefined || identity.localRank === null) return null;
  const visible = env.CUDA_VISIBLE_DEVICES?.split(',').filter((d) => d.trim() !== '') ?? null;
  const single = visible !== null && visible.length === 1;
  const device = single ? 0 : identity.localRank;
  const why = single
    ? `${identity.launcher} local rank ${identity.localRank} sees one GPU (CUDA_VISIBLE_DEVICES=${env.CUDA_VISIBLE_DEVICES}): device 0`
    : `${identity.launcher} local rank ${identity.localRank} chose device ${device}`;
  const ignored = configDevice !== device ? ` (the config's device ${configDevice} gives way to it)` : '';
  return { device, note: `The launcher chose the device: ${why}${ignored}; --device overrides it.` };
}

/** "rank 1 of 4", for headers; null outside a launcher. */
export function rankLabel(identity: RunIdentity): string | null {
  if (identity.rank === null) return null;
  return `rank ${identity.rank}${identity.size === null ? '' : ` of ${identity.size}`}`;
}
