import type { CudaRuntime } from '../cuda/runtime.js';
import {
  type EventHandle,
  type HostPtr,
  type KernelHandle,
  LEGACY_STREAM,
  offsetPointer,
  PER_THREAD_STREAM,
  type StreamHandle,
} from '../cuda/types.js';
import type { Op, Plan, Schedule, StreamSpec } from '../plan/types.js';
import { resolvePriority } from '../plan/priority.js';
import { isTraceEvent } from '../plan/trace.js';
import { isWorkOp, scheduleOps, streamDevices, type WorkOp } from '../plan/types.js';
import {
  type RuntimePrimitives,
  type IssueSite,
  issueWorkOp,
  type KindRuntimes,
  type RepHooks,
  type SchedulePart,
  type Thunk,
} from '../kinds/index.js';
import type { DeviceSet } from './device-set.js';
import type { Cleanup } from './cleanup.js';
import type { HostCalls } from './host-calls.js';
import { gateArgs, type GateFlags, type InternalKernels } from './gate.js';
import { kernelLaunch } from './kernel-launch.js';
import type { BoundSchedule, Issuer, PreparedRep } from './prepared-rep.js';

/** Issues every op of a rep one by one from the host: launch records and copy closures built once, here. */
export class DirectIssuer implements Issuer {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Pick<Plan, 'kernels'>,
    private readonly devices: DeviceSet,
    private readonly kernels: ReadonlyMap<string, KernelHandle>,
    private readonly internal: InternalKernels | null,
    private readonly gate: GateFlags | null,
    readonly hostCalls: HostCalls,
    private readonly cleanup: Cleanup,
    /** The runtimes of the plan's kinds that issue through a library (kinds/runtimes.ts' openRuntimes). */
    private readonly runtimes: KindRuntimes = new Map(),
  ) {}

  /**
   * The parts the kinds take in the schedule being prepared, while its ops are bound (kinds/api/run.ts's
   * `prepareSchedule`).
   */
  private parts: readonly SchedulePart[] = [];

  prepare(schedule: Schedule): PreparedRep {
    const bound = this.bind(schedule);
    const ops = scheduleOps(schedule);
    const opStreams = ops.map((op) => bound.stream(op.stream));
    const hostTags = new Map<number, number>();
    // Before the thunks: a kind's part may move where they read (a loader's H2D copies read its ring).
    const parts = [...this.runtimes.values()].flatMap((runtime) => runtime.prepareSchedule?.(schedule, ops) ?? []);
    this.parts = parts;
    // A kernel launches on the current device: over several devices each op that moves to another sets it first.
    // The runner makes the schedule's own device current before each rep.
    let current = schedule.device;
    let thunks: readonly Thunk[];
    try {
      thunks = ops.map((op, i) => {
        const { issue, hostTag } = bound.thunk(op);
        if (hostTag !== null) hostTags.set(i - schedule.prologue.length, hostTag);
        const device = bound.deviceOf(op.stream);
        if (device === current) return issue;
        current = device;
        const setDevice = this.rt.setDeviceThunk(device);
        return () => setDevice() || issue();
      });
    } finally {
      this.parts = [];
    }
    const startIndex = ops.findIndex((op) => op.kind === 'record' && op.event === schedule.start);
    const start = bound.event(schedule.start);
    const end = bound.event(schedule.end);
    const issueBegins = (i: number) => {
      const before = ops[i - 1];
      return before?.kind === 'record' && before.stream === ops[i]?.stream && isTraceEvent(before.event) ? i - 1 : i;
    };
    let rep: RepHooks | null = null;
    for (const part of parts) {
      const done = part.bound({ ops, thunks, opStreams, start, end, startIndex, issueBegins });
      thunks = done.thunks;
      if (done.rep && rep) throw new Error(`schedule ${schedule.id}: two kinds take part in each of its reps`);
      rep ??= done.rep;
    }
    return {
      schedule,
      thunks,
      rep,
      ops,
      opStreams,
      events: bound.events,
      start,
      end,
      startIndex,
      bodyThunkIndex: (i) => schedule.prologue.length + i,
      hostTags,
      setup: null,
    };
  }

  /**
   * Where an H2D copy reads while a schedule is prepared: where a kind's part puts it, else null (the buffer's own
   * memory).
   */
  private hostSource(copy: {
    readonly buffer: string;
    readonly hostOffset: number;
    readonly bytes: number;
  }): HostPtr | null {
    for (const part of this.parts) {
      const source = part.hostSource(copy);
      if (source !== null) return source;
    }
    return null;
  }

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
          return issueWorkOp(
            op,
            this.primitives(stream(op.stream), device, schedule),
            this.runtimes,
            this.site(stream(op.stream), device, schedule),
          );
        }
        if (op.kind === 'record' && options.external)
          return { issue: rt.streams.recordExternalThunk(event(op.event), stream(op.stream)), hostTag: null };
        return { issue: this.prepareOp(op, stream(op.stream), schedule, event), hostTag: null };
      },
    };
  }

  /** The two default streams are named by fixed handles and never created or destroyed. */
  private makeStream(spec: StreamSpec): StreamHandle {
    if (spec.kind === 'legacy-default') return LEGACY_STREAM;
    if (spec.kind === 'per-thread-default') return PER_THREAD_STREAM;
    const priority =
      spec.priority === undefined
        ? {}
        : { priority: resolvePriority(spec.priority, this.devices.facts(spec.device).streamPriority) };
    const stream = this.rt.streams.create({ nonBlocking: spec.kind === 'non-blocking', ...priority });
    this.cleanup.push(() => this.rt.streams.destroy(stream));
    return stream;
  }

  /** Where a kind's runtime binds an op: its stream and device, and the plan's buffers on that device. */
  private site(stream: StreamHandle, device: number, schedule: Schedule): IssueSite {
    const buffers = this.devices.buffers(device);
    return {
      stream,
      device,
      schedule: schedule.description,
      scheduleId: schedule.id,
      ranges: schedule.ranges,
      hostCall: (action) => {
        const { tag, issue } = this.hostCalls.thunk(stream, action);
        return { issue, hostTag: tag };
      },
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
  private primitives(stream: StreamHandle, device: number, schedule: Schedule): RuntimePrimitives {
    const { rt } = this;
    const buffers = this.devices.buffers(device);
    return {
      copy: (op) => {
        const binding = buffers.binding(op.buffer);
        const host =
          (op.direction === 'h2d' ? this.hostSource(op) : null) ?? offsetPointer(binding.host, op.hostOffset);
        const dev = offsetPointer(binding.device, op.deviceOffset);
        return op.direction === 'h2d'
          ? rt.memory.copyThunk(dev, host, op.bytes, 'h2d', stream)
          : rt.memory.copyThunk(host, dev, op.bytes, 'd2h', stream);
      },
      kernel: (op) => {
        const kernel = this.plan.kernels.find((k) => k.label === op.kernel);
        const handle = this.kernels.get(op.kernel);
        if (!kernel || handle === undefined)
          throw new Error(`schedule ${schedule.id} names unknown kernel ${op.kernel}`);
        return this.launch({
          kernel: handle,
          ...kernelLaunch(kernel, op, buffers, this.devices.facts(device)),
          sharedBytes: 0,
          stream,
          describe: `kernel ${kernel.label}`,
        });
      },
      peerCopy: (op) => {
        const src = offsetPointer(this.devices.buffers(op.from).binding(op.buffer).device, op.deviceOffset);
        const dst = offsetPointer(this.devices.buffers(op.to).binding(op.buffer).device, op.deviceOffset);
        return rt.peer.copyThunk(dst, op.to, src, op.from, op.bytes, stream);
      },
    };
  }

  /** The ordering and timing ops the planner adds around the work; work ops go through their stage kind. */
  private prepareOp(
    op: Exclude<Op, WorkOp>,
    stream: StreamHandle,
    schedule: Schedule,
    event: (id: string) => EventHandle,
  ): () => number {
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
          args: gateArgs(gate),
        });
      }
      case 'empty': {
        if (!this.internal) throw new Error(`schedule ${schedule.id} launches empty kernels but none was loaded`);
        return this.launch({
          kernel: this.internal.empty,
          grid: 1,
          block: 32,
          sharedBytes: 0,
          stream,
          describe: 'empty kernel',
          args: [],
        });
      }
    }
  }

  private launch(spec: Parameters<CudaRuntime['launch']['record']>[0]): () => number {
    const record = this.rt.launch.record(spec);
    this.cleanup.push(() => record.free());
    return record.launch;
  }
}
