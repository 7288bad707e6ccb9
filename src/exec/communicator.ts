import { tmpdir } from 'node:os';
import { GRAPH_CAPTURE_MIN, type Nccl, type NcclComm, nvlsOff, UNIQUE_ID_BYTES, versionText } from '../cuda/nccl.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import { UsageError } from '../errors.js';
import type { Plan } from '../plan/types.js';
import type { CommunicatorRecord, RunIdentity } from '../result/schema.js';
import type { Cleanup } from './cleanup.js';
import { awaitUniqueId, publishUniqueId, uniqueIdPath, withdrawUniqueId } from './nccl-id.js';

// The NCCL communicators of a run with collective stages. One process drives the run's devices with
// ncclCommInitAll, one communicator per device (one device: a one-rank communicator, the same code path as several:
// the planner replicates every mode with a collective on each device, plan/data-parallel.ts); under a launcher (mpirun,
// srun: one process per GPU) each rank joins the launch's communicator with ncclCommInitRank, the unique id shared
// through a file (nccl-id.ts). Communicators are destroyed with the run's cleanup, on every path.

/** How a run's ranks find each other, from the launcher's environment and the flags. */
export interface CommunicatorOptions {
  readonly identity: Pick<RunIdentity, 'rank' | 'size' | 'jobId'>;
  /** A folder every rank can read (`--nccl-dir`); default: the OS's temporary folder. */
  readonly dir?: string | undefined;
  /** How long a rank waits for rank 0's unique id, ms. */
  readonly timeoutMs?: number | undefined;
}

/** A device's communicator, its rank and the communicator's size. */
export interface DeviceComm {
  readonly comm: NcclComm;
  readonly rank: number;
  readonly ranks: number;
}

export interface Communicators {
  readonly nccl: Nccl;
  readonly byDevice: ReadonlyMap<number, DeviceComm>;
  readonly record: CommunicatorRecord;
  /** What the Result's notes say about it (NVLS, how the ranks met). */
  readonly notes: readonly string[];
}

const DEFAULT_ID_TIMEOUT_MS = 60_000;

/** Whether any schedule of the plan runs a collective. */
export const hasCollectives = (plan: Pick<Plan, 'schedules'>): boolean => plan.schedules.some((s) => s.body.some((op) => op.kind === 'collective'));

/**
 * The plan's devices joined in communicators: NVLS off first (NCCL reads its environment at its first call), the
 * version checked against graph capture, then one communicator per device (all of them in this process), or this
 * rank's of a launch.
 */
export async function openCommunicators(
  nccl: Nccl,
  rt: CudaRuntime,
  plan: Pick<Plan, 'devices' | 'schedules' | 'device'>,
  options: CommunicatorOptions,
  cleanup: Cleanup,
): Promise<Communicators> {
  const nvls = nvlsOff();
  const code = nccl.version();
  const version = versionText(code);
  const graphed = plan.schedules.find((s) => s.issue === 'graph' && s.body.some((op) => op.kind === 'collective'));
  if (graphed && code < GRAPH_CAPTURE_MIN) {
    throw new UsageError(`NCCL ${version} (${nccl.libraryPath}) cannot be captured into a CUDA graph, which ${graphed.description} needs: NCCL captures collectives from 2.9 on.`, {
      hint: 'Use pipeline.mode: stream, or point CUDA_PIPE_NCCL at NCCL 2.9 or newer.',
    });
  }
  // A ring's slot is refilled once its chunk's last op on the chunk's stream finished; a collective moved to the
  // communication stream may still be reading it then.
  if (plan.device.ring) {
    throw new UsageError(`Collective stages read their bucket on the communication stream, which a ring of ${plan.device.ring.slots} device slots does not wait for.`, {
      hint: 'Leave deviceMemory out of a config with a collective stage.',
    });
  }
  const { identity } = options;
  const launched = identity.rank !== null && identity.size !== null && identity.size > 1;
  // Under a launcher each process is one rank on one GPU; several GPUs in one process of a launch would be several
  // ranks of it, which the unique id's one rank per process does not give.
  if (launched && plan.devices.length > 1) {
    throw new UsageError(
      `This process is rank ${identity.rank} of ${identity.size} under a launcher, and its plan spans devices ${plan.devices.join(', ')}: a launched rank drives one GPU.`,
      {
        hint: 'Leave devices: out under mpirun or srun (each rank takes the GPU of its local rank), or run one process without a launcher: cuda-pipe run ddp.yaml --devices all.',
      },
    );
  }
  const byDevice = new Map<number, DeviceComm>();
  const notes = [nvls.note];
  const primary = plan.devices[0] ?? 0;
  if (launched) {
    const rank = identity.rank as number;
    const ranks = identity.size as number;
    const path = uniqueIdPath(options.dir ?? tmpdir(), identity.jobId, process.env);
    let id: Uint8Array;
    if (rank === 0) {
      id = nccl.uniqueId();
      publishUniqueId(path, id);
    } else {
      id = await awaitUniqueId(path, UNIQUE_ID_BYTES, { timeoutMs: options.timeoutMs ?? DEFAULT_ID_TIMEOUT_MS, rank });
    }
    rt.setDevice(primary);
    const comm = nccl.initRank(ranks, id, rank);
    cleanup.push(() => nccl.release(comm, `rank ${rank} of ${ranks}, device ${primary}`));
    // ncclCommInitRank returns once every rank joined: each has read the id.
    if (rank === 0) withdrawUniqueId(path);
    byDevice.set(primary, { comm, rank, ranks });
    notes.push(`NCCL ${version}: rank ${rank} of ${ranks} on device ${primary}, the unique id shared through ${path}.`);
  } else {
    const comms = nccl.initAll(plan.devices);
    plan.devices.forEach((device, rank) => {
      const comm = comms[rank] as NcclComm;
      cleanup.push(() => nccl.release(comm, `device ${device}, rank ${rank} of ${plan.devices.length}`));
      byDevice.set(device, { comm, rank, ranks: plan.devices.length });
    });
    rt.setDevice(primary);
    notes.push(
      `NCCL ${version}: one process drives device${plan.devices.length === 1 ? '' : 's'} ${plan.devices.join(', ')} (ncclCommInitAll, ${plan.devices.length} rank${plan.devices.length === 1 ? '' : 's'}).`,
    );
  }
  const ranks = [...byDevice.values()][0]?.ranks ?? 1;
  const on = process.env.NCCL_NVLS_ENABLE !== undefined && process.env.NCCL_NVLS_ENABLE !== '0';
  return { nccl, byDevice, record: { library: 'nccl', version, ranks, localDevices: [...plan.devices], nvls: on ? 'on' : 'off' }, notes };
}
