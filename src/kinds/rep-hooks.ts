import type { EventHandle, HostPtr, StreamHandle } from '../cuda/types.js';
import type { CpuStageTiming } from '../measure/runner.js';
import type { Op, Plan, Schedule } from '../plan/types.js';
import type { IssuedOp, Thunk, WorkOpBase } from './kind.js';

// The hooks of a kind whose runtime takes part in binding a schedule and in each of its reps (the host stage: its
// worker pool, started before any device, chunks handed to it after their D2H, a loader's fills ahead of their H2D).
// A module augmentation adds their members to kind.ts's interfaces, so that they read as one.

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

/** A kind's part in one prepared schedule. */
export interface SchedulePart {
  /** Where an H2D copy reads from while the schedule's ops are bound (a loader's ring); null: the buffer's own host memory. */
  hostSource(copy: { readonly buffer: string; readonly hostOffset: number; readonly bytes: number }): HostPtr | null;
  /** Every op bound: the thunks as the rep issues them (the kind may wrap some), and its hooks in each rep; null: none. */
  bound(schedule: BoundThunks): { readonly thunks: readonly Thunk[]; readonly rep: RepHooks | null };
}

/** A schedule's ops bound to their calls, as the issuer hands them to a kind's part. */
export interface BoundThunks {
  readonly ops: readonly Op[];
  readonly thunks: readonly Thunk[];
  /** The stream each thunk issues on. */
  readonly opStreams: readonly StreamHandle[];
  readonly start: EventHandle;
  readonly end: EventHandle;
  /** Index of the thunk that records `start`. */
  readonly startIndex: number;
  /** The thunk where op i's issue begins: its own, or in a traced rep the record of its span's begin event just before it. */
  issueBegins(i: number): number;
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
   * the rep's CPU-stage timing (the Result's), on a clock whose zero is `gpuStartMs` (performance.now()).
   */
  end(waitEnd: () => Promise<void>, gpuStartMs: number): Promise<CpuStageTiming | undefined>;
}

declare module './kind.js' {
  interface KindRuntimeModule<O extends WorkOpBase = WorkOpBase> {
    /**
     * Starts what the runtime needs that no device does and whose failure is the config's (a worker pool loading the
     * user's modules), before any device is opened, so that it is named first (exit 2), before anything is compiled or
     * allocated. `open` finds it in `context.started`.
     */
    start?(context: StartContext): Promise<RuntimeStart>;
  }

  interface OpenContext<O extends WorkOpBase = WorkOpBase> {
    /** The plan whole, for a runtime that reads more than its ops (the config's stage functions, the schedules' chunks). */
    readonly plan?: Plan;
    /** The plan's buffers in host memory, for a runtime that works on a chunk's bytes there. */
    readonly hostBuffers?: HostBuffers;
    /** What each kind's `start` began before the device was opened, by kind id. */
    readonly started?: ReadonlyMap<string, RuntimeStart>;
  }

  interface IssueSite {
    /** The schedule's id and its chunks' item ranges: where a chunk's bytes are, for a kind that works on them on the host. */
    readonly scheduleId: string;
    readonly ranges: Schedule['ranges'];
    /**
     * A host function on this op's stream (cudaLaunchHostFunc through the runner's one trampoline, exec/host-calls.ts),
     * with the tag a traced rep reads its times by. It runs on the JS thread, which must then never wait synchronously.
     */
    hostCall(action: () => void): IssuedOp;
  }

  interface KindRuntime<O extends WorkOpBase = WorkOpBase> {
    /**
     * The kind's part in a schedule the runner prepares (once, outside the timed loop), called before its ops are
     * bound; null where it takes none. `ops` are every op the rep issues, prologue and epilogue included, in order.
     */
    prepareSchedule?(schedule: Schedule, ops: readonly Op[]): SchedulePart | null;
  }
}
