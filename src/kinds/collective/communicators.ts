import { availableParallelism, tmpdir } from 'node:os';
import {
  connectAtInit,
  GRAPH_CAPTURE_MIN,
  NCCL_IN_PROGRESS,
  type Nccl,
  type NcclComm,
  type NcclError,
  nvlsOff,
  UNIQUE_ID_BYTES,
  versionText,
} from './nccl.js';
import { DeviceFailure, Interrupted, UsageError } from '../../errors.js';
import type { OpenContext, RepWatch } from '../api/index.js';
import { type CollectiveOp, communicatorCtas } from './spec.js';
import type { CommunicatorRecord } from './result.js';
import { awaitUniqueId, NCCL_DIR, publishUniqueId, uniqueIdPath, withdrawUniqueId } from './unique-id.js';

// The NCCL communicators of a run with collective stages. One process drives the run's devices with
// ncclCommInitAll, one communicator per device (one device: a one-rank communicator, the same code path as several:
// the planner replicates every mode with a collective on each device, ./data-parallel.ts); under a launcher (mpirun,
// srun: one process per GPU) each rank joins the launch's communicator with ncclCommInitRank, the unique id shared
// through a file (unique-id.ts). Communicators are destroyed with the run's cleanup, on every path.

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
  /** This process is one rank of a launch (mpirun, srun, torchrun): its decisions must be agreed with the others. */
  readonly launched: boolean;
  /** What every wait on collectives watches: NCCL's asynchronous errors, and the abort at a deadline or a signal. */
  readonly watch: CommWatch;
}

/**
 * The communicators of a run as a whole, for the waits on their work: a rep's wait asks `failure()` as it polls, and
 * a deadline or a signal calls `abortAll()`, which ends NCCL's kernels on the GPU too, so that the process can leave
 * in time. An aborted communicator is freed by NCCL: its release in the cleanup is then skipped.
 */
export class CommWatch implements RepWatch {
  readonly words = {
    work: 'collectives',
    waiting: 'a rank waiting for a peer',
    aborted: "NCCL's communicators were aborted",
  };

  private aborted = false;

  constructor(
    private readonly nccl: Pick<Nccl, 'asyncError' | 'abort' | 'failure' | 'release'>,
    private readonly comms: ReadonlyArray<{ readonly comm: NcclComm; readonly context: string }>,
  ) {}

  /** The first communicator with an asynchronous error (a lost peer, a failed kernel), named; null when none. */
  failure(): NcclError | null {
    if (this.aborted) return null;
    for (const { comm, context } of this.comms) {
      const state = this.nccl.asyncError(comm);
      if (state !== 0 && state !== NCCL_IN_PROGRESS) return this.nccl.failure(state, 'ncclCommGetAsyncError', context);
    }
    return null;
  }

  /** Whether some communicator's work is still being done by NCCL's own thread (ncclInProgress). */
  pending(): boolean {
    return !this.aborted && this.comms.some(({ comm }) => this.nccl.asyncError(comm) === NCCL_IN_PROGRESS);
  }

  /** Aborts every communicator, once. */
  abortAll(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const { comm } of this.comms) this.nccl.abort(comm);
  }

  /** The cleanup's release of one communicator, skipped once abortAll freed it. */
  release(comm: NcclComm, context: string): void {
    if (!this.aborted) this.nccl.release(comm, context);
  }

  /**
   * Waits, yielding to the event loop, until `done` (by default: no communicator in progress, the end of their
   * creation or of a nonblocking call NCCL finishes on its own thread), a communicator's failure, the deadline or a
   * signal; the last three abort every communicator. `what` says what was awaited, for the failure's message.
   */
  async settle(
    what: string,
    options: {
      readonly timeoutMs: number;
      readonly signal?: AbortSignal | undefined;
      readonly hint?: string | undefined;
    },
    done: () => boolean = () => !this.pending(),
  ): Promise<void> {
    const started = performance.now();
    for (;;) {
      const failure = this.failure();
      if (failure) {
        this.abortAll();
        throw failure;
      }
      if (done()) return;
      if (options.signal?.aborted) {
        this.abortAll();
        throw new Interrupted(
          `Interrupted (${String(options.signal.reason)}) while ${what}: NCCL's communicators were aborted and nothing was written.`,
          {
            contextLost: true,
          },
        );
      }
      if (performance.now() - started > options.timeoutMs) {
        this.abortAll();
        throw new DeviceFailure(
          `${what}: waited ${(options.timeoutMs / 1000).toFixed(1)} s and NCCL had not finished; the communicators were aborted.`,
          {
            hint: options.hint,
            contextLost: true,
          },
        );
      }
      // NCCL's thread ends an enqueue in microseconds, but it may share this thread's core (mpirun binds each of
      // two ranks to one core): a spin would keep it off the core until the scheduler's tick (4 ms a call on two
      // H100s). So give the core up for a few µs between polls, without a timer's millisecond; past SPIN_MS let the
      // event loop turn as well, and once the wait is for ranks to arrive, sleep a millisecond between polls.
      const waited = performance.now() - started;
      if (waited > ARRIVAL_MS) await new Promise((resolve) => setTimeout(resolve, 1));
      else if (waited > SPIN_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        yieldCore(NAP_MS);
      } else if (waited > BUSY_MS) yieldCore(NAP_MS);
    }
  }
}

