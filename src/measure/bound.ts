// The overlap model: the best time the hardware allows for a layout, built from each stage measured alone on whole
// buffers, the copy-engine count, and the time both copy directions take at once (the PCIe link is shared: alone
// each direction moves about 55 GB/s on the reference H100, together about 92 to 100 GB/s, not 110).

export type BoundTerm = 'H2D' | 'kernels' | 'D2H' | 'link' | 'copy engine' | 'serial';

export interface BoundInput {
  /** Each stage alone on whole buffers, in ms; 0 for a stage the pipeline does not have. */
  readonly h2dMs: number;
  readonly kernelMs: number;
  readonly d2hMs: number;
  readonly h2dBytes: number;
  readonly d2hBytes: number;
  /** H2D and D2H of the same bytes at once (chunked, several streams per direction); null when not measured. */
  readonly linkMs: number | null;
  readonly copyEngines: number;
  readonly chunks: number;
}

export interface BoundCandidate {
  readonly term: BoundTerm;
  /** The time the resource needs in steady state. */
  readonly steadyMs: number;
  /** Filling and draining the pipeline around it. */
  readonly fillDrainMs: number;
  readonly ms: number;
}

/** The largest candidate (its `term` is what limits the pipeline), with every candidate considered. */
export interface Bound extends BoundCandidate {
  readonly terms: readonly BoundCandidate[];
}

const candidate = (term: BoundTerm, steadyMs: number, fillDrainMs: number): BoundCandidate =>
  ({ term, steadyMs, fillDrainMs, ms: steadyMs + fillDrainMs });

/**
 * Each term is a lower bound on the pipeline's time; the bound is the largest.
 *
 * A stage term is that stage alone plus the other stages' share of one chunk: while the pipeline fills, the stage
 * waits for the first chunk to pass the stages before it, and while it drains, the last chunk still has the stages
 * after it to pass.
 *
 * The link term: both directions share the link, so the copies need at least the bidirectional time. But at the
 * start no D2H can run until chunk 0 is loaded and computed, and at the end no H2D is left while the last chunk is
 * computed and stored: in those two phases one direction runs alone, at its single-direction rate. The term is
 * those phases plus the bidirectional time of the bytes they did not move. Ignoring them overstates what is
 * possible (by about 4% on the balanced config at 32 chunks on the reference H100).
 */
export function pipelineBound(input: BoundInput): Bound {
  const { h2dMs, kernelMs, d2hMs, chunks } = input;
  let terms: BoundCandidate[];
  if (input.copyEngines === 0) {
    terms = [candidate('serial', h2dMs + kernelMs + d2hMs, 0)];
  } else if (input.copyEngines === 1) {
    terms = [
      candidate('copy engine', h2dMs + d2hMs, kernelMs / chunks),
      candidate('kernels', kernelMs, (h2dMs + d2hMs) / chunks),
    ];
  } else {
    terms = [
      candidate('H2D', h2dMs, (kernelMs + d2hMs) / chunks),
      candidate('kernels', kernelMs, (h2dMs + d2hMs) / chunks),
      candidate('D2H', d2hMs, (h2dMs + kernelMs) / chunks),
    ];
    const link = linkTerm(input);
    if (link) terms.push(link);
  }
  const binding = terms.reduce((best, c) => (c.ms > best.ms ? c : best));
  return { ...binding, terms };
}

function linkTerm(input: BoundInput): BoundCandidate | null {
  const { h2dMs, kernelMs, d2hMs, h2dBytes, d2hBytes, linkMs, chunks } = input;
  // With one chunk nothing overlaps, and without traffic both ways there is no sharing to model.
  if (linkMs === null || chunks < 2 || h2dBytes <= 0 || d2hBytes <= 0 || h2dMs <= 0 || d2hMs <= 0) return null;
  const fillMs = (h2dMs + kernelMs) / chunks;
  const drainMs = (kernelMs + d2hMs) / chunks;
  const movedAlone = h2dBytes * Math.min(1, fillMs / h2dMs) + d2hBytes * Math.min(1, drainMs / d2hMs);
  return candidate('link', linkMs * (1 - movedAlone / (h2dBytes + d2hBytes)), fillMs + drainMs);
}
