import { join } from 'node:path';
import { describeDevice, softwareVersions } from './device-facts.js';
import { openSmClock } from '../cuda/nvml.js';
import { openRuntime, type CudaRuntime } from '../cuda/runtime.js';
import type { KernelHandle } from '../cuda/types.js';
import { Interrupted, UsageError } from '../errors.js';
import { readKernelSource } from '../kernels/catalog.js';
import { compileKernel, compileKernelSource } from '../kernels/compile.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import { builtinKernelsDir } from '../paths.js';
import type { CompileRecord } from '../measure/result.js';
import { checkPriorities } from '../plan/priority.js';
import {
  type HostBuffers,
  type KindFlagValues,
  kindRecords,
  type Launch,
  loadRuntimes,
  NOT_LAUNCHED,
  openRuntimes,
  type RuntimeModules,
  type RuntimeStart,
  startRuntimes,
  stopRuntimes,
} from '../kinds/index.js';
import { type Placement, type Plan, scheduleOps } from '../plan/types.js';
import type { DeviceFacts, SharingRecord, SoftwareVersions } from '../result/environment.js';
import { DeviceBuffers, type DeviceMemoryUse } from './buffers.js';
import { Cleanup } from './cleanup.js';
import { DeviceSet } from './device-set.js';
import { GraphIssuer } from './graph-issuer.js';
import { HostCalls } from './host-calls.js';
import { allocateGate, type InternalKernels } from './gate.js';
import { DirectIssuer } from './issue.js';
import { CudaRepRunner } from './rep-runner.js';
import { type ProcessListing, sharingRecord } from './sharing.js';
import { makeWaiter, type WaitStrategy } from './wait.js';

export interface DeviceOutcome<T> {
  /** The plan's first device: the one its single-device modes ran on. */
  readonly device: DeviceFacts;
  /** Every device of the plan, the first first. */
  readonly devices: readonly DeviceFacts[];
  /**
   * How each pair of devices that peer copies ran between was joined: direct peer access, or staged through the host.
   */
  readonly peers: readonly PeerPath[];
  /** Why the SM clock was not read, or null when it was. */
  readonly clockUnavailable: string | null;
  readonly software: SoftwareVersions;
  readonly compiles: CompileRecord[];
  /** Device memory the buffers took (cudaMemGetInfo before and after allocating them). */
  readonly memory: DeviceMemoryUse;
  /** Other compute processes on the GPU before and after `body`. */
  readonly sharing: SharingRecord;
  /**
   * The Result's sections the plan's kinds filled (a collective's NCCL communicator), and what its notes say of them.
   */
  readonly kinds: { readonly sections: Readonly<Record<string, unknown>>; readonly notes: readonly string[] };
  readonly value: T;
}

export interface PeerPath {
  readonly from: number;
  readonly to: number;
  readonly path: 'peer' | 'staged';
}

export interface DeviceContext {
  readonly device: DeviceFacts;
  /** How each pair of devices that peer copies run between is joined. */
  readonly peers: readonly PeerPath[];
  /** Reads the SM clock through NVML; undefined where NVML is not available. */
  readonly smClock: (() => number | null) | undefined;
}

/**
 * Picks the device, checks that it exists, and describes it. `origin` says who chose it when the user did not (a
 * launcher's local rank), so that a missing device is blamed on what chose it rather than on a flag.
 */
export function openDevice(rt: CudaRuntime, device: number, origin?: string): DeviceFacts {
  const count = rt.deviceCount();
  if (device >= count) {
    const devices = `this machine has ${count} CUDA device${count === 1 ? '' : 's'} (0 to ${count - 1})`;
    if (origin !== undefined) {
      throw new UsageError(`Device ${device} does not exist: ${devices}, and ${origin}.`, {
        hint: `Start at most ${count} rank${count === 1 ? '' : 's'} on this host, show each rank its own GPU through CUDA_VISIBLE_DEVICES, or pick one with --device.`,
      });
    }
    throw new UsageError(`Device ${device} does not exist: ${devices}.`, {
      hint: 'Pick one with --device, or see them all with `cuda-pipe probe`.',
    });
  }
  return describeDevice(rt, device);
}

export interface OpenOptions {
  readonly wait: WaitStrategy;
  /** Ctrl-C: ends the host stage's workers (the pool then fails the rep in flight with Interrupted). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Who chose the plan's first device when no flag or config did (a launcher's local rank), for a missing device's
   * message.
   */
  readonly deviceOrigin?: string | undefined;
  /**
   * How this process's rank meets the others of a launch, for a kind that spans ranks (absent: one process, no
   * launcher).
   */
  readonly launch?: Launch | undefined;
  /** The values of the kinds' own flags the command was given (`KIND_FLAGS`), for their runtimes. */
  readonly kindFlags?: KindFlagValues | undefined;
}

