// The overlap model: the best time the hardware allows for a layout, built from each stage measured alone on whole
// buffers, the copy-engine count, and the time both copy directions take at once (the PCIe link is shared: alone
// each direction moves about 54 GB/s on the reference H100, together about 92 GB/s, not 108).

export type BoundTerm = 'H2D' | 'kernels' | 'D2H' | 'link' | 'copy engine' | 'serial';

export interface BoundInput {
  /** Each stage alone on whole buffers, in ms; 0 for a stage the pipeline does not have. */
  readonly h2dMs: number;
  readonly kernelMs: number;
  readonly d2hMs: number;
  /** H2D and D2H of the same bytes at once (chunked, several streams per direction); null when not measured. */
  readonly linkMs: number | null;
  readonly copyEngines: number;
  readonly chunks: number;
}

export interface Bound {
  readonly ms: number;
  readonly limitedBy: BoundTerm;
  /** The binding term: the time the busiest resource needs for the whole pipeline. */
  readonly steadyMs: number;
  /** Filling and draining the pipeline: the other stages' share of one chunk. */
  readonly fillDrainMs: number;
  readonly terms: ReadonlyArray<{ readonly term: BoundTerm; readonly ms: number }>;
}

export function pipelineBound(input: BoundInput): Bound {
  const { h2dMs, kernelMs, d2hMs, chunks } = input;
  if (input.copyEngines === 0) {
    const ms = h2dMs + kernelMs + d2hMs;
    return { ms, limitedBy: 'serial', steadyMs: ms, fillDrainMs: 0, terms: [{ term: 'serial', ms }] };
  }
  // Each candidate term, and the stage time it does not already cover (which fills and drains per chunk).
  const candidates: Array<{ term: BoundTerm; ms: number; uncovered: number }> = input.copyEngines === 1
    ? [
        { term: 'copy engine', ms: h2dMs + d2hMs, uncovered: kernelMs },
        { term: 'kernels', ms: kernelMs, uncovered: h2dMs + d2hMs },
      ]
    : [
        { term: 'H2D', ms: h2dMs, uncovered: kernelMs + d2hMs },
        { term: 'kernels', ms: kernelMs, uncovered: h2dMs + d2hMs },
        { term: 'D2H', ms: d2hMs, uncovered: h2dMs + kernelMs },
        ...(input.linkMs === null ? [] : [{ term: 'link' as const, ms: input.linkMs, uncovered: kernelMs }]),
      ];
  const binding = candidates.reduce((best, c) => (c.ms > best.ms ? c : best));
  const fillDrainMs = binding.uncovered / chunks;
  return {
    ms: binding.ms + fillDrainMs,
    limitedBy: binding.term,
    steadyMs: binding.ms,
    fillDrainMs,
    terms: candidates.map(({ term, ms }) => ({ term, ms })),
  };
}
