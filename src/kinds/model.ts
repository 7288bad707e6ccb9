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
