import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentError, Interrupted, UsageError } from '../../errors.js';
import type { KindFlag } from '../api/index.js';

// How the ranks of one launch (mpirun, srun: one process per GPU) agree on NCCL's unique id without a service of
// their own: rank 0 writes the 128 bytes into a file in a folder every rank can read, named by the launcher's job
// id, and the others wait for it. The write is a temp file renamed into place, so a reader sees all 128 bytes or no
// file. Rank 0 removes the file once its communicator is up (every rank has then read it).

/** The folder the id's file is written in: a flag of `run` and `sweep`, read when the communicators open. */
export const NCCL_DIR: KindFlag = {
  option: '--nccl-dir <folder>',
  description:
    "collective stages under mpirun or srun: a folder every rank can read, where rank 0 writes NCCL's unique id (default: the temporary folder)",
  key: 'ncclDir',
};

/**
 * The id's file for this launch: `--nccl-dir`/cuda-pipe-nccl-<job>[.<step>].id, the job being CUDA_PIPE_JOB_ID where
 * the user set it, else the launcher's job id, else PMIx's namespace (OpenMPI 5 sets no OMPI_MCA_ess_base_jobid).
 */
export function uniqueIdPath(dir: string, job: string | null, env: NodeJS.ProcessEnv): string {
  const id = env.CUDA_PIPE_JOB_ID ?? job ?? env.PMIX_NAMESPACE ?? null;
  if (id === null) {
    throw new UsageError(
      'The launcher gave no job id, which names the file through which the ranks share the NCCL unique id.',
      {
        hint: 'Set CUDA_PIPE_JOB_ID to the same value in every rank of this launch (for example `mpirun -x CUDA_PIPE_JOB_ID=$RANDOM …`).',
      },
    );
  }
  const step = env.SLURM_STEP_ID === undefined ? '' : `.${env.SLURM_STEP_ID}`;
  return join(dir, `cuda-pipe-nccl-${`${id}${step}`.replace(/[^\w.-]/g, '_')}.id`);
}

/** Rank 0: the id, written atomically. */
export function publishUniqueId(path: string, id: Uint8Array): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, id, { mode: 0o600 });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new EnvironmentError(`Rank 0 could not write the NCCL unique id to ${path}: ${(error as Error).message}.`, {
      hint: 'Give --nccl-dir a folder every rank can read and rank 0 can write (a shared file system across hosts).',
      cause: error,
    });
  }
}

/** Rank 0, once its communicator is up: the file is not needed any more. */
export function withdrawUniqueId(path: string): void {
  rmSync(path, { force: true });
}

export interface AwaitOptions {
  readonly timeoutMs: number;
  readonly pollMs?: number;
  readonly rank: number;
  /** Ctrl-C or SIGTERM: stop waiting (exit 130). */
  readonly signal?: AbortSignal | undefined;
}

/** Any other rank: the id once rank 0 wrote it, polled; a clear error after `timeoutMs`. */
export async function awaitUniqueId(path: string, bytes: number, options: AwaitOptions): Promise<Uint8Array> {
  const deadline = performance.now() + options.timeoutMs;
  const poll = options.pollMs ?? 50;
  for (;;) {
    const id = readId(path, bytes);
    if (id) return id;
    if (options.signal?.aborted)
      throw new Interrupted(
        `Interrupted (${String(options.signal.reason)}) while rank ${options.rank} waited for rank 0's NCCL unique id at ${path}.`,
      );
    if (performance.now() >= deadline) {
      throw new EnvironmentError(
        `Rank ${options.rank} waited ${(options.timeoutMs / 1000).toFixed(1)} s for rank 0 to write the NCCL unique id to ${path}, and it did not appear.`,
        {
          hint: 'Check that rank 0 started, and that it sees the same folder: --nccl-dir must be one every host of the launch shares.',
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, poll));
  }
}

function readId(path: string, bytes: number): Uint8Array | null {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    return null;
  }
  // Renamed into place whole: any other length is some other file under our name.
  if (data.length !== bytes)
    throw new EnvironmentError(
      `${path} holds ${data.length} bytes, not an NCCL unique id of ${bytes}: another program wrote it.`,
      {
        hint: 'Remove it, or give --nccl-dir another folder.',
      },
    );
  return new Uint8Array(data);
}