const napCell = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms` (fractions too) in the kernel, so another thread of this core can run meanwhile. */
export const yieldCore = (ms: number): void => {
  Atomics.wait(napCell, 0, 0, ms);
};

const DEFAULT_ID_TIMEOUT_MS = 60_000;

/**
 * A rank bound to one core (Open MPI binds each rank to a core when it starts two or fewer) shares it with NCCL's
 * thread that enqueues every call of a nonblocking communicator: on two H100s each all-reduce of 128 MiB then took
 * 4.09 ms, against 0.48 ms from one process (docs/measurements/2026-11-26-h100x2-rerun/).
 */
export const ONE_CORE_NOTE =
  "This rank may run on one CPU core only (mpirun binds each of two ranks or fewer to a core): NCCL's own thread, which enqueues each collective, shares it. If collectives look slow, start the ranks with mpirun --bind-to none (or --bind-to socket).";

/**
 * How long `settle` polls NCCL without letting the event loop turn, ms: a nonblocking call's enqueue, not a rank's
 * arrival.
 */
const SPIN_MS = 2;
/** How long `settle` polls without giving the core up, ms: NCCL's thread, on a core of its own, is done by then. */
const BUSY_MS = 0.05;
/** How long `settle` gives the core up between polls, ms. */
const NAP_MS = 0.005;
/** Past this, ms, `settle` waits for ranks to arrive and polls once a millisecond instead of spinning. */
const ARRIVAL_MS = 50;

/**
 * The plan's devices joined in communicators: NVLS off first (NCCL reads its environment at its first call), the
 * version checked against graph capture, then one communicator per device (all of them in this process), or this
 * rank's of a launch.
 */
export async function openCommunicators(
  nccl: Nccl,
  context: Omit<OpenContext<CollectiveOp>, 'capability'>,
): Promise<Communicators> {
  const { rt, cleanup, devices, launch: options, signal } = context;
  const folder = context.flags?.[NCCL_DIR.key];
  const nvls = nvlsOff();
  const connect = connectAtInit();
  const code = nccl.version();
  const version = versionText(code);
  const graphed = context.schedules.find((s) => s.issue === 'graph');
  if (graphed && code < GRAPH_CAPTURE_MIN) {
    throw new UsageError(
      `NCCL ${version} (${nccl.libraryPath}) cannot be captured into a CUDA graph, which ${graphed.description} needs: NCCL captures collectives from 2.9 on.`,
      {
        hint: 'Use pipeline.mode: stream, or point CUDA_PIPE_NCCL at NCCL 2.9 or newer.',
      },
    );
  }
  // A ring's slot is refilled once its chunk's last op on the chunk's stream finished; a collective moved to the
  // communication stream may still be reading it then.
  if (context.ring) {
    throw new UsageError(
      `Collective stages read their bucket on the communication stream, which a ring of ${context.ring.slots} device slots does not wait for.`,
      {
        hint: 'Leave deviceMemory out of a config with a collective stage.',
      },
    );
  }
  const { identity } = options;
  const launched = identity.rank !== null && identity.size !== null && identity.size > 1;
  // Under a launcher each process is one rank on one GPU; several GPUs in one process of a launch would be several
  // ranks of it, which the unique id's one rank per process does not give.
  if (launched && devices.length > 1) {
    throw new UsageError(
      `This process is rank ${identity.rank} of ${identity.size} under a launcher, and its plan spans devices ${devices.join(', ')}: a launched rank drives one GPU.`,
      {
        hint: 'Leave devices: out under mpirun or srun (each rank takes the GPU of its local rank), or run one process without a launcher: cuda-pipe run ddp.yaml --devices all.',
      },
    );
  }
  const ctas = communicatorCtas(context.ops);
  if (ctas !== undefined && !nccl.configurable) {
    throw new UsageError(
      `collective.ctas ${ctas}: NCCL ${version} (${nccl.libraryPath}) makes communicators without a config, which is where NCCL takes a CTA count (from 2.14 on).`,
      { hint: 'Leave collective.ctas out, or point CUDA_PIPE_NCCL at NCCL 2.14 or newer.' },
    );
  }
  const byDevice = new Map<number, DeviceComm>();
  const notes = [nvls.note, ...(connect ? [connect] : [])];
  if (ctas !== undefined)
    notes.push(
      `NCCL's collectives run on ${ctas} CTA${ctas === 1 ? '' : 's'} (channels) each: the communicators' minCTAs and maxCTAs (collective.ctas).`,
    );
  const primary = devices[0] ?? 0;
  const made: Array<{ comm: NcclComm; context: string }> = [];
  const watch = new CommWatch(nccl, made);
  const timeoutMs = options.timeoutMs ?? DEFAULT_ID_TIMEOUT_MS;
  const keep = (device: number, comm: NcclComm, rank: number, ranks: number) => {
    const context = launched
      ? `rank ${rank} of ${ranks}, device ${device}`
      : `device ${device}, rank ${rank} of ${ranks}`;
    made.push({ comm, context });
    cleanup.push(() => watch.release(comm, context));
    byDevice.set(device, { comm, rank, ranks });
  };
  if (launched) {
    const rank = identity.rank as number;
    const ranks = identity.size as number;
    const path = uniqueIdPath(folder ?? tmpdir(), identity.jobId, process.env);
    let id: Uint8Array;
    if (rank === 0) {
      id = nccl.uniqueId();
      publishUniqueId(path, id);
    } else {
      id = await awaitUniqueId(path, UNIQUE_ID_BYTES, { timeoutMs, rank, signal });
    }
    rt.setDevice(primary);
    keep(primary, nccl.initRank(ranks, id, rank, `rank ${rank} of ${ranks}, device ${primary}`, { ctas }), rank, ranks);
    await watch.settle(
      `Rank ${rank} of ${ranks} (device ${primary}) joining the NCCL communicator (ncclCommInitRankConfig) waited for the other ranks`,
      {
        timeoutMs,
        signal,
        hint: "Check that every rank started (one per GPU, the same count as the launcher's -np) and runs the same config with the same flags.",
      },
    );
    // The communicator is up once every rank joined: each has read the id.
    if (rank === 0) withdrawUniqueId(path);
    notes.push(`NCCL ${version}: rank ${rank} of ${ranks} on device ${primary}, the unique id shared through ${path}.`);
    const cores = availableParallelism();
    if (cores === 1) notes.push(ONE_CORE_NOTE);
  } else {
    const ranks = devices.length;
    // Blocking, as the native program makes them: every rank is this process's, so none can fail to come, and a
    // blocking communicator enqueues each group of calls on the JS thread itself. A nonblocking one hands every
    // group to a thread of NCCL's and answers ncclInProgress: on two H200s the all-reduce alone then took 1.19 ms
    // a call of 128 MiB, against 0.47 ms natively (docs/measurements/2026-11-26-h200x2-final/).
    const comms = ctas === undefined ? nccl.initAll(devices) : initAllWithCtas(nccl, rt, devices, ctas);
    devices.forEach((device, rank) => keep(device, comms[rank] as NcclComm, rank, ranks));
    rt.setDevice(primary);
    const how = ctas === undefined ? 'ncclCommInitAll' : 'ncclCommInitRankConfig in one group';
    notes.push(
      `NCCL ${version}: one process drives device${ranks === 1 ? '' : 's'} ${devices.join(', ')} (${how}, ${ranks} rank${ranks === 1 ? '' : 's'}).`,
    );
  }
  const ranks = [...byDevice.values()][0]?.ranks ?? 1;
  const on = process.env.NCCL_NVLS_ENABLE !== undefined && process.env.NCCL_NVLS_ENABLE !== '0';
  return {
    nccl,
    byDevice,
    record: {
      library: 'nccl',
      version,
      ranks,
      localDevices: [...devices],
      nvls: on ? 'on' : 'off',
      ...(ctas === undefined ? {} : { ctas }),
    },
    notes,
    launched,
    watch,
  };
}

/**
 * What ncclCommInitAll makes, with a config: one blocking communicator per device, each rank made on its own device
 * between groupStart and groupEnd, its collectives pinned to `ctas` CTAs. ncclCommInitAll takes no config.
 */
function initAllWithCtas(
  nccl: Nccl,
  rt: OpenContext<CollectiveOp>['rt'],
  devices: readonly number[],
  ctas: number,
): NcclComm[] {
  const id = nccl.uniqueId();
  const context = `devices ${devices.join(', ')}, ${ctas} CTAs`;
  nccl.check(nccl.groupStart(), 'ncclGroupStart', context);
  let comms: NcclComm[];
  try {
    comms = devices.map((device, rank) => {
      rt.setDevice(device);
      return nccl.initRank(devices.length, id, rank, `device ${device}, rank ${rank} of ${devices.length}`, {
        blocking: true,
        ctas,
      });
    });
  } catch (error) {
    // The group is closed whatever failed in it, so that NCCL frees its state; the call's own failure is the one told.
    nccl.groupEnd();
    throw error;
  }
  // The group makes the communicators as it ends, every rank at once.
  nccl.check(nccl.groupEnd(), 'ncclGroupEnd', context);
  return comms;
}
