import type { CudaRuntime } from '../../cuda/runtime.js';
import type { DevicePtr, EventHandle, HostPtr, StreamHandle } from '../../cuda/types.js';
import type { Plan, PlanOp, Schedule, WorkOpBase } from '../../model/schedule.js';
import type { TracedRepBase } from '../../model/timeline.js';
import type { KindFlagValues } from './flags.js';

// How a stage kind's ops are issued: through the CUDA runtime's own calls (`issue`), or through a runtime of its own
// that exec/ opens for a plan with its ops (`runtime`: its handles, communicators or pools, made once and disposed
// with the run's clean-up). The runtime is imported lazily, so that describing, planning and drawing never load a
// native library. A runtime may also start before any device (a worker pool) and take part in binding a schedule
// and in each of its reps (the host stage's loader and workers).

/** An issued call: returns the raw cudaError_t, so the timed loop only calls and compares. */
export type Thunk = () => number;

/** An issued op, and the tag of its host call where it runs one on the host (read back for when it ran). */
export interface IssuedOp {
  readonly issue: Thunk;
  readonly hostTag: number | null;
}

/**
 * The device layer in the plan's terms, bound by exec/ to one op's stream and device: buffers by name, devices by
 * index. These are the CUDA runtime's own calls, which exec/issue.ts implements; a kind that calls a library issues
 * through its own runtime instead (`KindRuntime`), made once when the run opens, so a graph capture records its
 * call like any other.
 */
export interface RuntimePrimitives {
  copy(spec: {
    readonly buffer: string;
    readonly hostOffset: number;
    readonly deviceOffset: number;
    readonly bytes: number;
    readonly direction: 'h2d' | 'd2h';
  }): Thunk;
  peerCopy(spec: {
    readonly buffer: string;
    readonly from: number;
    readonly to: number;
    readonly deviceOffset: number;
    readonly bytes: number;
  }): Thunk;
  kernel(spec: {
    readonly kernel: string;
    readonly first: number;
    readonly count: number;
    readonly deviceFirst: number;
  }): Thunk;
}

/** This process within a launch, from the launcher's environment and the flags. */
export interface Launch {
  /** Rank and size under a launcher; null where none started this process. */
  readonly identity: { readonly rank: number | null; readonly size: number | null; readonly jobId: string | null };
  /** How long a rank waits for the others to meet, ms. */
  readonly timeoutMs?: number | undefined;
}

/** A process no launcher started: it is every rank there is. */
export const NOT_LAUNCHED: Launch = { identity: { rank: null, size: null, jobId: null } };

/**
 * How the ranks of a launch decide each repeated choice (another warm-up, another rep, a traced rep or none) the
 * same way: each rank votes, and a vote is carried where any rank cast it. A rank that decided alone would call a
 * collective that no other rank matches.
 */
export interface Agreement {
  /** Element i is true on every rank when some rank's `votes[i]` is true. `about` names the decision for a failure. */
  any(votes: readonly boolean[], about: string): Promise<boolean[]>;
}

/**
 * What every wait on a rep with the kind's ops asks, for a library whose work may never end by itself (a
 * collective whose peer stopped): its asynchronous failures, and how to let go of the GPU at a deadline or a signal.
 */
export interface RepWatch {
  /** The library's asynchronous failure (a peer that failed), named; null while there is none. */
  failure(): (Error & { readonly hint?: string | undefined }) | null;
  /** Lets go of the GPU (aborts the library's work in flight), once. */
  abortAll(): void;
  /** Waits, yielding to the event loop, until a call the library finishes on its own thread is enqueued. */
  settle(
    what: string,
    options: { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined },
  ): Promise<void>;
  /** The words of a message about it: what may not end, who it waits for, and what abortAll did. */
  readonly words: { readonly work: string; readonly waiting: string; readonly aborted: string };
}

/** What a kind's runtime is started with, before any device is opened. */
export interface StartContext {
  readonly plan: Plan;
  readonly signal?: AbortSignal | undefined;
}

/** What a kind's `start` began: ended once the run is over, before its clean-up frees memory it may read. */
export interface RuntimeStart {
  stop(): Promise<void>;
}

/** The plan's buffers in host memory, which every device shares. */
export interface HostBuffers {
  /** The buffers a run writes back to the host. */
  outputs(): readonly { readonly name: string; readonly itemSize: number; readonly elementBytes: number }[];
  /** A buffer's host memory. */
  host(name: string): HostPtr;
  /** Views of bytes [offset, offset + bytes) of a buffer's host memory, in windows a typed array can hold. */
  windows(name: string, offset: number, bytes: number): Uint8Array[];
}

