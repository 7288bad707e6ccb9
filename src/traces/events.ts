// The one event model of the analysis core: every trace format is read into it (formats/), and so is a Result's
// traced rep (src/analysis/rep-events.ts), so that the metrics, the replay and the findings never know which
// profiler wrote the file. Times are milliseconds on the trace's own clock: Kineto puts host and GPU events on one
// clock, so a launch and
// its kernel compare directly; cuda-pipe's own traces have no host calls.

export type GpuKind = 'kernel' | 'memcpy' | 'memset';
export type Direction = 'h2d' | 'd2h' | 'd2d' | 'p2p';
export type HostMemory = 'pinned' | 'pageable';

/** One piece of GPU work: a kernel, a copy or a memset, on one device and stream. */
export interface GpuEvent {
  readonly device: number;
  /** The profiler's stream id, as text: Kineto's are numbers, cuda-pipe's are names. */
  readonly stream: string;
  readonly kind: GpuKind;
  readonly start: number;
  readonly end: number;
  /** Bytes a copy or memset moved; null where the trace does not say. */
  readonly bytes: number | null;
  /** A copy's direction; null for kernels and memsets, and for copies whose direction the trace does not give. */
  readonly direction: Direction | null;
  /** The host side of an H2D or D2H copy; null where the trace does not say. */
  readonly hostMemory: HostMemory | null;
  readonly name: string;
  /** Links the work to the host call that issued it (Kineto's `args.correlation`). */
  readonly correlation: number | null;
  /** An NCCL kernel: communication, as Holistic Trace Analysis counts it. */
  readonly communication: boolean;
  /** When the host issued it, where the trace says (the end of its launch call, or cuda-pipe's `issuedMs`). */
  readonly issued: number | null;
  /** The trace's legacy default stream, where the format has one. */
  readonly defaultStream: boolean;
  /**
   * What issued it in the program's own terms: the PyTorch op (`aten::copy_`) or the NVTX / record_function range
   * around its launch, where the trace has one; a finding names it.
   */
  readonly label?: string | null;
  /** A kernel's launch shape, where the trace gives it: what it asks of each multiprocessor (contention.ts). */
  readonly launch?: LaunchShape | null;
}

/** A kernel's grid and what each of its blocks holds on a multiprocessor. */
export interface LaunchShape {
  readonly blocks: number;
  readonly threadsPerBlock: number;
  readonly registersPerThread: number;
  readonly sharedBytesPerBlock: number;
}

/** A device's multiprocessors and what each holds, where the trace gives them (Kineto's `deviceProperties`). */
export interface DeviceShape {
  readonly index: number;
  readonly multiprocessors: number;
  readonly registersPerSm: number;
  readonly sharedBytesPerSm: number;
  readonly threadsPerSm: number;
}

/** A host call into CUDA: a launch (a kernel, a copy, a memset) or a synchronize. */
export interface HostCall {
  readonly kind: 'launch' | 'sync';
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly correlation: number | null;
  /** The host thread that made the call, where the trace says: calls of one thread run one after another. */
  readonly thread?: number | null;
}

/**
 * A step as the trace marks it. `host`: a span of host time (a `ProfilerStep#N` on the CPU), whose GPU time is that of
 * the work launched within it; `gpu`: a span of one device's GPU time (`gpu_user_annotation`, a cuda-pipe rep).
 */
export interface StepMark {
  readonly name: string;
  readonly clock: 'host' | 'gpu';
  /** The device a GPU span belongs to; null for host spans, which hold for every device. */
  readonly device: number | null;
  readonly start: number;
  readonly end: number;
}

export interface ParsedTrace {
  readonly file: string;
  /** The id of the format it was read from, a row of formats/index.ts. */
  readonly format: string;
  /** `distributedInfo.rank`; null where the trace does not give one (an nsys export never does). */
  readonly rank: number | null;
  readonly gpu: readonly GpuEvent[];
  readonly host: readonly HostCall[];
  readonly steps: readonly StepMark[];
  /** What the reader could not take from this format, in words, for the document's notes. */
  readonly notes: readonly string[];
  /** The devices' multiprocessors, where the trace gives them. */
  readonly devices?: readonly DeviceShape[];
  /** Where the times count from on the host's clock, in ms (Kineto's baseTimeNanoseconds); null or absent: unknown. */
  readonly clockBaseMs?: number | null;
}