/**
 * A compile, unless a signal comes first: NVRTC cannot be stopped, and its thread would hold the process until it
 * ends, so the run leaves without CUDA's teardown (`contextLost`), as after a rep past its deadline.
 */
function unlessInterrupted<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const stop = () =>
      reject(
        new Interrupted(`Interrupted (${String(signal.reason)}) while ${what}: nothing was measured.`, {
          contextLost: true,
        }),
      );
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/** The library a kernel lives in, loaded for this device and released with the cleanup. */
async function loadKernel(
  rt: CudaRuntime,
  cleanup: Cleanup,
  kernel: ResolvedKernel,
  arch: string,
  signal: AbortSignal | undefined,
) {
  const compiled = await unlessInterrupted(compileKernel(kernel, arch), signal, `compiling ${kernel.sourcePath}`);
  const library = rt.launch.loadLibrary(compiled.cubin);
  cleanup.push(() => library.unload());
  return { handle: rt.launch.getKernel(library.library, kernel.entry), compiled };
}

async function loadInternalKernels(rt: CudaRuntime, cleanup: Cleanup, arch: string): Promise<InternalKernels> {
  const source = readKernelSource(join(builtinKernelsDir(), 'internal', 'gate.cu'));
  const compiled = await compileKernelSource({ sourcePath: source.path, source: source.text, options: [], arch });
  const library = rt.launch.loadLibrary(compiled.cubin);
  cleanup.push(() => library.unload());
  return {
    gate: rt.launch.getKernel(library.library, 'cuda_pipe_gate'),
    empty: rt.launch.getKernel(library.library, 'cuda_pipe_empty'),
  };
}

/**
 * Everything between a Plan and its measurements on one device: open it, compile (or fetch from the cache) and load
 * each kernel for its architecture, allocate buffers, hand a rep runner to `body`, and release it all.
 */
export async function withDevicePlan<T>(
  plan: Plan,
  kernels: readonly ResolvedKernel[],
  options: OpenOptions,
  body: (runner: CudaRepRunner, context: DeviceContext) => Promise<T>,
): Promise<DeviceOutcome<T>> {
  const ops = plan.schedules.flatMap(scheduleOps);
  // The libraries the plan's kinds issue through, first: a missing one is named before anything else (exit 3).
  const kinds = await loadRuntimes(ops);
  // Then, before any device, what a kind starts there fails as the config's (a host stage's module that does not load).
  const started = await startRuntimes(ops, { plan, signal: options.signal });
  try {
    return await onDevices(plan, kernels, options, body, { kinds, started });
  } finally {
    // What the kinds started ended before the caller goes on (Ctrl-C, an error): no host stage's worker is left
    // reading freed pinned memory.
    await stopRuntimes(started);
  }
}

