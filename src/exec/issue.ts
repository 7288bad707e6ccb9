import { hostBytes } from '../cuda/host.js';
import { NCCL_DATA_TYPE, NCCL_IN_PROGRESS } from '../cuda/nccl.js';
import { UsageError } from '../errors.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import {
  type DevicePtr,
  type EventHandle,
  type HostPtr,
  type KernelArgValue,
  type KernelHandle,
  LEGACY_STREAM,
  offsetPointer,
  PER_THREAD_STREAM,
  type StreamHandle,
} from '../cuda/types.js';
import type { KernelOp, Op, Plan, PlanKernel, Schedule, StreamSpec } from '../plan/types.js';
import { itemBytes } from '../config/items.js';
import { chunkArgs, launchElements } from '../plan/kernel-args.js';
import { resolvePriority } from '../plan/priority.js';
import { isTraceEvent } from '../plan/trace.js';
import { isWorkOp, scheduleOps, streamDevices, type WorkOp } from '../plan/types.js';
import type { DeviceFacts } from '../result/environment.js';
import { type IssuePrimitives, type IssueSite, issueWorkOp, type KindRuntimes } from '../kinds/index.js';
import type { DeviceBuffers } from './buffers.js';
import type { Region } from '../workers/types.js';
import type { DeviceSet } from './device-set.js';
import type { Cleanup } from './cleanup.js';
import type { Communicators } from './communicator.js';
import type { HostCalls } from './host-calls.js';
import { checksum } from '../workers/functions.js';
import type { Handover } from './handover.js';
import { type Fill, LoaderRing, loaderSlots } from './loader.js';
import { defaultWorkers } from '../workers/pool.js';

/** Generous: a rep's ops are issued in milliseconds; only a host that never releases the gate meets it. */
const GATE_TIMEOUT_NS = 2_000_000_000;

/** cuda-pipe's own kernels (kernels/internal/gate.cu), loaded when a plan has gated schedules or empty launches. */
export interface InternalKernels {
  readonly gate: KernelHandle;
  readonly empty: KernelHandle;
}

/** [release, timed out] in host-mapped memory, read by the gate kernel. */
export interface GateFlags {
  readonly host: Uint32Array;
  readonly device: DevicePtr;
}

export function allocateGate(rt: CudaRuntime, cleanup: Cleanup): GateFlags {
  const host = rt.memory.hostAlloc(8, 'mapped');
  cleanup.push(() => rt.memory.freeHost(host));
  const bytes = hostBytes(host, 8);
  return { host: new Uint32Array(bytes.buffer, bytes.byteOffset, 2), device: rt.memory.devicePointerOf(host) };
}

/**
 * A schedule bound to handles, ready to issue: one closure per issued call, returning the raw cudaError_t, so the
 * timed loop only calls and compares. `ops[i]` is what `thunks[i]` issues (for naming a failure).
 */
export interface PreparedRep {
  readonly schedule: Schedule;
  readonly thunks: ReadonlyArray<() => number>;
  /** The op each thunk issues; null for a graph launch, which issues the whole body. */
  readonly ops: ReadonlyArray<Op | null>;
  readonly opStreams: readonly StreamHandle[];
  /** Index in `thunks` of the call that issues the body's op `bodyIndex` (for a graph, its launch). */
  readonly bodyThunkIndex: (bodyIndex: number) => number;
  /** The tag of each host op of the body, by body index, for reading when it ran. */
  readonly hostTags: ReadonlyMap<number, number>;
  /**
   * A schedule with a loader (the host stage's `before`): each chunk's fill, the thunk that must wait for it (the
   * chunk's first op), and the thunk after which the event closing its H2D is recorded. Null without one.
   */
  readonly loader: {
    readonly fills: readonly Fill[];
    readonly waitAt: ReadonlyMap<number, number>;
    readonly recordedAt: ReadonlyMap<number, number>;
    readonly releasedBy: readonly (EventHandle | null)[];
    /** The ring's slots: fills in flight ahead of the GPU. */
    readonly slots: number;
  } | null;
  /** The chunks a worker pool takes over once their event (recorded after the chunk's D2H) completed, in issue order. */
  readonly handovers: ReadonlyArray<Handover & { readonly event: EventHandle }>;
  /** Host time spent capturing and instantiating a graph, once; null for a schedule issued op by op. */
  readonly setup: { readonly captureMs: number; readonly instantiateMs: number } | null;
  /** Every event of the schedule, so a traced rep can read any of them. */
  readonly events: ReadonlyMap<string, EventHandle>;
  readonly start: EventHandle;
  readonly end: EventHandle;
  /** Index in `thunks` of the call that records `start`. */
  readonly startIndex: number;
}

