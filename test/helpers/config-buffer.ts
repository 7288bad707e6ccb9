import type { ConfigBuffer } from '../../src/config/types.js';

/** A chunked float buffer of a hand-made pipeline shape (constant contents, pinned), for planner tests. */
export const configBuffer = (
  name: string,
  role: ConfigBuffer['role'],
  elements = 64,
  elementBytes = 4,
): ConfigBuffer => ({
  itemSize: 1,
  name,
  type: elementBytes === 8 ? 'float64' : 'float32',
  elementBytes,
  elements,
  bytes: elements * elementBytes,
  role,
  init: { kind: 'constant', value: 1 },
  hostMemory: 'pinned',
});

/** An output buffer of any element type (seeded random, pinned), for comparing its bytes. */
export const outBuffer = (type: ConfigBuffer['type'], elementBytes: number, elements: number): ConfigBuffer => ({
  name: 'out',
  type,
  elementBytes,
  elements,
  bytes: elements * elementBytes,
  itemSize: 1,
  role: 'out',
  init: { kind: 'random', seed: 1 },
  hostMemory: 'pinned',
});
