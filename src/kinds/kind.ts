// What a stage kind is. A kind is a description, which the planner, the analysis and the renderers read (its op, how
// it is planned, described, traced, modelled and drawn: pure data and pure functions), and, for a kind that issues
// through a library, a runtime that exec/ opens for a plan with its ops (`KindRuntimeModule`: its handles,
// communicators or pools, made once and disposed with the run's clean-up, and the call each op issues). The runtime
// is imported lazily, so that describing, planning and drawing never load a native library. A kind lives in its own
// folder, src/kinds/<kind>/, and ./index.ts is the one list of kinds: the core loops over it and names no kind.

import type { ZodRawShape, ZodType } from 'zod';
import type { CudaRuntime } from '../cuda/runtime.js';
import type { DevicePtr, StreamHandle } from '../cuda/types.js';
import type { Schedule } from '../plan/types.js';
import type { ModeResult } from '../result/mode.js';
import type { RunResult } from '../result/schema.js';
import type { KindPasses, ModeLineContext, OutputCheck, ReportSection } from './hooks.js';
import type { KindTerm, ModelResource } from './model.js';

export type {
  BodyPassFacts,
  CheckFacts,
  CheckRecord,
  Comparisons,
  KindPasses,
  ModeLineContext,
  OutputCheck,
  PassedBody,
  PlanPassContext,
  ReportContext,
  ReportSection,
} from './hooks.js';
export type { KindTerm, ModelParts, ModelResource, TermContext, TermWords } from './model.js';

/** The fields every work op has: the stream it is issued on, and the chunk it works on (null: the whole buffers). */
export interface WorkOpBase {
  readonly kind: string;
  readonly stream: string;
  readonly chunk: number | null;
}

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
  copy(spec: { readonly buffer: string; readonly hostOffset: number; readonly deviceOffset: number; readonly bytes: number; readonly direction: 'h2d' | 'd2h' }): Thunk;
  peerCopy(spec: { readonly buffer: string; readonly from: number; readonly to: number; readonly deviceOffset: number; readonly bytes: number }): Thunk;
  kernel(spec: { readonly kernel: string; readonly first: number; readonly count: number; readonly deviceFirst: number }): Thunk;
}

/** What a library stage reads of a config buffer when it resolves its entry. */
export interface StepBuffer {
  readonly name: string;
  readonly type: string;
  readonly role: string;
  readonly elementBytes: number;
  /** Elements per item of a chunked buffer (1 where the config does not chunk by items). */
  readonly itemSize: number;
  /** Elements in the whole buffer: what a library call's operands are checked against. */
  readonly elements: number;
}

/**
 * A compute kind's entry in the config's `kernels:` list, other than a kernel's: the key that marks it (`gemm:`),
 * its zod schema, which config/schema.ts composes into the list, its label, and its resolution against the buffers
 * (its spec, or what is wrong and at which field path under the entry).
 */
export interface StepConfig<Entry> {
  readonly key: string;
  readonly schema: ZodType<Entry>;
  label(entry: Entry): string;
  resolve(entry: Entry, buffers: readonly StepBuffer[]): { readonly spec: unknown } | { readonly error: string; readonly path: readonly (string | number)[] };
}

/**
 * One step of a chunk's compute phase, as the config lists it: the stage kind that plans it (`kernel`, or a library
 * stage such as `gemm`), its label, and what that kind resolved from its config entry (null for a kernel, whose
 * launch is in the plan's kernel list). Each kind reads only its own steps' `spec`.
 */
export interface ComputeStep {
  readonly stage: string;
  readonly label: string;
  readonly spec: unknown;
}

/** One chunk of the pipeline as the planner hands it to each stage kind: what the stage plans its ops from. */
export interface ChunkWork {
  readonly buffers: readonly { readonly name: string; readonly role: string; readonly elementBytes: number; readonly itemSize: number }[];
  /** The compute steps this chunk runs, in the config's order; each is planned by its own stage kind. */
  readonly compute: readonly ComputeStep[];
  /** The host stage's name, or null where the config has none. */
  readonly host: string | null;
  /** Items (elements where a config has no pipeline.items): buffer b's elements are the range × b.itemSize. */
  readonly range: { readonly first: number; readonly count: number };
  /** Item index in the device buffers where this chunk lives (its own range, or its slot of a ring). */
  readonly deviceFirst: number;
  readonly stream: string;
  readonly chunk: number | null;
}

/** What describing an op needs beyond the op: the kernels' entry names, and a chunk in words. */
export interface DescribeContext {
  readonly kernels: readonly { readonly label: string; readonly entry: string }[];
  /** "chunk 3 of 16", or "whole buffers". */
  chunk(chunk: number | null): string;
}

/** An op as the Result's timeline records it, less the fields every op has. */
export interface TimelineFields {
  readonly buffer: string | null;
  readonly kernel: string | null;
  readonly bytes: number;
  /** A collective's call; absent for every other kind. */
  readonly collective?: 'allreduce' | 'reducescatter' | 'allgather';
}

