import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildLayoutsPlan } from '../../src/plan/build.js';
import type { Plan, Schedule } from '../../src/plan/types.js';

/** A config small enough for CPU tests of the sweep: one FMA kernel from x into y, 4,096 elements. */
export const TINY_CONFIG = `name: tiny
buffers:
  x: { type: float32, count: 4096, role: in }
  y: { type: float32, count: 4096, role: out }
kernels:
  - { source: fma_loop.cu, entry: fma_loop, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { int32: 100 }] }
`;

/** The tiny config planned as a sweep of 4 × 4 and 16 × 4, depth-first, with its overlapped layouts in that order. */
export function tinySweepPlan(): { plan: Plan; layouts: Schedule[] } {
  const loaded = parseConfigText(TINY_CONFIG, '/cfg/tiny.yaml');
  const plan = buildLayoutsPlan(
    loaded.config,
    resolveKernels(loaded.config, loaded.locate),
    [
      { chunks: 4, streams: 4 },
      { chunks: 16, streams: 4 },
    ],
    ['depth-first'],
  );
  return { plan, layouts: plan.schedules.filter((s) => s.role.kind === 'overlapped') };
}
