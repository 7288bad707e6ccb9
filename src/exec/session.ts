import type { ConfigBuffer } from '../config/load.js';
import { CudaError, CUDA_ERROR } from '../cuda/error.js';
import { allocPageable, freePageable, hostBytes } from '../cuda/host.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import {
  DEFAULT_STREAM,
  type DevicePtr,
  type EventHandle,
  type HostPtr,
  type KernelArgValue,
  type KernelHandle,
  offsetPointer,
  type StreamHandle,
} from '../cuda/types.js';
import { DeviceFailure } from '../errors.js';
import type { Op, Plan, PlanKernel, Schedule } from '../plan/types.js';
import type { DeviceFacts } from '../result.js';
import { formatBytes } from '../report/format.js';
import { Cleanup } from './cleanup.js';
import { fillPattern } from './patterns.js';

interface BufferBinding {
  readonly buffer: ConfigBuffer;
  readonly host: HostPtr;
  readonly device: DevicePtr;
  /** Initial contents of an inout buffer, which each rep's D2H overwrites on the host. */
  readonly pristine: Uint8Array | null;
}

interface PreparedSchedule {
  readonly schedule: Schedule;
  /** One closure per op, returning the raw cudaError_t: the timed loop only calls and compares. */
  readonly issues: ReadonlyArray<() => number>;
  readonly opStreams: readonly StreamHandle[];
  readonly start: EventHandle;
  readonly end: EventHandle;
}

/** Generous: a rep's ops are issued in milliseconds; only a host that never releases the gate meets it. */
const GATE_TIMEOUT_NS = 2_000_000_000;

export interface RepTiming {
  /** GPU time between the start and end events. */
  readonly gpuMs: number;
  /** Host time spent in the issue loop (a host timer: issue cost only, never GPU time). */
  readonly hostIssueMs: number;
  /** The gate gave up before the host released it, so this rep's time includes issue cost after all. */
  readonly gateTimedOut: boolean;
}

/**
 * A Plan bound to one device: buffers allocated and initialised, streams and events created, every launch record
 * and copy prepared. Everything allocated is released by `close()`, also after a failure half-way through.
 */
export class PipelineSession {
  private readonly cleanup = new Cleanup();
  private readonly buffers = new Map<string, BufferBinding>();
  private readonly prepared = new Map<string, PreparedSchedule>();
  /** After an illegal address or launch failure the context is unusable; freeing would only add errors. */
  private contextLost = false;
  /** [release, timed out] in host-mapped memory, read by the gate kernel. */
  private gateFlags: { host: Uint32Array; device: DevicePtr } | null = null;

  private constructor(
    private readonly rt: CudaRuntime,
    readonly plan: Plan,
    private readonly device: DeviceFacts,
    private readonly gateKernel: KernelHandle | null,
  ) {}

  /** Pass `gateKernel` (compiled from kernels/internal/gate.cu) when a schedule is gated. */
  static open(
    rt: CudaRuntime,
    plan: Plan,
    device: DeviceFacts,
    kernels: ReadonlyMap<string, KernelHandle>,
    gateKernel: KernelHandle | null = null,
  ): PipelineSession {
    const session = new PipelineSession(rt, plan, device, gateKernel);
    try {
      rt.setDevice(plan.device);
      session.allocate();
      if (gateKernel) session.allocateGate();
      for (const schedule of plan.schedules) session.prepared.set(schedule.id, session.prepare(schedule, kernels));
      return session;
    } catch (error) {
      session.close();
      throw error;
    }
  }