async function onDevices<T>(
  plan: Plan,
  kernels: readonly ResolvedKernel[],
  options: OpenOptions,
  body: (runner: CudaRepRunner, context: DeviceContext) => Promise<T>,
  { kinds, started }: { readonly kinds: RuntimeModules; readonly started: ReadonlyMap<string, RuntimeStart> },
): Promise<DeviceOutcome<T>> {
  const [deviceIndex] = plan.devices;
  if (deviceIndex === undefined) throw new Error(`plan ${plan.name} names no device`);
  const rt = openRuntime();
  const facts = plan.devices.map((d, i) => openDevice(rt, d, i === 0 ? options.deviceOrigin : undefined));
  const device = facts[0] as DeviceFacts;
  checkSameArchitecture(facts);
  checkPriorities(plan, device.streamPriority, deviceIndex);
  rt.setDevice(deviceIndex);
  const arch = `sm_${device.computeCapability.major}${device.computeCapability.minor}`;
  return Cleanup.use(async (cleanup) => {
    const handles = new Map<string, KernelHandle>();
    const compiles: CompileRecord[] = [];
    for (const kernel of kernels) {
      const { handle, compiled } = await loadKernel(rt, cleanup, kernel, arch, options.signal);
      handles.set(kernel.label, handle);
      compiles.push({
        label: kernel.label,
        cached: compiled.cached,
        ms: compiled.ms,
        arch,
        nvrtc: compiled.nvrtcVersion,
      });
    }
    const gated = plan.schedules.some((s) => s.gated);
    const internal =
      gated || plan.schedules.some((s) => s.body.some((op) => op.kind === 'empty'))
        ? await loadInternalKernels(rt, cleanup, arch)
        : null;
    const gate = gated ? allocateGate(rt, cleanup) : null;
    const buffers = DeviceBuffers.allocate(rt, deviceIndex, plan.buffers, plan.device.elements, cleanup);
    const devices = DeviceSet.of(rt, [
      { facts: device, buffers },
      ...plan.placements.map((placement) => ({
        facts: facts.find((f) => f.index === placement.device) as DeviceFacts,
        buffers: allocateOn(rt, placement, plan, buffers, cleanup),
      })),
    ]);
    const peers = enablePeers(rt, plan);
    rt.setDevice(deviceIndex);
    const runtimes = await openRuntimes(kinds, {
      rt,
      cleanup,
      devices: plan.devices,
      capability: (d) => (facts.find((f) => f.index === d) ?? device).computeCapability,
      schedules: plan.schedules,
      ring: plan.device.ring ?? null,
      launch: options.launch ?? NOT_LAUNCHED,
      flags: options.kindFlags ?? {},
      signal: options.signal,
      plan,
      hostBuffers: hostBuffers(devices),
      started,
    });
    const hostCalls = new HostCalls(rt, cleanup);
    const direct = new DirectIssuer(rt, plan, devices, handles, internal, gate, hostCalls, cleanup, runtimes);
    const issuers = { stream: direct, graph: new GraphIssuer(rt, direct, cleanup) };
    const runner = new CudaRepRunner(
      rt,
      plan,
      devices,
      issuers,
      makeWaiter(rt, options.wait),
      gate,
      hostCalls,
      runtimes,
    );
    const clock = openSmClock(device.pciBusId, device.index);
    if ('clock' in clock) cleanup.push(() => clock.clock.close());
    const listings: ProcessListing[] = [];
    const listProcesses = () => {
      if ('clock' in clock) listings.push(clock.clock.computeProcesses());
    };
    listProcesses();
    let value: T;
    try {
      value = await body(runner, { device, peers, smClock: 'clock' in clock ? clock.clock.read : undefined });
    } finally {
      // Before the clean-up frees the pinned memory a host stage's workers read.
      await stopRuntimes(started);
    }
    listProcesses();
    const software = softwareVersions(rt, null);
    return {
      device,
      devices: facts,
      peers,
      clockUnavailable: 'unavailable' in clock ? clock.unavailable : null,
      software: { ...software, nvrtc: compiles[0]?.nvrtc ?? null },
      compiles,
      memory: buffers.memory,
      kinds: kindRecords(runtimes),
      value,
      sharing: sharingRecord(listings, process.pid, 'unavailable' in clock ? clock.unavailable : null),
    };
  });
}

/** The first device's buffers in host memory, which every device shares, as a kind's runtime reads them. */
function hostBuffers(devices: DeviceSet): HostBuffers {
  return {
    outputs: () => devices.buffers().outputs(),
    host: (name) => devices.buffers().binding(name).host,
    windows: (name, offset, bytes) => devices.buffers().hostWindows(name, offset, bytes),
  };
}

/**
 * A device's buffers beside the first device's, sharing its host memory. Its clean-up makes it current before its
 * memory is freed and the first device current again after.
 */
function allocateOn(
  rt: CudaRuntime,
  placement: Placement,
  plan: Plan,
  sharing: DeviceBuffers,
  cleanup: Cleanup,
): DeviceBuffers {
  const primary = plan.devices[0] ?? 0;
  cleanup.push(() => rt.setDevice(primary));
  rt.setDevice(placement.device);
  const buffers = DeviceBuffers.allocate(rt, placement.device, plan.buffers, placement.elements, cleanup, sharing, {
    ownOutputs: placement.ownOutputs ?? false,
  });
  cleanup.push(() => rt.setDevice(placement.device));
  return buffers;
}

/** One library per kernel serves every device only when they share an architecture. */
function checkSameArchitecture(facts: readonly DeviceFacts[]): void {
  const arch = (f: DeviceFacts) => `sm_${f.computeCapability.major}${f.computeCapability.minor}`;
  const [first, ...rest] = facts;
  const other = rest.find((f) => first && arch(f) !== arch(first));
  if (first && other) {
    throw new UsageError(
      `Devices ${first.index} (${first.name}, ${arch(first)}) and ${other.index} (${other.name}, ${arch(other)}) differ in architecture; one run spans devices of one architecture.`,
      {
        hint: 'List devices of the same kind in devices:, or run each kind on its own (one rank per GPU under mpirun works for mixed machines).',
      },
    );
  }
}

/**
 * Peer access from each device that peer copies run from to the device they copy to, where the driver allows it
 * (a pair copied both ways appears twice); where it does not, cudaMemcpyPeerAsync stages the copy through the host,
 * and the result says so.
 */
function enablePeers(rt: CudaRuntime, plan: Plan): PeerPath[] {
  const pairs = new Map<string, { from: number; to: number }>();
  for (const s of plan.schedules)
    for (const op of s.body) if (op.kind === 'peer') pairs.set(`${op.from}>${op.to}`, { from: op.from, to: op.to });
  return [...pairs.values()].map(({ from, to }) => ({ from, to, path: rt.peer.enable(from, to) ? 'peer' : 'staged' }));
}