/**
 * What a kind's runtime is opened with, once per run, before any schedule is bound: the device layer, the clean-up
 * its resources are released by (in reverse order of `push`), and every op of its kind the plan holds, so that it
 * can size or agree on what they need up front.
 */
export interface OpenContext<O extends WorkOpBase = WorkOpBase> {
  readonly rt: CudaRuntime;
  readonly cleanup: { push(release: () => void): void };
  /** The plan's devices, the first first. */
  readonly devices: readonly number[];
  /** Compute capability of each device, by index: what a kind checks a data type against. */
  capability(device: number): { readonly major: number; readonly minor: number };
  /** The kind's ops, every schedule's, in plan order. */
  readonly ops: readonly O[];
  /** The schedules holding the kind's ops: how each is issued, and its description for messages. */
  readonly schedules: readonly { readonly description: string; readonly issue: 'stream' | 'graph' }[];
  /** The plan's ring of device slots, where it has one. */
  readonly ring: { readonly slots: number } | null;
  /** How this process's rank meets the others of a launch (mpirun, srun), for a kind that spans ranks. */
  readonly launch: Launch;
  /** The values of the kinds' own flags (flags.ts) the command was given; absent: none. */
  readonly flags?: KindFlagValues;
  readonly signal?: AbortSignal | undefined;
  /**
   * The plan whole, for a runtime that reads more than its ops (the config's stage functions, the schedules' chunks).
   */
  readonly plan?: Plan;
  /** The plan's buffers in host memory, for a runtime that works on a chunk's bytes there. */
  readonly hostBuffers?: HostBuffers;
  /** What each kind's `start` began before the device was opened, by kind id. */
  readonly started?: ReadonlyMap<string, RuntimeStart>;
}

/**
 * Where one op is bound, once, when its schedule is prepared (outside the timed loop): its stream and device, and the
 * device memory of the plan's buffers on that device.
 */
export interface IssueSite {
  readonly stream: StreamHandle;
  readonly device: number;
  /** The schedule's description, for messages ("overlapped, 4 streams × 16 chunks"). */
  readonly schedule: string;
  /**
   * The schedule's id and its chunks' item ranges: where a chunk's bytes are, for a kind that works on them on the
   * host.
   */
  readonly scheduleId: string;
  readonly ranges: Schedule['ranges'];
  /** The device address of a buffer's element on this op's device. */
  address(buffer: string, elementOffset: number): DevicePtr;
  /** A buffer's element type and size. */
  buffer(name: string): { readonly type: string; readonly elementBytes: number };
  /**
   * Runs `make` with this op's device current (a handle or workspace belongs to the device current when it is made).
   */
  onDevice<T>(make: () => T): T;
  /**
   * A host function on this op's stream (cudaLaunchHostFunc through the runner's one trampoline, exec/host-calls.ts),
   * with the tag a traced rep reads its times by. It runs on the JS thread, which must then never wait synchronously.
   */
  hostCall(action: () => void): IssuedOp;
}

/** A schedule's ops bound to their calls, as the issuer hands them to a kind's part. */
export interface BoundThunks {
  readonly ops: readonly PlanOp[];
  readonly thunks: readonly Thunk[];
  /** The stream each thunk issues on. */
  readonly opStreams: readonly StreamHandle[];
  readonly start: EventHandle;
  readonly end: EventHandle;
  /** Index of the thunk that records `start`. */
  readonly startIndex: number;
  /**
   * The thunk where op i's issue begins: its own, or in a traced rep the record of its span's begin event just before
   * it.
   */
  issueBegins(i: number): number;
}

/** What a kind's own work in one rep came to, as its `end` returns it. */
export interface KindRepEnd {
  /** The kind's id: whose `reps` summarises the record. */
  readonly kind: string;
  /**
   * When the kind's work in the rep ended, ms from the GPU's start (host clock): the rep lasts until the later of this
   * and its end event.
   */
  readonly endMs: number;
  /** The kind's record of the rep (the host stage's tasks), which its `reps` makes a mode's fields of. */
  readonly record: unknown;
  /** Its work on a traced rep's timeline (each task on its worker), on the rep's clock. */
  readonly workerTasks?: TracedRepBase['workerTasks'];
}