/** A chalk background and foreground from the 16 colours every terminal has. */
export interface TerminalLook {
  readonly background: 'bgBlue' | 'bgGreen' | 'bgMagenta' | 'bgGray' | 'bgYellow' | 'bgCyan' | 'bgRed';
  readonly foreground: 'whiteBright' | 'black';
}

/** The engine a stage's ops occupy, as the trace draws it (one track per engine, rows ordered by `row`). */
export interface EngineLook {
  readonly row: number;
  readonly name: string;
  /** A DMA copy between host and device: on a device with one copy engine, every such stage shares it. */
  readonly hostCopy: boolean;
  /** Its ops queue for the engine behind other streams' (a DMA engine), unlike kernels, which share the SMs. */
  readonly exclusive: boolean;
}

/** What a CUPTI activity record of an op is, where CUPTI reports it, and whether memsets among its records are its time. */
export interface CuptiRecord {
  readonly kind: 'memcpy' | 'kernel';
  /** A library call (cuBLAS) may clear its scratch with a memset among its kernels: all of it is the call's time. */
  readonly memsets: boolean;
}

/**
 * One stage kind. `Id` is the kind the Result's timeline gives its ops; `O` is the plan's op it issues (one op kind
 * may serve several stages, as a copy serves H2D and D2H, told apart by `owns`); `P` the device calls it issues it
 * through.
 */
export interface StageKind<Id extends string = string, O extends WorkOpBase = WorkOpBase, P = RuntimePrimitives, R extends ZodRawShape = ZodRawShape> {
  readonly id: Id;
  readonly opKind: O['kind'];
  /**
   * Where its ops go in a chunk's work, and how it plans them. Absent for a kind the chunk pipeline does not plan
   * (a peer copy, which the planner of a pipeline across two devices places between its halves).
   */
  readonly phase?: 'load' | 'compute' | 'store';
  /** A load or store kind's ops of a chunk. */
  plan?(work: ChunkWork): O[];
  /** A compute kind's ops of one of the chunk's compute steps (one whose `stage` is this kind's id). */
  planStep?(step: ComputeStep, work: ChunkWork): O[];
  /** A compute kind other than the kernel: its entry in the config's `kernels:` list. */
  readonly config?: StepConfig<unknown>;
  /** The bytes the op moves and which of a schedule's byte counts they add to; null for an op that moves none. */
  moves(op: O): { readonly count: 'h2d' | 'd2h' | 'peer' | 'collective'; readonly bytes: number } | null;
  /** Whether a plan's op of `opKind` is this stage's. */
  owns(op: O): boolean;
  /** Whether the op reads or writes device buffers, so a ring of device slots must order it. */
  readonly touchesDevice: boolean;
  /** What CUPTI records of the op, where CUPTI reports it. */
  readonly cupti: CuptiRecord | null;
  /** Its ops are communication between ranks (NCCL's), whose time the analysis sets against computation. */
  readonly communication?: boolean;
  /** Why a rep with the kind's ops must be timed by events, CUPTI left off; absent where CUPTI may record it. */
  readonly untraced?: string;
  /**
   * Its term in the overlap model: the resource its ops occupy. Absent for a kind with a term of its own (the host
   * stage's CPU term) or none (peer copies: a plan over several devices has no layout bound).
   */
  readonly model?: ModelResource;
  /**
   * A term of its own beside the GPU's resources in the overlap bound, from what it measured apart (the host stage's
   * CPU stage, the collective's bucket model), with its words in the model's conclusions.
   */
  readonly term?: KindTerm;
  /**
   * How the outputs it writes are verified against serial's: `exact`, byte for byte whatever the config says;
   * `tolerance`, as numbers within the config's verify.tolerance where it gives one (a kernel's or a library's sums may
   * change with the algorithm or the order a layout gets), byte for byte otherwise.
   */
  readonly verify: 'exact' | 'tolerance';
  /** The device buffers the op writes, where the kind knows them; null: any (a kernel's arguments say no direction). */
  writes(op: O): readonly string[] | null;
  /** The GPU work the op runs, by label, for a failure's "kernels in flight": a kernel's or a library call's. */
  names(op: O): readonly string[];
  /** Its look in every picture. `always`: a legend lists it even where no rep has one. */
  readonly look: {
    readonly letter: string;
    readonly colour: string;
    readonly name: string;
    /** The first word of an op's label: "H2D input #3". */
    readonly prefix: string;
    readonly terminal: TerminalLook;
    readonly engine: EngineLook;
    readonly always: boolean;
    /** Whether a rate (GB/s) means something for it: bytes moved, not bytes given. */
    readonly rate: boolean;
    /**
     * What the printed plan counts its ops as (kinds with one noun are counted together), and whether every plan's
     * summary shows the count or only a plan with such ops; null: counted in the total only.
     */
    readonly noun: { readonly one: string; readonly many: string; readonly always: boolean } | null;
  };
  /** The op's subject in words, without its chunk: `kernel fma (fma_loop)`, `H2D of "x"`. */
  what(op: O, context: DescribeContext): string;
  /** The op in words with its chunk, for messages and the printed plan. */
  describe(op: O, context: DescribeContext): string;
  /** The data a timeline op names: its buffer or kernel, and its bytes. */
  timeline(op: O, kernelBytes: (op: { kernel: string; count: number }) => number): TimelineFields;
  /** The subject of an op's label on a picture, from its timeline fields. */
  subject(op: { readonly buffer: string | null; readonly kernel: string | null }): string | null;
  /** A kind the runtime's own calls issue (copies, kernels, peer copies): binds the op to them. */
  issue?(op: O, primitives: P): IssuedOp;
  /**
   * The fields the kind adds to a Result (zod, as its config entry is), composed into the Result's schema; its
   * runtime's `record` fills them.
   */
  readonly result?: R;
  /** The environment variables its runtime reads, each with what it is for (`cuda-pipe --help` lists them). */
  readonly environment?: ReadonlyArray<readonly [string, string]>;
  /** A kind that issues through a library: its runtime, which exec/ opens for a plan with its ops. */
  readonly runtime?: () => Promise<KindRuntimeModule<O>>;
  /**
   * The work one op does, for a compute step's rate alone on whole buffers (flop and bytes read, as nvbench states
   * them); absent where the kind has no such count. `kernelBytes` counts a kernel's from its arguments' ranges.
   */
  work?(op: O, kernelBytes: (op: { kernel: string; count: number }) => number): { readonly flop: number; readonly bytes: number };
  /** A hint for a failure while the op ran, where there is one to give. */
  readonly failureHint?: string;
  /**
   * Passes over what the planner made, for a kind whose ops change how the rest of a schedule or plan is laid out
   * (a collective's communication stream; data parallelism over devices). The planner runs them for each kind whose
   * ops the body or plan holds, in the table's order.
   */
  readonly passes?: KindPasses;
  /** Its section of every report (terminal, Markdown, HTML, sweep), drawn from the Result alone. */
  readonly report?: ReportSection;
  /** Its line about an overlapped mode whose layout it changed, among the toolbox's lines; null where it has none. */
  modeLine?(mode: ModeResult, result: RunResult, context: ModeLineContext): string | null;
  /** Its check of the outputs, where comparing each layout with serial cannot tell whether its ops did their work. */
  readonly check?: OutputCheck;
  /**
   * The fields it adds to the Result's mode of a schedule holding its ops (a collective's calls and bytes a rep),
   * counted on the schedule's own device; `deviceOf` gives a stream's device.
   */
  modeFields?(schedule: Pick<Schedule, 'body' | 'device'>, deviceOf: (stream: string) => number): Partial<ModeResult>;
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
  readonly signal?: AbortSignal | undefined;
}

