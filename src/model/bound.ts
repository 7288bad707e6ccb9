// The overlap model's bound (measure/bound.ts computes it): its terms, and the parts measured apart from any layout
// that a stage kind's resource reads. A kind with a term of its own (kinds/api's `term`) gives back a Bound.

/**
 * A term of the bound: an engine, the link, the streams, the host's issue, or a kind's own (the CPU stage,
 * communication).
 */
export type BoundTerm =
  | 'H2D'
  | 'kernels'
  | 'D2H'
  | 'link'
  | 'copy engine'
  | 'serial'
  | 'streams'
  | 'host issue'
  | 'CPU stage'
  | 'communication';

export interface BoundCandidate {
  readonly term: BoundTerm;
  /** The time the resource needs in steady state, per-op costs included. */
  readonly steadyMs: number;
  /** The part of steadyMs that is fixed per-op cost (copies and launches on the device). */
  readonly perOpMs: number;
  /** Filling and draining the pipeline around it. */
  readonly fillDrainMs: number;
  readonly ms: number;
}

/** The largest candidate (its `term` is what limits the layout), with every candidate considered. */
export interface Bound extends BoundCandidate {
  readonly terms: readonly BoundCandidate[];
}

/**
 * The measured parts a stage kind's model resource reads (measure/bound.ts's DeviceParts adds the link, engines and
 * host). Times in ms.
 */
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