/** One rep, as the kind follows it. */
export interface KindRep {
  /** Before thunk i is issued: what it must wait for (a chunk's fill), or null to issue it at once. */
  ready(i: number): Promise<void> | null;
  /** Thunk i was issued and succeeded. */
  issued(i: number): void;
  /** The rep failed while it was issued: what the kind handed out stops waiting, and has ended when this resolves. */
  abandon(): Promise<void>;
  /**
   * Waits for the rep (`waitEnd`: the runner's wait for its end event) and for the kind's own work in it, and returns
   * what that work came to, on a clock whose zero is `gpuStartMs` (performance.now()); undefined: nothing to record.
   */
  end(waitEnd: () => Promise<void>, gpuStartMs: number): Promise<KindRepEnd | undefined>;
}

/**
 * A kind's hooks in each rep of one prepared schedule. A schedule with none is issued by the runner's bare loop; the
 * runner decides which loop once per rep, never per op.
 */
export interface RepHooks {
  /**
   * A rep starts: `failure` names an error as the runner names any other of the rep (its mode, the kernels in flight);
   * `deadlineMs` is the rep's deadline (Infinity for none), which bounds the kind's own work in it too.
   */
  begin(failure: (error: unknown) => Error, deadlineMs: number): KindRep;
}

/** A kind's part in one prepared schedule. */
export interface SchedulePart {
  /**
   * Where an H2D copy reads from while the schedule's ops are bound (a loader's ring); null: the buffer's own host
   * memory.
   */
  hostSource(copy: { readonly buffer: string; readonly hostOffset: number; readonly bytes: number }): HostPtr | null;
  /**
   * Every op bound: the thunks as the rep issues them (the kind may wrap some), and its hooks in each rep; null: none.
   */
  bound(schedule: BoundThunks): { readonly thunks: readonly Thunk[]; readonly rep: RepHooks | null };
}

/** A kind's runtime for one run: what binds each of its ops to the call the timed loop makes. */
export interface KindRuntime<O extends WorkOpBase = WorkOpBase> {
  /** Where this process is one rank of a launch: how its decisions are agreed with the other ranks. */
  readonly agreement?: Agreement | undefined;
  /** What every wait on a rep with the kind's ops watches. */
  readonly watch?: RepWatch;
  /**
   * The Result's sections the runtime fills (its `result` fragment's fields), and what the Result's notes say of it.
   */
  readonly record?: { readonly sections: Readonly<Record<string, unknown>>; readonly notes: readonly string[] };
  /**
   * The op bound to its site. The thunk returns 0, or a cudaError_t; a library that answers with a status of its
   * own throws the failure, naming the op, and the runner reports it as it reports a CUDA error.
   */
  issue(op: O, site: IssueSite): IssuedOp;
  /**
   * The kind's part in a schedule the runner prepares (once, outside the timed loop), called before its ops are
   * bound; null where it takes none. `ops` are every op the rep issues, prologue and epilogue included, in order.
   */
  prepareSchedule?(schedule: Schedule, ops: readonly PlanOp[]): SchedulePart | null;
}

/**
 * What a thunk returns where the library took the call but finishes enqueueing it on its own thread (a nonblocking
 * NCCL communicator): the runner then waits on the kind's `watch.settle` before the next op. No cudaError_t is
 * negative, and exec/wait.ts's TIMED_OUT is -1.
 */
export const PENDING = -2;

/** The module holding a kind's runtime, imported when a plan has ops of the kind. */
export interface KindRuntimeModule<O extends WorkOpBase = WorkOpBase> {
  /** Loads its library, before any device is opened: a missing one is named first (exit 3), whatever else is wrong. */
  load?(): void;
  /**
   * Starts what the runtime needs that no device does and whose failure is the config's (a worker pool loading the
   * user's modules), before any device is opened and after every kind's library loaded, so that it is named first
   * (exit 2), before anything is compiled or allocated. `open` finds it in `context.started`.
   */
  start?(context: StartContext): Promise<RuntimeStart>;
  open(context: OpenContext<O>): KindRuntime<O> | Promise<KindRuntime<O>>;
}

export interface KindRun<O extends WorkOpBase = WorkOpBase, P = RuntimePrimitives> {
  /** A kind the runtime's own calls issue (copies, kernels, peer copies): binds the op to them. */
  issue?(op: O, primitives: P): IssuedOp;
  /** A kind that issues through a library: its runtime, which exec/ opens for a plan with its ops. */
  readonly runtime?: () => Promise<KindRuntimeModule<O>>;
  /**
   * What its runtime's `start` would refuse in the plan, checked without starting anything: a dry run starts no
   * runtime, yet names the same config errors (exit 2).
   */
  preflight?(plan: Plan): void;
}
