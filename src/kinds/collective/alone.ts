import type { Schedule } from '../../model/schedule.js';
import type { AloneContext, ComputeStep } from '../api/index.js';

/**
 * A collective step alone at each bucket count of the layouts: one NCCL call per chunk, back to back on one stream,
 * as the bucket size data-parallel users tune. Its time per call at each size is what the bus bandwidth and the
 * bucket model are read from, and what the native program is compared with.
 */
export function collectiveAlone(step: ComputeStep, context: AloneContext): Schedule[] {
  const kernel = step.label;
  return context.layouts.map((ranges) => {
    const buckets = ranges.length;
    const description = `collective ${kernel} alone in ${buckets} bucket${buckets === 1 ? '' : 's'} (its NCCL calls only)`;
    return context.timed({ kind: 'stage', stage: 'collective', collective: kernel, buckets }, description, ranges);
  });
}
