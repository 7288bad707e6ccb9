import type { ModeResult } from './schema.js';

// Whether two measured modes compare like with like, read from the Result alone, for warnings and renderers alike.

/** Why a speedup over serial would compare unlike things: the mode lacks a stage serial has, or there is nothing to overlap. */
export type SerialMismatch = { readonly kind: 'without-stage'; readonly host: string } | { readonly kind: 'launches-only'; readonly chunks: number };

/**
 * Whether an overlapped mode's speedup over serial compares like with like, from the Result's modes alone. Serial
 * runs the config's host stage, so a layout without it (the twin that shows what the stage costs) has no fair serial
 * figure; a pipeline with no copies has nothing to overlap, and its speedup over serial compares one launch per kernel
 * against one per chunk.
 */
export function serialMismatch(mode: ModeResult, modes: readonly ModeResult[]): SerialMismatch | null {
  if (mode.role.kind !== 'overlapped') return null;
  const { layout } = mode.role;
  const stage = modes.flatMap((m) => (m.role.kind === 'overlapped' && m.device === mode.device && m.role.layout.host !== undefined ? [m.role.layout.host] : []))[0];
  if (stage !== undefined && layout.host === undefined) return { kind: 'without-stage', host: stage };
  if (mode.bytes.h2d + mode.bytes.d2h === 0 && layout.chunks > 1) return { kind: 'launches-only', chunks: layout.chunks };
  return null;
}
