import type { ZodRawShape } from 'zod';
import type { AdviceRecord } from '../../model/analysis.js';
import type { Bound, ModelParts } from '../../model/bound.js';
import type { ModeResult } from '../../model/mode.js';
import type { Schedule, WorkOpBase } from '../../model/schedule.js';

// What a stage kind adds to a Result and to the overlap model read from it: its ops on the timeline, its fields in
// a mode and in the Result, the resource its ops occupy in the bound, or a term of its own beside the GPU's.

export type { Bound, BoundCandidate, ModelParts } from '../../model/bound.js';

/** An op as the Result's timeline records it, less the fields every op has. */
export interface TimelineFields {
  readonly buffer: string | null;
  readonly kernel: string | null;
  readonly bytes: number;
  /** A collective's call; absent for every other kind. */
  readonly collective?: 'allreduce' | 'reducescatter' | 'allgather';
}

/**
 * A resource of the overlap model (measure/bound.ts): what a kind's ops occupy, whose time on a layout is one of the
 * bound's terms. Kinds that name one resource add up on it (kernels and GEMMs on the SMs), so a new kind on an
 * existing resource joins the model by naming it; a new resource needs parts of its own in the Result.
 */
export interface ModelResource {
  /** The bound's term for it. */
  readonly term: 'H2D' | 'kernels' | 'D2H';
  /**
   * How its time on a layout comes from the modes measured apart from any layout. `copy`: its copies alone on whole
   * buffers, cut into chunks that each pay the fixed cost of a small copy. `alone`: its steps alone on whole buffers,
   * or all of them chunked as the layout runs them where that was measured, each chunk paying the fixed cost of a
   * launch, which a graph replay does not pay.
   */
  readonly estimate: 'copy' | 'alone';
  /**
   * A copy over the host link: the link term shares the link between the first and last such resource (loads and
   * stores), and on a device with one copy engine they are one term.
   */
  readonly hostLink: boolean;
  /** Its measured parts: time alone on whole buffers, fixed cost of one op, ops a chunk issues, bytes moved. */
  measured(parts: ModelParts): {
    readonly wholeMs: number;
    readonly opMs: number;
    readonly opsPerChunk: number;
    readonly bytes: number;
  };
}

/**
 * What a kind's term beside the GPU's in the overlap bound is given (`term`), besides the bounded mode: the modes
 * measured apart from it on its device, the compute alone at the bounded mode's SM clock, and what chunks cut.
 */
export interface TermContext {
  readonly modes: readonly ModeResult[];
  /** The SMs' stages alone on whole buffers (the kernels' and libraries'), at the bounded mode's clock. */
  readonly computeMs: number;
  /** The items (or elements) a layout's chunks cut: a bucket's layers. */
  readonly items: number;
}

/** How a kind names what the model's conclusions say about a mode running its ops. */
export interface TermWords {
  /** Whether `mode` runs the kind's ops, from the fields the kind adds to a mode. */
  holds(mode: ModeResult): boolean;
  /** A layout of `chunks` chunks, as the kind's config reads it: "8 buckets". */
  layout(chunks: number): string;
  /** The change from `from` chunks to `to`: "use 16 buckets, pipeline.chunks 16 (now 8)". */
  change(from: number, to: number): string;
  /** What limits the layout where its term does: "the compute, then the last bucket's all-reduce (0.266 ms)". */
  limit(mode: ModeResult, chunks: number, context: TermContext): string;
  /** Why no other chunk count is predicted, where the floor search found none: the kind's measurements cannot say. */
  unpredicted(mode: ModeResult, context: TermContext): string | null;
  /** What its bound leaves out, for the time the model does not explain. */
  readonly leavesOut: string;
}

/**
 * What a kind measured of a mode itself (the host stage's CPU stage on workers), as the model's words about the mode
 * name it: where a kind's layout variant ran without it (a host stage on the JS thread), the model has no term for it.
 */
export interface TermMeasured {
  /** Why its term limits the layout, and the change of its own that helps (the advice's, for its term's cause). */
  readonly limits: {
    readonly why: string;
    readonly fix: {
      readonly code: Exclude<AdviceRecord['code'], 'layout' | 'none'>;
      readonly change: string;
      readonly term: Bound['term'];
    } | null;
  };
  /** What its term leaves out of the layout's time. */
  readonly leavesOut: string;
  /** How a rep's time holds its work, beside the CUDA events (the report's timing line). */
  readonly timing: string;
  /** Where the model's part for it comes from, beside the GPU's parts at their fastest rep. */
  readonly statistic: string;
}

/**
 * A kind's part in the overlap model beside the GPU's resources (the host stage's CPU stage, the collective's bucket
 * model), and its words in the model's conclusions.
 */
export interface KindTerm {
  /**
   * The bound `gpu` of `mode`'s workload cut into `chunks` chunks, with the kind's term beside it. At the mode's own
   * chunk count it is a floor; at another a prediction, or null where what the kind measured cannot predict that count.
   */
  bound(gpu: Bound, mode: ModeResult, chunks: number, context: TermContext): Bound | null;
  /** Its words, for a mode that runs its ops; absent: a layout is chunks × streams. */
  readonly words?: TermWords;
  /** What it measured of `mode` itself (its fields of the mode), for the model's words; null where nothing. */
  measured?(mode: ModeResult): TermMeasured | null;
}

export interface KindResult<O extends WorkOpBase = WorkOpBase, R extends ZodRawShape = ZodRawShape> {
  /** The data a timeline op names: its buffer or kernel, and its bytes. */
  timeline(op: O, kernelBytes: (op: { kernel: string; count: number }) => number): TimelineFields;
  /**
   * The fields the kind adds to a Result (zod, as its config entry is), composed into the Result's schema; its
   * runtime's `record` fills them.
   */
  readonly result?: R;
  /**
   * The fields it adds to the Result's mode of a schedule holding its ops (a collective's calls and bytes a rep),
   * counted on the schedule's own device; `deviceOf` gives a stream's device.
   */
  modeFields?(schedule: Pick<Schedule, 'body' | 'device'>, deviceOf: (stream: string) => number): Partial<ModeResult>;
  /**
   * The fields it adds to a mode from its records of the mode's timed reps (`KindRepEnd.record`): their schema
   * (`fields`, which result/schema.ts composes into a mode's) and their values over the reps (`summary`).
   */
  readonly reps?: {
    readonly fields: ZodRawShape;
    summary(records: readonly unknown[]): Readonly<Record<string, unknown>>;
  };
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
}
