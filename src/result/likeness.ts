import type { ModeResult } from '../model/mode.js';

// Whether two measured modes compare like with like, read from the Result alone, for warnings and renderers alike.

/**
 * Why a speedup over serial would compare unlike things: the mode lacks a stage serial has, or there is nothing to
 * overlap.
 */
export type SerialMismatch =
  | { readonly kind: 'without-stage'; readonly host: string }
  | { readonly kind: 'launches-only'; readonly chunks: number };

/**
 * Whether an overlapped mode's speedup over serial compares like with like, from the Result's modes alone. Serial
 * runs the config's host stage, so a layout without it (the twin that shows what the stage costs) has no fair serial
 * figure; a pipeline with no copies has nothing to overlap, and its speedup over serial compares one launch per kernel
 * against one per chunk.
 */
export function serialMismatch(mode: ModeResult, modes: readonly ModeResult[]): SerialMismatch | null {
  if (mode.role.kind !== 'overlapped') return null;
  const { layout } = mode.role;
  const stage = hostStages(modes).get(mode.device);
  if (stage !== undefined && layout.host === undefined) return { kind: 'without-stage', host: stage };
  if (mode.bytes.h2d + mode.bytes.d2h === 0 && layout.chunks > 1)
    return { kind: 'launches-only', chunks: layout.chunks };
  return null;
}

const stagesOf = new WeakMap<readonly ModeResult[], ReadonlyMap<number, string>>();

/**
 * Each device's first overlapped host stage, once per list of modes: asked for every mode, a scan each was quadratic.
 */
function hostStages(modes: readonly ModeResult[]): ReadonlyMap<number, string> {
  const known = stagesOf.get(modes);
  if (known) return known;
  const stages = new Map<number, string>();
  for (const m of modes) {
    if (m.role.kind === 'overlapped' && m.role.layout.host !== undefined && !stages.has(m.device))
      stages.set(m.device, m.role.layout.host);
  }
  stagesOf.set(modes, stages);
  return stages;
}
