import { hostBytes } from '../cuda/host.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import { type DevicePtr, type EventHandle, type KernelArgValue, type KernelHandle, offsetPointer, type StreamHandle } from '../cuda/types.js';
import type { KernelOp, Op, Plan, PlanKernel, Schedule } from '../plan/types.js';
import { scheduleOps } from '../plan/types.js';
import type { DeviceFacts } from '../result/schema.js';
import type { DeviceBuffers } from './buffers.js';
import type { Cleanup } from './cleanup.js';

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
  readonly ops: readonly Op[];
  readonly opStreams: readonly StreamHandle[];
  /** Every event of the schedule, so a traced rep can read any of them. */
  readonly events: ReadonlyMap<string, EventHandle>;
  readonly start: EventHandle;
  readonly end: EventHandle;
  /** Index in `thunks` of the call that records `start`. */
  readonly startIndex: number;
}

/** Turns a schedule into a PreparedRep. The direct issuer issues every op from the host; a graph issuer would replay. */
export interface Issuer {
  prepare(schedule: Schedule): PreparedRep;
}

/** Issues every op of a rep one by one from the host: launch records and copy closures built once, here. */
export class DirectIssuer implements Issuer {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Pick<Plan, 'kernels'>,
    private readonly device: DeviceFacts,
    private readonly buffers: DeviceBuffers,
    private readonly kernels: ReadonlyMap<string, KernelHandle>,
    private readonly internal: InternalKernels | null,
    private readonly gate: GateFlags | null,
    private readonly cleanup: Cleanup,
  ) {}

  prepare(schedule: Schedule): PreparedRep {
    const { rt, cleanup } = this;
    const streams = new Map<string, StreamHandle>();
    for (const spec of schedule.streams) {
      const stream = rt.streams.create({ nonBlocking: spec.flags === 'non-blocking', ...(spec.priority === undefined ? {} : { priority: spec.priority }) });
      cleanup.push(() => rt.streams.destroy(stream));
      streams.set(spec.id, stream);
    }
    const events = new Map<string, EventHandle>();
    for (const spec of schedule.events) {
      const event = rt.streams.createEvent({ timing: spec.timing });
      cleanup.push(() => rt.streams.destroyEvent(event));
      events.set(spec.id, event);
    }
    const lookup = <T>(map: Map<string, T>, id: string, what: string): T => {
      const value = map.get(id);
      if (value === undefined) throw new Error(`schedule ${schedule.id} names unknown ${what} ${id}`);
      return value;
    };
    const ops = scheduleOps(schedule);
    const opStreams = ops.map((op) => lookup(streams, op.stream, 'stream'));
    const thunks = ops.map((op, i) => this.prepareOp(op, opStreams[i] as StreamHandle, schedule, (id) => lookup(events, id, 'event')));
    const startIndex = ops.findIndex((op) => op.kind === 'record' && op.event === schedule.start);
    return { schedule, thunks, ops, opStreams, events, start: lookup(events, schedule.start, 'event'), end: lookup(events, schedule.end, 'event'), startIndex };
  }

  private prepareOp(op: Op, stream: StreamHandle, schedule: Schedule, event: (id: string) => EventHandle): () => number {
    const { rt } = this;
    switch (op.kind) {
      case 'copy': {
        const binding = this.buffers.binding(op.buffer);
        const host = offsetPointer(binding.host, op.hostOffset);
        const device = offsetPointer(binding.device, op.deviceOffset);
        return op.direction === 'h2d'
          ? rt.memory.copyThunk(device, host, op.bytes, 'h2d', stream)
          : rt.memory.copyThunk(host, device, op.bytes, 'd2h', stream);
      }
      case 'kernel': {
        const kernel = this.plan.kernels.find((k) => k.label === op.kernel);
        const handle = this.kernels.get(op.kernel);
        if (!kernel || handle === undefined) throw new Error(`schedule ${schedule.id} names unknown kernel ${op.kernel}`);
        return this.launch({
          kernel: handle, grid: gridSize(kernel, op.count, this.device), block: kernel.block, sharedBytes: 0, stream,
          args: this.kernelArgs(kernel, op), describe: `kernel ${kernel.label}`,
        });
      }
      case 'record':
        return rt.streams.recordThunk(event(op.event), stream);
      case 'wait':
        return rt.streams.waitThunk(stream, event(op.event));
      case 'gate': {
        const { gate, internal } = this;
        if (!gate || !internal) throw new Error(`schedule ${schedule.id} is gated but no gate kernel was loaded`);
        return this.launch({
          kernel: internal.gate, grid: 1, block: 1, sharedBytes: 0, stream, describe: 'gate',
          args: [{ kind: 'pointer', value: gate.device }, { kind: 'scalar', type: 'uint64', value: GATE_TIMEOUT_NS }],
        });
      }
      case 'empty': {
        if (!this.internal) throw new Error(`schedule ${schedule.id} launches empty kernels but none was loaded`);
        return this.launch({ kernel: this.internal.empty, grid: 1, block: 32, sharedBytes: 0, stream, describe: 'empty kernel', args: [] });
      }
      case 'host':
        throw new Error(`host-function ops are not issued by this executor yet (schedule ${schedule.id})`);
    }
  }

  private launch(spec: Parameters<CudaRuntime['launch']['record']>[0]): () => number {
    const record = this.rt.launch.record(spec);
    this.cleanup.push(() => record.free());
    return record.launch;
  }

  private kernelArgs(kernel: PlanKernel, op: KernelOp): KernelArgValue[] {
    return kernel.args.map((arg): KernelArgValue => {
      switch (arg.kind) {
        case 'buffer': {
          const binding = this.buffers.binding(arg.buffer);
          return { kind: 'pointer', value: offsetPointer(binding.device, op.deviceFirst * binding.buffer.elementBytes) };
        }
        case 'chunk-elements':
          return { kind: 'scalar', type: arg.type, value: op.count };
        case 'chunk-offset':
          return { kind: 'scalar', type: arg.type, value: op.first };
        case 'scalar':
          return arg;
      }
    });
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
