import type { ConfigBuffer } from '../../src/config/types.js';

/** A chunked float buffer of a hand-made pipeline shape (constant contents, pinned), for planner tests. */
export const configBuffer = (name: string, role: ConfigBuffer['role'], elements = 64, elementBytes = 4): ConfigBuffer => ({
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
