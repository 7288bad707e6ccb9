// What a stage kind is: one descriptor per kind owns everything the rest of the code needs to know about it (its
// op, how it is described, issued, traced and drawn), and the rest reads the table in ./index.ts. Pure data and pure
// functions: a stage issues its op through `IssuePrimitives`, which exec/ implements, so no CUDA handle, pointer or
// koffi type reaches this folder and the planner and the renderers may import it.

import type { ZodType } from 'zod';

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
 * index. A new stage kind that calls a library adds its call here (exec/ keeps the library's per-stream handles
 * and workspaces, made once when the schedule is bound, so a graph capture records the call like any other).
 */
export interface IssuePrimitives {
  copy(spec: { readonly buffer: string; readonly hostOffset: number; readonly deviceOffset: number; readonly bytes: number; readonly direction: 'h2d' | 'd2h' }): Thunk;
  peerCopy(spec: { readonly buffer: string; readonly from: number; readonly to: number; readonly deviceOffset: number; readonly bytes: number }): Thunk;
  kernel(spec: { readonly kernel: string; readonly first: number; readonly count: number; readonly deviceFirst: number }): Thunk;
  /** A host function over the chunk's output bytes on the host (the plan's host stage), with its tag. */
  hostCall(spec: { readonly chunk: number | null }): IssuedOp;
  /**
   * A cuBLAS GEMM on the stream's own handle, column-major as cuBLAS takes it, its operands in cuBLAS's order (A, B,
   * C), each a buffer and an element offset into its device memory. `label` names the op in failures.
   */
  gemm(spec: {
    readonly label: string;
    readonly call: {
      readonly transA: 'N' | 'T';
      readonly transB: 'N' | 'T';
      readonly m: number;
      readonly n: number;
      readonly k: number;
      readonly lda: number;
      readonly ldb: number;
      readonly ldc: number;
      readonly alpha: number;
      readonly beta: number;
      readonly dtype: 'fp32' | 'tf32' | 'fp16' | 'bf16';
      readonly cFloat32: boolean;
    };
    readonly operands: readonly [GemmOperandAt, GemmOperandAt, GemmOperandAt];
  }): Thunk;
  /**
   * An NCCL collective on the device's communicator, in place over `elements` elements of the buffer's device memory
   * from `elementOffset`. `label` names the op in failures.
   */
  collective(spec: {
    readonly label: string;
    readonly collective: 'allreduce' | 'reducescatter' | 'allgather';
    readonly buffer: string;
    readonly elementOffset: number;
    readonly elements: number;
  }): Thunk;
}

/** A GEMM operand on the device: its buffer, and the element its chunk starts at. */
export interface GemmOperandAt {
  readonly buffer: string;
  readonly elementOffset: number;
}

/** What a library stage reads of a config buffer when it resolves its entry. */
export interface StepBuffer {
  readonly name: string;
  readonly type: string;
  readonly role: string;
  readonly elementBytes: number;
  /** Elements per item of a chunked buffer (1 where the config does not chunk by items). */
  readonly itemSize: number;
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

/**
 * One stage kind. `Id` is the kind the Result's timeline gives its ops; `O` is the plan's op it issues (one op kind
 * may serve several stages, as a copy serves H2D and D2H, told apart by `owns`).
 */
export interface StageKind<Id extends string = string, O extends WorkOpBase = WorkOpBase> {
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
  /** What a CUPTI activity record of the op is, where CUPTI reports it. */
  readonly cupti: 'memcpy' | 'kernel' | null;
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
  };
  /** The op's subject in words, without its chunk: `kernel fma (fma_loop)`, `H2D of "x"`. */
  what(op: O, context: DescribeContext): string;
  /** The op in words with its chunk, for messages and the printed plan. */
  describe(op: O, context: DescribeContext): string;
  /** The data a timeline op names: its buffer or kernel, and its bytes. */
  timeline(op: O, kernelBytes: (op: { kernel: string; count: number }) => number): TimelineFields;
  /** The subject of an op's label on a picture, from its timeline fields. */
  subject(op: { readonly buffer: string | null; readonly kernel: string | null }): string | null;
  /** Binds the op to the device layer: what the rep loop calls. */
  issue(op: O, primitives: IssuePrimitives): IssuedOp;
  /** A hint for a failure while the op ran, where there is one to give. */
  readonly failureHint?: string;
}