/** This process within a launch, from the launcher's environment and the flags. */
export interface Launch {
  /** Rank and size under a launcher; null where none started this process. */
  readonly identity: { readonly rank: number | null; readonly size: number | null; readonly jobId: string | null };
  /** A folder every rank can read (`--nccl-dir`); default: the OS's temporary folder. */
  readonly dir?: string | undefined;
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
  settle(what: string, options: { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined }): Promise<void>;
  /** The words of a message about it: what may not end, who it waits for, and what abortAll did. */
  readonly words: { readonly work: string; readonly waiting: string; readonly aborted: string };
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
  /** The device address of a buffer's element on this op's device. */
  address(buffer: string, elementOffset: number): DevicePtr;
  /** A buffer's element type and size. */
  buffer(name: string): { readonly type: string; readonly elementBytes: number };
  /** Runs `make` with this op's device current (a handle or workspace belongs to the device current when it is made). */
  onDevice<T>(make: () => T): T;
}

/** A kind's runtime for one run: what binds each of its ops to the call the timed loop makes. */
export interface KindRuntime<O extends WorkOpBase = WorkOpBase> {
  /** Where this process is one rank of a launch: how its decisions are agreed with the other ranks. */
  readonly agreement?: Agreement | undefined;
  /** What every wait on a rep with the kind's ops watches. */
  readonly watch?: RepWatch;
  /** The Result's sections the runtime fills (its `result` fragment's fields), and what the Result's notes say of it. */
  readonly record?: { readonly sections: Readonly<Record<string, unknown>>; readonly notes: readonly string[] };
  /**
   * The op bound to its site. The thunk returns 0, or a cudaError_t; a library that answers with a status of its
   * own throws the failure, naming the op, and the runner reports it as it reports a CUDA error.
   */
  issue(op: O, site: IssueSite): IssuedOp;
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
  open(context: OpenContext<O>): KindRuntime<O> | Promise<KindRuntime<O>>;
}

// The hooks of a kind whose runtime starts before any device and takes part in binding a schedule and in each of its
// reps (the host stage) are in ./rep-hooks.ts, which adds them to the interfaces above.