  private allocate(): void {
    const deviceBytes = this.plan.buffers.reduce((sum, b) => sum + b.bytes, 0);
    const { free, total } = this.rt.memInfo();
    if (deviceBytes > free) {
      throw new DeviceFailure(
        `The buffers need ${formatBytes(deviceBytes)} of device memory, but device ${this.plan.device} has ${formatBytes(free)} free of ${formatBytes(total)}.`,
        { hint: 'Use smaller buffers (count or size in the config), or free memory held by other processes (nvidia-smi).' },
      );
    }
    for (const buffer of this.plan.buffers) {
      // Scratch buffers live on the device only; host pointer 0 is never used because no copy names them.
      const host = buffer.role === 'scratch' ? (0n as HostPtr) : this.allocHost(buffer);
      const device = this.rt.malloc(buffer.bytes, `buffer "${buffer.name}", ${formatBytes(buffer.bytes)}`);
      this.cleanup.push(() => this.rt.free(device));
      let pristine: Uint8Array | null = null;
      if (buffer.role === 'in' || buffer.role === 'inout') {
        const view = hostBytes(host, buffer.bytes);
        fillPattern(view, buffer.type, buffer.init);
        if (buffer.role === 'inout') pristine = new Uint8Array(view);
      }
      this.buffers.set(buffer.name, { buffer, host, device, pristine });
    }
  }

  private allocateGate(): void {
    const host = this.rt.hostAlloc(8, 'mapped');
    this.cleanup.push(() => this.rt.freeHost(host));
    const bytes = hostBytes(host, 8);
    this.gateFlags = { host: new Uint32Array(bytes.buffer, bytes.byteOffset, 2), device: this.rt.devicePointerOf(host) };
  }

  private allocHost(buffer: ConfigBuffer): HostPtr {
    const bytes = buffer.bytes;
    switch (buffer.hostMemory) {
      case 'pinned':
      case 'write-combined': {
        const host = this.rt.hostAlloc(bytes, buffer.hostMemory);
        this.cleanup.push(() => this.rt.freeHost(host));
        return host;
      }
      case 'pageable': {
        const host = allocPageable(bytes);
        this.cleanup.push(() => freePageable(host));
        return host;
      }
      case 'registered': {
        const host = allocPageable(bytes);
        this.cleanup.push(() => freePageable(host));
        this.rt.hostRegister(host, bytes);
        this.cleanup.push(() => this.rt.hostUnregister(host));
        return host;
      }
    }
  }

  private prepare(schedule: Schedule, kernels: ReadonlyMap<string, KernelHandle>): PreparedSchedule {
    const streams = new Map<string, StreamHandle>();
    for (const spec of schedule.streams) {
      const stream = this.rt.createStream({ nonBlocking: spec.flags === 'non-blocking', ...(spec.priority === undefined ? {} : { priority: spec.priority }) });
      this.cleanup.push(() => this.rt.destroyStream(stream));
      streams.set(spec.id, stream);
    }
    const events = new Map<string, EventHandle>();
    for (const spec of schedule.events) {
      const event = this.rt.createEvent({ timing: spec.timing });
      this.cleanup.push(() => this.rt.destroyEvent(event));
      events.set(spec.id, event);
    }
    const lookup = <T>(map: Map<string, T>, id: string, what: string): T => {
      const value = map.get(id);
      if (value === undefined) throw new Error(`schedule ${schedule.id} names unknown ${what} ${id}`);
      return value;
    };
    const issues: Array<() => number> = [];
    const opStreams: StreamHandle[] = [];
    for (const op of schedule.ops) {
      const stream = lookup(streams, op.stream, 'stream');
      opStreams.push(stream);
      issues.push(this.prepareOp(op, stream, schedule, (id) => lookup(events, id, 'event'), kernels));
    }
    return { schedule, issues, opStreams, start: lookup(events, schedule.start, 'event'), end: lookup(events, schedule.end, 'event') };
  }

