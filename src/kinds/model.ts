import type { Bound } from '../measure/bound.js';
import type { ModeResult } from '../result/mode.js';

// What a kind's ops occupy in the overlap model (measure/bound.ts), kind.ts's `model`: the resource and the measured
// parts its time on a layout comes from.

/** The measured parts a stage kind's model resource reads (measure/bound.ts's DeviceParts adds the link, engines and host). Times in ms. */
export interface ModelParts {
  /** Each stage alone on whole buffers (one copy per buffer); 0 for a stage the pipeline does not have. */
  readonly h2dMs: number;
  readonly d2hMs: number;
  readonly kernelWholeMs: number;
  readonly h2dBytes: number;
  readonly d2hBytes: number;
  /** Copies a chunk makes each way, and kernels it launches (one per buffer and per kernel). */
  readonly h2dCopiesPerChunk: number;
  readonly d2hCopiesPerChunk: number;
  readonly kernelsPerChunk: number;
  /** Fixed GPU-side cost of one small copy each way and of one launch (from op-cost modes, behind the gate). */
  readonly h2dOpMs: number;
  readonly d2hOpMs: number;
  readonly launchOpMs: number;
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
  measured(parts: ModelParts): { readonly wholeMs: number; readonly opMs: number; readonly opsPerChunk: number; readonly bytes: number };
}

/**
 * What a kind's term beside the GPU's in the overlap bound is given (kind.ts's `term`), besides the bounded mode: the
 * modes measured apart from it on its device, the compute alone at the bounded mode's SM clock, and what chunks cut.
 */
export interface TermContext {
  readonly modes: readonly ModeResult[];
  /** The SMs' stages alone on whole buffers (the kernels' and libraries'), at the bounded mode's clock. */
  readonly computeMs: number;
  /** The items (or elements) a layout's chunks cut: a bucket's layers. */
  readonly items: number;
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