/** Turns a schedule into a PreparedRep. The direct issuer issues every op from the host; the graph issuer replays. */
export interface Issuer {
  prepare(schedule: Schedule): PreparedRep;
}

/**
 * What an op's thunk returns where NCCL took a collective but finishes enqueueing it on its own thread: no
 * cudaError_t is negative, and TIMED_OUT (wait.ts) is -1.
 */
export const NCCL_PENDING = -2;

/** A schedule's streams and events, created once, and a way to build the thunk of any of its ops. */
export interface BoundSchedule {
  readonly streams: ReadonlyMap<string, StreamHandle>;
  readonly events: ReadonlyMap<string, EventHandle>;
  stream(id: string): StreamHandle;
  event(id: string): EventHandle;
  /** The device a stream of the schedule is on. */
  deviceOf(id: string): number;
  /** `external`: inside a capture, record events as graph nodes (so a replay records them, for timing). */
  thunk(op: Op, options?: { external?: boolean }): { issue: () => number; hostTag: number | null };
}

/** Issues every op of a rep one by one from the host: launch records and copy closures built once, here. */
export class DirectIssuer implements Issuer {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Pick<Plan, 'kernels' | 'host' | 'buffers'>,
    private readonly devices: DeviceSet,
    private readonly kernels: ReadonlyMap<string, KernelHandle>,
    private readonly internal: InternalKernels | null,
    private readonly gate: GateFlags | null,
    private readonly hostCalls: HostCalls,
    private readonly cleanup: Cleanup,
    /** The runtimes of the plan's kinds that issue through a library (kinds/index.ts's openRuntimes). */
    private readonly runtimes: KindRuntimes = new Map(),
    /** NCCL's communicators, opened where the plan has collective ops; null otherwise. */
    private readonly communicators: Communicators | null = null,
  ) {}

  prepare(schedule: Schedule): PreparedRep {
    const handovers: Array<Handover & { event: EventHandle }> = [];
    this.handovers = handovers;
    const bound = this.bind(schedule);
    this.boundStreams.set(schedule.id, bound.streams);
    const ops = scheduleOps(schedule);
    const opStreams = ops.map((op) => bound.stream(op.stream));
    const hostTags = new Map<number, number>();
    // Before the thunks: a loader's H2D copies read its ring.
    const fills = this.loaderFills(schedule, ops);
    this.ring = fills?.ring ?? null;
    // A kernel launches on the current device: over several devices each op that moves to another sets it first.
    // The runner makes the schedule's own device current before each rep.
    let current = schedule.device;
    const thunks = ops.map((op, i) => {
      const { issue, hostTag } = bound.thunk(op);
      if (hostTag !== null) hostTags.set(i - schedule.prologue.length, hostTag);
      const device = bound.deviceOf(op.stream);
      if (device === current) return issue;
      current = device;
      const setDevice = this.rt.setDeviceThunk(device);
      return () => setDevice() || issue();
    });
    this.ring = null;
    const startIndex = ops.findIndex((op) => op.kind === 'record' && op.event === schedule.start);
    const loader = fills ? this.loaderOf(schedule, ops, thunks, fills) : null;
    return {
      schedule,
      thunks: loader?.thunks ?? thunks,
      loader: loader?.loader ?? null,
      ops,
      opStreams,
      events: bound.events,
      start: bound.event(schedule.start),
      end: bound.event(schedule.end),
      startIndex,
      bodyThunkIndex: (i) => schedule.prologue.length + i,
      hostTags,
      handovers,
      setup: null,
    };
  }

  /**
   * The fills of a schedule with the host stage and a `before`: one per chunk, waited for at the chunk's first op,
   * each writing its slot of the loader's ring (pinned, `slots` chunks of each input buffer, allocated here) where
   * the chunk's H2D then reads it. Null without a loader.
   */
  private loaderFills(schedule: Schedule, ops: readonly Op[]) {
    const host = this.plan.host;
    if (host?.thread !== 'workers' || !host.before || !ops.some((op) => op.kind === 'host')) return null;
    const chunks: Array<{ chunk: number | null; regions: Region[] }> = [];
    const fillOf = new Map<number | null, number>();
    const waitAt = new Map<number, number>();
    const lastH2d = new Map<number, number>();
    ops.forEach((op, i) => {
      if (!isWorkOp(op)) return;
      let fill = fillOf.get(op.chunk);
      if (fill === undefined) {
        fill = chunks.push({ chunk: op.chunk, regions: this.chunkRegions(op, schedule, 'inputs') }) - 1;
        fillOf.set(op.chunk, fill);
        // In a traced rep the op's begin event comes first: issued before the fill finished, it would place the
        // chunk's H2D at the start of the rep on the timeline, ahead of its own fill.
        const before = ops[i - 1];
        waitAt.set(before?.kind === 'record' && before.stream === op.stream && isTraceEvent(before.event) ? i - 1 : i, fill);
      }
      if (op.kind === 'copy' && op.direction === 'h2d') lastH2d.set(fill, i);
    });
    const ring = new LoaderRing(
      loaderSlots(host.slots, host.workers ?? defaultWorkers(), chunks.length),
      chunks.map((c) => c.regions),
    );
    const bases = new Map<string, HostPtr>();
    for (const buffer of ring.slotBytes.keys()) bases.set(buffer, this.loaderMemory(buffer, Math.max(1, ring.bytes(buffer))));
    const address = (fill: number, buffer: string, place: number) => offsetPointer(bases.get(buffer) as HostPtr, ring.offset(fill, buffer, place));
    const fills: Fill[] = chunks.map(({ chunk, regions }, fill) => ({
      chunk,
      task: { fn: 'before', chunk, regions: regions.map((r) => ({ ...r, address: BigInt(address(fill, r.buffer, r.offset)) })) },
    }));
    return { fills, waitAt, lastH2d, ring: { ring, address }, slots: ring.slots };
  }

  /** Each input buffer's pinned memory for loader rings, the largest asked for so far. */
  private readonly loaderPinned = new Map<string, { readonly base: HostPtr; readonly bytes: number }>();

  /**
   * Pinned memory for a schedule's ring of one input buffer. Schedules share it: one runner's reps never overlap, and a
   * rep's fills start with the rep, so no two rings are in use at once. A ring larger than any before gets a new block
   * (the smaller ones stay with the schedules that were prepared on them until cleanup), so a sweep's many layouts do
   * not pin a ring each.
   */
  private loaderMemory(buffer: string, bytes: number): HostPtr {
    const held = this.loaderPinned.get(buffer);
    if (held && held.bytes >= bytes) return held.base;
    const base = this.rt.memory.hostAlloc(bytes, 'pinned');
    this.cleanup.push(() => this.rt.memory.freeHost(base));
    this.loaderPinned.set(buffer, { base, bytes });
    return base;
  }

  /** The H2D source of a loader's copies while its schedule's thunks are built: the chunk's slot in the ring. */
  private ring: { readonly ring: LoaderRing; readonly address: (fill: number, buffer: string, place: number) => HostPtr } | null = null;

  /**
   * A loader's thunks: after the chunk's last H2D the same thunk records an event, whose completion frees the
   * chunk's slot for the fill `slots` later.
   */
  private loaderOf(schedule: Schedule, ops: readonly Op[], thunks: ReadonlyArray<() => number>, loader: NonNullable<ReturnType<DirectIssuer['loaderFills']>>) {
    const { fills, waitAt, lastH2d, slots } = loader;
    const recordedAt = new Map<number, number>();
    const releasedBy = fills.map((_, fill): EventHandle | null => {
      const at = lastH2d.get(fill);
      if (at === undefined) return null;
      const event = this.rt.streams.createEvent({ timing: false });
      this.cleanup.push(() => this.rt.streams.destroyEvent(event));
      recordedAt.set(at, fill);
      return event;
    });
    const wrapped = thunks.map((issue, i) => {
      const fill = recordedAt.get(i);
      const event = fill === undefined ? null : releasedBy[fill];
      if (!event) return issue;
      const record = this.rt.streams.recordThunk(event, this.streamOf(schedule, ops[i] as Op));
      return () => issue() || record();
    });
    return { thunks: wrapped, loader: { fills, waitAt, recordedAt, releasedBy, slots } };
  }

  private streamOf(schedule: Schedule, op: Op): StreamHandle {
    const stream = this.boundStreams.get(schedule.id)?.get(op.stream);
    if (stream === undefined) throw new Error(`schedule ${schedule.id} names unknown stream ${op.stream}`);
    return stream;
  }

  /** The streams of each schedule bound, by schedule id: the loader records its events on an op's own stream. */
  private readonly boundStreams = new Map<string, ReadonlyMap<string, StreamHandle>>();

  /** Where the host ops of the schedule being prepared put their handovers. */
  private handovers: Array<Handover & { event: EventHandle }> = [];

  bind(schedule: Schedule): BoundSchedule {
    const { rt, cleanup } = this;
    // Streams and events belong to the device current when they are made.
    const on = (device: number) => {
      if (this.devices.spans) rt.setDevice(device);
    };
    const streams = new Map<string, StreamHandle>();
    for (const spec of schedule.streams) {
      on(spec.device);
      streams.set(spec.id, this.makeStream(spec));
    }
    const events = new Map<string, EventHandle>();
    for (const spec of schedule.events) {
      on(spec.device ?? schedule.device);
      const event = rt.streams.createEvent({ timing: spec.timing });
      cleanup.push(() => rt.streams.destroyEvent(event));
      events.set(spec.id, event);
    }
    // Back to the device the runner made current for this schedule, which its first ops assume.
    on(schedule.device);
    const deviceOf = streamDevices(schedule);
    const lookup = <T>(map: Map<string, T>, id: string, what: string): T => {
      const value = map.get(id);
      if (value === undefined) throw new Error(`schedule ${schedule.id} names unknown ${what} ${id}`);
      return value;
    };
    const stream = (id: string) => lookup(streams, id, 'stream');
    const event = (id: string) => lookup(events, id, 'event');
    return {
      streams,
      events,
      stream,
      event,
      deviceOf,
      thunk: (op, options = {}) => {
        if (isWorkOp(op)) {
          const device = deviceOf(op.stream);
          return issueWorkOp(op, this.primitives(stream(op.stream), device, schedule), this.runtimes, this.site(stream(op.stream), device, schedule));
        }
        if (op.kind === 'record' && options.external) return { issue: rt.streams.recordExternalThunk(event(op.event), stream(op.stream)), hostTag: null };
        return { issue: this.prepareOp(op, stream(op.stream), schedule, event), hostTag: null };
      },
    };
  }

  /** The two default streams are named by fixed handles and never created or destroyed. */
  private makeStream(spec: StreamSpec): StreamHandle {
    if (spec.kind === 'legacy-default') return LEGACY_STREAM;
    if (spec.kind === 'per-thread-default') return PER_THREAD_STREAM;
    const priority = spec.priority === undefined ? {} : { priority: resolvePriority(spec.priority, this.devices.facts(spec.device).streamPriority) };
    const stream = this.rt.streams.create({ nonBlocking: spec.kind === 'non-blocking', ...priority });
    this.cleanup.push(() => this.rt.streams.destroy(stream));
    return stream;
  }

  /** What a host op runs on the JS thread (thread: js): the host stage's function over the chunk's output bytes, which its D2H just wrote. */
  private hostAction(op: { readonly chunk: number | null }, schedule: Schedule): () => void {
    const host = this.plan.host;
    const fn = host?.thread === 'js' ? host.function : 'empty';
    if (fn === 'empty') return () => {};
    const buffers = this.devices.buffers();
    const windows = this.chunkRegions(op, schedule, 'outputs').flatMap((r) => buffers.hostWindows(r.buffer, r.offset, r.bytes));
    return () => {
      this.checksums.set(`${schedule.id}:${op.chunk ?? 'whole'}`, checksum(windows));
    };
  }

  /**
   * The chunk's bytes on the host of every output buffer (what its D2H wrote, and what `after` reads) or every input
   * buffer (what `before` fills and its H2D reads).
   */
  private chunkRegions(op: { readonly chunk: number | null }, schedule: Schedule, which: 'inputs' | 'outputs'): Region[] {
    const range = op.chunk === null ? schedule.ranges[0] : schedule.ranges[op.chunk];
    if (!range) throw new Error(`schedule ${schedule.id} has an op for chunk ${op.chunk}, which it does not have`);
    const buffers = this.devices.buffers();
    const chosen = which === 'outputs' ? buffers.outputs() : this.plan.buffers.filter((b) => b.role === 'in' || b.role === 'inout');
    return chosen.map((b) => {
      const offset = range.first * itemBytes(b);
      return { buffer: b.name, offset, bytes: range.count * itemBytes(b), address: BigInt(offsetPointer(buffers.binding(b.name).host, offset)) };
    });
  }

  /**
   * A host op on workers: the stream only records an event (no timing, so the record costs the stream nothing), and
   * the rep runner hands the chunk to the pool once it completed. No CPU work ever sits on a stream.
   */
  private handoverCall(op: { readonly chunk: number | null }, stream: StreamHandle, schedule: Schedule): () => number {
    const event = this.rt.streams.createEvent({ timing: false });
    this.cleanup.push(() => this.rt.streams.destroyEvent(event));
    this.handovers.push({ event, chunk: op.chunk, task: { fn: 'after', chunk: op.chunk, regions: this.chunkRegions(op, schedule, 'outputs') } });
    return this.rt.streams.recordThunk(event, stream);
  }

  /** The last checksum each host op computed, by schedule and chunk. */
  readonly checksums = new Map<string, number>();

  /** Where a kind's runtime binds an op: its stream and device, and the plan's buffers on that device. */
  private site(stream: StreamHandle, device: number, schedule: Schedule): IssueSite {
    const buffers = this.devices.buffers(device);
    return {
      stream,
      device,
      schedule: schedule.description,
      address: (buffer, elementOffset) => {
        const binding = buffers.binding(buffer);
        return offsetPointer(binding.device, elementOffset * binding.buffer.elementBytes);
      },
      buffer: (name) => buffers.binding(name).buffer,
      onDevice: (make) => {
        if (!this.devices.spans) return make();
        this.rt.setDevice(device);
        try {
          return make();
        } finally {
          this.rt.setDevice(schedule.device);
        }
      },
    };
  }

  /** The device layer bound to one op's stream, for its stage kind to issue the op through. */
  private primitives(stream: StreamHandle, device: number, schedule: Schedule): IssuePrimitives {
    const { rt } = this;
    const buffers = this.devices.buffers(device);
    return {
      copy: (op) => {
        const binding = buffers.binding(op.buffer);
        const { ring } = this;
        const fill = op.direction === 'h2d' && ring ? ring.ring.fillAt(op.buffer, op.hostOffset, op.bytes) : null;
        const host = fill === null || !ring ? offsetPointer(binding.host, op.hostOffset) : ring.address(fill, op.buffer, op.hostOffset);
        const dev = offsetPointer(binding.device, op.deviceOffset);
        return op.direction === 'h2d' ? rt.memory.copyThunk(dev, host, op.bytes, 'h2d', stream) : rt.memory.copyThunk(host, dev, op.bytes, 'd2h', stream);
      },
      kernel: (op) => {
        const kernel = this.plan.kernels.find((k) => k.label === op.kernel);
        const handle = this.kernels.get(op.kernel);
        if (!kernel || handle === undefined) throw new Error(`schedule ${schedule.id} names unknown kernel ${op.kernel}`);
        return this.launch({
          kernel: handle,
          grid: gridSize(
            kernel,
            launchElements(
              kernel.args,
              kernel.args.flatMap((a) => (a.kind === 'buffer' ? [buffers.binding(a.buffer).buffer] : [])),
              op.count,
            ),
            this.devices.facts(device),
          ),
          block: kernel.block,
          sharedBytes: 0,
          stream,
          args: this.kernelArgs(kernel, op, buffers),
          describe: `kernel ${kernel.label}`,
        });
      },
      peerCopy: (op) => {
        const src = offsetPointer(this.devices.buffers(op.from).binding(op.buffer).device, op.deviceOffset);
        const dst = offsetPointer(this.devices.buffers(op.to).binding(op.buffer).device, op.deviceOffset);
        return rt.peer.copyThunk(dst, op.to, src, op.from, op.bytes, stream);
      },
      hostCall: (op) => {
        const host = this.plan.host;
        // A loader alone has nothing to run after the D2H: its host op issues nothing.
        if (host?.thread === 'workers') return { issue: host.after ? this.handoverCall(op, stream, schedule) : () => 0, hostTag: null };
        const { tag, issue } = this.hostCalls.thunk(stream, this.hostAction(op, schedule));
        return { issue, hostTag: tag };
      },
      collective: (op) => {
        const { communicators } = this;
        const own = communicators?.byDevice.get(device);
        if (!communicators || !own) throw new Error(`schedule ${schedule.id} has collective ${op.label} on device ${device}, which has no NCCL communicator`);
        const binding = buffers.binding(op.buffer);
        const { elementBytes, type } = binding.buffer;
        const dataType = NCCL_DATA_TYPE[type];
        if (dataType === undefined) throw new Error(`collective ${op.label}: NCCL has no data type for ${type}`);
        if (op.elements % own.ranks !== 0) {
          throw new UsageError(`collective ${op.label}: a ${op.collective} splits each chunk's ${op.elements} elements over ${own.ranks} ranks, which does not divide them.`, {
            hint: `Give buffer "${op.buffer}" an itemSize, or the pipeline chunks, that make every chunk a multiple of ${own.ranks} elements.`,
          });
        }
        const { nccl } = communicators;
        const call = nccl.issue({
          collective: op.collective,
          buffer: offsetPointer(binding.device, op.elementOffset * elementBytes),
          elements: op.elements,
          elementBytes,
          dataType,
          comm: own.comm,
          rank: own.rank,
          ranks: own.ranks,
          stream,
        });
        const api = { allreduce: 'ncclAllReduce', reducescatter: 'ncclReduceScatter', allgather: 'ncclAllGather' }[op.collective];
        const context = `collective ${op.label}, device ${device}, rank ${own.rank} of ${own.ranks}, ${op.elements} ${type} elements`;
        // NCCL answers with an ncclResult_t: a failure is thrown here, naming the op, as a cuBLAS one is. A grouped
        // call is deferred by NCCL until the group closes, which enqueues every device's call of the bucket at once.
        const opens = op.group?.opens ?? false;
        const closes = op.group?.closes ?? false;
        // A nonblocking communicator may answer ncclInProgress (NCCL finishes the enqueue on its own thread): the
        // runner then waits, without blocking the JS thread, before it issues the next op.
        const settled = (status: number, name: string) => {
          if (status === NCCL_IN_PROGRESS) return NCCL_PENDING;
          if (status !== 0) throw nccl.failure(status, name, context);
          return 0;
        };
        return () => {
          if (opens) nccl.check(nccl.groupStart(), 'ncclGroupStart', context);
          const status = call();
          if (status !== 0 && status !== NCCL_IN_PROGRESS) {
            // A failed call inside a group still ends it, so that NCCL frees the group's state before cleanup destroys the communicators.
            if (op.group) nccl.groupEnd();
            throw nccl.failure(status, api, context);
          }
          if (closes) return settled(nccl.groupEnd(), 'ncclGroupEnd');
          return op.group ? 0 : settled(status, api);
        };
      },
    };
  }

  /** The ordering and timing ops the planner adds around the work; work ops go through their stage kind. */
  private prepareOp(op: Exclude<Op, WorkOp>, stream: StreamHandle, schedule: Schedule, event: (id: string) => EventHandle): () => number {
    const { rt } = this;
    switch (op.kind) {
      case 'record':
        return rt.streams.recordThunk(event(op.event), stream);
      case 'wait':
        return rt.streams.waitThunk(stream, event(op.event));
      case 'gate': {
        const { gate, internal } = this;
        if (!gate || !internal) throw new Error(`schedule ${schedule.id} is gated but no gate kernel was loaded`);
        return this.launch({
          kernel: internal.gate,
          grid: 1,
          block: 1,
          sharedBytes: 0,
          stream,
          describe: 'gate',
          args: [
            { kind: 'pointer', value: gate.device },
            { kind: 'scalar', type: 'uint64', value: GATE_TIMEOUT_NS },
          ],
        });
      }
      case 'empty': {
        if (!this.internal) throw new Error(`schedule ${schedule.id} launches empty kernels but none was loaded`);
        return this.launch({ kernel: this.internal.empty, grid: 1, block: 32, sharedBytes: 0, stream, describe: 'empty kernel', args: [] });
      }
    }
  }

  private launch(spec: Parameters<CudaRuntime['launch']['record']>[0]): () => number {
    const record = this.rt.launch.record(spec);
    this.cleanup.push(() => record.free());
    return record.launch;
  }

  private kernelArgs(kernel: PlanKernel, op: Pick<KernelOp, 'first' | 'count' | 'deviceFirst'>, buffers: DeviceBuffers): KernelArgValue[] {
    const named = kernel.args.flatMap((a) => (a.kind === 'buffer' ? [buffers.binding(a.buffer).buffer] : []));
    return chunkArgs(kernel.args, named, op).map(
      (arg): KernelArgValue => (arg.kind === 'buffer' ? { kind: 'pointer', value: offsetPointer(buffers.binding(arg.buffer).device, arg.byteOffset) } : arg),
    );
  }
}

export function gridSize(kernel: Pick<PlanKernel, 'grid' | 'block'>, count: number, device: Pick<DeviceFacts, 'multiprocessors' | 'maxThreadsPerMultiprocessor'>): number {
  const cover = Math.max(1, Math.ceil(count / kernel.block));
  if (kernel.grid === 'cover') return cover;
  if (kernel.grid === 'auto') {
    const resident = device.multiprocessors * Math.max(1, Math.floor(device.maxThreadsPerMultiprocessor / kernel.block));
    return Math.min(cover, resident);
  }
  return kernel.grid;
}
