import { UsageError } from '../errors.js';
import { escapeControl } from '../format.js';
import type { RunIdentity } from '../result/environment.js';

/** Which launcher started this process, read from the variables each one sets for its ranks. */
// torchrun's names are the most generic (RANK), so it is asked last: a launcher's own variables win.
const LAUNCHERS: ReadonlyArray<{ name: string; rank: string; localRank: string; size: string; job: string | null }> = [
  {
    name: 'OpenMPI',
    rank: 'OMPI_COMM_WORLD_RANK',
    localRank: 'OMPI_COMM_WORLD_LOCAL_RANK',
    size: 'OMPI_COMM_WORLD_SIZE',
    job: 'OMPI_MCA_ess_base_jobid',
  },
  { name: 'Slurm', rank: 'SLURM_PROCID', localRank: 'SLURM_LOCALID', size: 'SLURM_NTASKS', job: 'SLURM_JOB_ID' },
  {
    name: 'MVAPICH',
    rank: 'MV2_COMM_WORLD_RANK',
    localRank: 'MV2_COMM_WORLD_LOCAL_RANK',
    size: 'MV2_COMM_WORLD_SIZE',
    job: null,
  },
  { name: 'MPICH/PMI', rank: 'PMI_RANK', localRank: 'MPI_LOCALRANKID', size: 'PMI_SIZE', job: null },
  { name: 'torchrun', rank: 'RANK', localRank: 'LOCAL_RANK', size: 'WORLD_SIZE', job: 'TORCHELASTIC_RUN_ID' },
];

/**
 * A launcher's number, read exactly: null when unset, and refused (naming the variable and its value as written) when
 * it is not a whole number JavaScript holds exactly. Number('99999999999999999999') is 1e20, which later read as
 * `--device 100000000000000000000`, a flag nobody typed; a wrong rank or size would name the wrong file or rank count.
 */
function launcherNumber(env: NodeJS.ProcessEnv, variable: string, what: string, launcher: string): number | null {
  const text = env[variable];
  if (text === undefined || text === '') return null;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(value)) return value;
  throw new UsageError(
    `${variable}=${shown(text)}: ${launcher} sets ${variable} to this process's ${what}, which must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}.`,
    {
      hint: `Start cuda-pipe through the launcher as it is, or unset ${variable} if no launcher started this process.`,
    },
  );
}

/**
 * A variable's value as the user wrote it (never a rounded number), quoted when it holds spaces or control characters,
 * cut when long.
 */
function shown(text: string): string {
  const cut = text.length > 64 ? `${text.slice(0, 64)}…` : text;
  return /^[\x21-\x7e]*$/.test(cut) ? cut : escapeControl(JSON.stringify(cut));
}

/**
 * Host, rank and job of this run; the rank fields are null when no launcher started it. A launcher is recognised by
 * its rank variable holding digits (so that an unrelated `RANK=x` is left alone); once recognised, its rank, local
 * rank and size must be whole numbers that agree, or the run is refused naming the variable.
 */
export function runIdentity(env: NodeJS.ProcessEnv, hostname: string): RunIdentity {
  for (const launcher of LAUNCHERS) {
    if (!/^\d+$/.test(env[launcher.rank] ?? '')) continue;
    const rank = launcherNumber(env, launcher.rank, 'rank', launcher.name) as number;
    const localRank = launcherNumber(env, launcher.localRank, 'rank on its host (its local rank)', launcher.name);
    const size = launcherNumber(env, launcher.size, 'number of ranks', launcher.name);
    for (const [variable, value] of [
      [launcher.rank, rank],
      [launcher.localRank, localRank],
    ] as const) {
      if (size !== null && value !== null && value >= size) {
        throw new UsageError(
          `${variable}=${value} is not below ${launcher.size}=${size}: ${launcher.name}'s ranks count from 0 to the number of ranks less one.`,
          {
            hint: `Start cuda-pipe through the launcher as it is, or unset ${launcher.rank} if no launcher started this process.`,
          },
        );
      }
    }
    return {
      hostname,
      rank,
      localRank,
      size,
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
  /** Who chose the device, for a message about it: the variable, never a flag the user did not type. */
  readonly origin: string;
}

/**
 * One rank per GPU: a rank started by a launcher takes the device of its local rank, unless `--device` named one
 * (`flagDevice`). The launcher beats the config's `device`, because one config file is shared by every rank and a
 * single index in it would put them all on one GPU. When CUDA_VISIBLE_DEVICES shows the rank a single GPU (Slurm's
 * --gpus-per-task, or a wrapper script), that GPU is device 0 for it. Null when no launcher started the process.
 */
export function launcherDevice(
  identity: RunIdentity,
  env: NodeJS.ProcessEnv,
  flagDevice: number | undefined,
  configDevice: number,
): LauncherDevice | null {
  if (flagDevice !== undefined || identity.localRank === null) return null;
  const visible = env.CUDA_VISIBLE_DEVICES?.split(',').filter((d) => d.trim() !== '') ?? null;
  const single = visible !== null && visible.length === 1;
  const device = single ? 0 : identity.localRank;
  const why = single
    ? `${identity.launcher} local rank ${identity.localRank} sees one GPU (CUDA_VISIBLE_DEVICES=${env.CUDA_VISIBLE_DEVICES}): device 0`
    : `${identity.launcher} local rank ${identity.localRank} chose device ${device}`;
  const ignored = configDevice !== device ? ` (the config's device ${configDevice} gives way to it)` : '';
  const variable = LAUNCHERS.find((l) => l.name === identity.launcher)?.localRank ?? 'its local rank';
  const origin = single
    ? `CUDA_VISIBLE_DEVICES=${shown(env.CUDA_VISIBLE_DEVICES ?? '')}, which shows ${identity.launcher}'s rank one GPU, chose it`
    : `${identity.launcher}'s local rank chose it (${variable}=${identity.localRank})`;
  return { device, note: `The launcher chose the device: ${why}${ignored}; --device overrides it.`, origin };
}

/** "rank 1 of 4", for headers; null outside a launcher. */
export function rankLabel(identity: RunIdentity): string | null {
  if (identity.rank === null) return null;
  return `rank ${identity.rank}${identity.size === null ? '' : ` of ${identity.size}`}`;
}