  private prepareOp(
    op: Op,
    stream: StreamHandle,
    schedule: Schedule,
    event: (id: string) => EventHandle,
    kernels: ReadonlyMap<string, KernelHandle>,
  ): () => number {
    switch (op.kind) {
      case 'copy': {
        const binding = this.binding(op.buffer);
        const host = offsetPointer(binding.host, op.hostOffset);
        const device = offsetPointer(binding.device, op.deviceOffset);
        return op.direction === 'h2d'
          ? this.rt.copyThunk(device, host, op.bytes, 'h2d', stream)
          : this.rt.copyThunk(host, device, op.bytes, 'd2h', stream);
      }
      case 'kernel': {
        const kernel = this.plan.kernels.find((k) => k.label === op.kernel);
        const handle = kernels.get(op.kernel);
        if (!kernel || handle === undefined) throw new Error(`schedule ${schedule.id} names unknown kernel ${op.kernel}`);
        const record = this.rt.launchRecord({
          kernel: handle,
          grid: gridSize(kernel, op.count, this.device),
          block: kernel.block,
          sharedBytes: 0,
          stream,
          args: this.kernelArgs(kernel, op),
          describe: `kernel ${kernel.label}`,
        });
        this.cleanup.push(() => record.free());
        return record.launch;
      }
      case 'record':
        return this.rt.recordThunk(event(op.event), stream);
      case 'wait':
        return this.rt.waitThunk(stream, event(op.event));
      case 'gate': {
        if (!this.gateKernel || !this.gateFlags) throw new Error(`schedule ${schedule.id} is gated but the session has no gate kernel`);
        const record = this.rt.launchRecord({
          kernel: this.gateKernel, grid: 1, block: 1, sharedBytes: 0, stream, describe: 'gate',
          args: [{ kind: 'pointer', value: this.gateFlags.device }, { kind: 'scalar', type: 'uint64', value: GATE_TIMEOUT_NS }],
        });
        this.cleanup.push(() => record.free());
        return record.launch;
      }
      case 'host':
        throw new Error(`host-function ops are not supported by this executor yet (schedule ${schedule.id})`);
    }
  }

