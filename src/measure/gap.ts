import type { z } from 'zod';
import type { GapCauseSchema } from '../model/analysis.js';
import type { Bound, BoundTerm } from './bound.js';

/** What the gap between a mode and its bound is put down to: the Result's closed list (src/model/analysis.ts). */
export type GapCause = z.infer<typeof GapCauseSchema>;

export interface GapPart {
  readonly cause: GapCause;
  /** Signed: a negative part is time the measurement beat that part of the model by. */
  readonly ms: number;
}

/** What the binding term's steady time above the workload's ideal is called. */
const STEADY_CAUSE: Record<BoundTerm, GapCause> = {
  link: 'shared link',
  kernels: 'kernels not concurrent',
  H2D: 'one direction at a time',
  D2H: 'one direction at a time',
  'copy engine': 'one direction at a time',
  serial: 'one direction at a time',
  streams: 'too few streams',
  'host issue': 'host issue',
  'CPU stage': 'CPU stage',
  communication: 'exposed communication',
};

/**
 * Splits the time a layout lost against the workload's ideal into causes that add up to it exactly:
 * measured − ideal = (the binding term's steady time above the ideal, less its per-op part)
 *                  + (its per-op part) + (its fill and drain) + (measured − bound).
 * The last part is what the model does not explain: serialisation (an op waiting on a stream it did not depend on:
 * the legacy default stream, pageable copies, a synchronous call), noise, clock changes.
 */
export function explainGap(measuredMs: number, bound: Bound, idealMs: number): GapPart[] {
  const parts: GapPart[] = [
    { cause: STEADY_CAUSE[bound.term], ms: bound.steadyMs - bound.perOpMs - idealMs },
    { cause: 'per-op cost', ms: bound.perOpMs },
    { cause: 'fill and drain', ms: bound.fillDrainMs },
    { cause: 'serialisation and effects the model does not capture', ms: measuredMs - bound.ms },
  ];
  return parts.filter((p) => p.ms !== 0);
}

/** The largest positive part, or null when nothing was lost. */
export function topCause(parts: readonly GapPart[]): GapPart | null {
  return parts.reduce<GapPart | null>((top, p) => (p.ms > 0 && (!top || p.ms > top.ms) ? p : top), null);
}