  private kernelArgs(kernel: PlanKernel, op: Extract<Op, { kind: 'kernel' }>): KernelArgValue[] {
    return kernel.args.map((arg): KernelArgValue => {
      switch (arg.kind) {
        case 'buffer': {
          const binding = this.binding(arg.buffer);
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

  private binding(name: string): BufferBinding {
    const binding = this.buffers.get(name);
    if (!binding) throw new Error(`unknown buffer ${name}`);
    return binding;
  }

  private schedule(id: string): PreparedSchedule {
    const prepared = this.prepared.get(id);
    if (!prepared) throw new Error(`no schedule ${id} in plan ${this.plan.name}`);
    return prepared;
  }

  /**
   * Issues one rep and waits for its end event. `checked` synchronises after every op so that a fault names the
   * op that caused it; it serialises the streams, so checked reps are never timed or verified.
   */
  runRep(id: string, options: { checked?: boolean } = {}): RepTiming {
    const prepared = this.schedule(id);
    const { issues } = prepared;
    const gate = prepared.schedule.gated ? this.gateFlags : null;
    if (gate) gate.host.fill(0);
    const issueStart = performance.now();
    try {
      for (let i = 0; i < issues.length; i++) {
        const code = (issues[i] as () => number)();
        if (code !== 0) throw this.opFailure(prepared, i, code, 'issuing');
        if (options.checked) {
          const sync = this.rt.streamSynchronizeCode(prepared.opStreams[i] as StreamHandle);
          if (sync !== 0) throw this.opFailure(prepared, i, sync, 'running');
        }
      }
    } finally {
      // Released on failure too, so that a rep that dies half-issued does not leave the gate spinning.
      if (gate) Atomics.store(gate.host, 0, 1);
    }
    const hostIssueMs = performance.now() - issueStart;
    try {
      this.rt.eventSynchronize(prepared.end);
    } catch (error) {
      throw this.repFailure(prepared, error);
    }
    return { gpuMs: this.rt.elapsedMs(prepared.start, prepared.end), hostIssueMs, gateTimedOut: gate !== null && gate.host[1] === 1 };
  }

  private opFailure(prepared: PreparedSchedule, index: number, code: number, phase: 'issuing' | 'running'): Error {
    const op = prepared.schedule.ops[index];
    const error = this.rt.failure(code, phase === 'issuing' ? 'issuing an op' : 'cudaStreamSynchronize');
    if (!op) return error;
    this.noteContextLoss(code);
    const what = describeOp(op, this.plan);
    const message = `${error instanceof CudaError ? `${error.errorName} (${error.code}): ${error.errorMessage}` : error.message} ` +
      `while ${phase} ${what} on stream ${op.stream} of the ${prepared.schedule.id} mode.`;
    return new DeviceFailure(message, {
      hint: op.kind === 'kernel'
        ? 'Check the kernel\'s indexing against the chunk\'s element count it is given, or run it under compute-sanitizer.'
        : undefined,
      cause: error,
    });
  }

  private repFailure(prepared: PreparedSchedule, error: unknown): Error {
    if (error instanceof CudaError) {
      this.noteContextLoss(error.code);
      const kernels = [...new Set(prepared.schedule.ops.filter((o) => o.kind === 'kernel').map((o) => (o as { kernel: string }).kernel))];
      return new DeviceFailure(
        `${error.errorName} (${error.code}): ${error.errorMessage} during the ${prepared.schedule.id} mode` +
          (kernels.length ? ` (kernels in flight: ${kernels.join(', ')}).` : '.'),
        { cause: error },
      );
    }
    return error as Error;
  }

  private noteContextLoss(code: number): void {
    // 700 to 799 are the errors a kernel leaves behind (illegal address, launch failure, trap...): the context is
    // unusable from then on.
    if (code >= CUDA_ERROR.illegalAddress && code < 800) this.contextLost = true;
  }

  /** Host bytes of a buffer; valid until close(). */
  hostView(name: string): Uint8Array {
    const binding = this.binding(name);
    return hostBytes(binding.host, binding.buffer.bytes);
  }

  /** Puts inout buffers back to their initial contents (each rep's D2H overwrote them). */
  restoreInputs(): void {
    for (const binding of this.buffers.values()) {
      if (binding.pristine) this.hostView(binding.buffer.name).set(binding.pristine);
    }
  }

  /** Fills every out buffer with `byte`, on the host and on the device, so unwritten elements show. */
  poisonOutputs(byte: number): void {
    for (const binding of this.buffers.values()) {
      if (binding.buffer.role !== 'out') continue;
      this.hostView(binding.buffer.name).fill(byte);
      this.rt.memset(binding.device, byte, binding.buffer.bytes, DEFAULT_STREAM);
    }
    this.rt.deviceSynchronize('poisoning outputs');
  }

  outputs(): ConfigBuffer[] {
    return this.plan.buffers.filter((b) => b.role === 'out' || b.role === 'inout');
  }

  close(): void {
    const errors = this.cleanup.run();
    this.buffers.clear();
    this.prepared.clear();
    if (errors.length && !this.contextLost) throw errors[0];
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

export function describeOp(op: Op, plan: Pick<Plan, 'layout' | 'kernels'>): string {
  const chunk = (c: number | null) => (c === null ? 'whole buffers' : `chunk ${c} of ${plan.layout.chunks}`);
  switch (op.kind) {
    case 'kernel': {
      const kernel = plan.kernels.find((k) => k.label === op.kernel);
      return `kernel ${op.kernel}${kernel && kernel.entry !== op.kernel ? ` (${kernel.entry})` : ''}, ${chunk(op.chunk)} (elements ${op.first} to ${op.first + op.count - 1})`;
    }
    case 'copy':
      return `${op.direction.toUpperCase()} of "${op.buffer}", ${chunk(op.chunk)} (${formatBytes(op.bytes)})`;
    case 'record':
      return `the record of event ${op.event}`;
    case 'wait':
      return `the wait on event ${op.event}`;
    case 'host':
      return `host function ${op.name}`;
    case 'gate':
      return 'the gate kernel';
  }
}

