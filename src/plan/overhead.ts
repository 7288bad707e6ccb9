import type { ConfigBuffer } from '../config/load.js';
import { splitRanges } from './chunks.js';
import { makeStreams, timedSchedule } from './schedules.js';
import type { Op, Plan } from './types.js';

export const OVERHEAD_ELEMENTS = 256;

/**
 * Two schedules for measuring host issue cost: `batch` launches of a tiny kernel, and `batch` 4-byte H2D copies,
 * all on one stream. Batches stay short so that the GPU's queue never fills and blocks the host.
 */
export function overheadPlan(kernel: Plan['kernels'][number], batch: number, device: number): Plan {
  const buffer = (name: string, role: 'in' | 'out'): ConfigBuffer => ({
    name, type: 'uint32', elementBytes: 4, elements: OVERHEAD_ELEMENTS, bytes: OVERHEAD_ELEMENTS * 4, role,
    init: { kind: 'ramp', start: 1, step: 1 }, hostMemory: 'pinned',
  });
  const streams = makeStreams(1, 'non-blocking', device);
  const launches: Op[] = Array.from({ length: batch }, () => ({
    kind: 'kernel', stream: 's0', kernel: kernel.label, chunk: null, first: 0, count: OVERHEAD_ELEMENTS, deviceFirst: 0,
  }));
  const copies: Op[] = Array.from({ length: batch }, () => ({
    kind: 'copy', stream: 's0', direction: 'h2d', buffer: 'src', hostOffset: 0, deviceOffset: 0, bytes: 4, chunk: null,
  }));
  const ranges = splitRanges(OVERHEAD_ELEMENTS, 1);
  return {
    name: 'host-overhead', device, elements: OVERHEAD_ELEMENTS, buffers: [buffer('src', 'in'), buffer('dst', 'out')], kernels: [kernel],
    layout: { chunks: 1, requestedChunks: 1, streams: 1, requestedStreams: 1, order: 'depth-first', orders: ['depth-first'], align: 1, ranges },
    schedules: [
      timedSchedule('launches', 'stage', `${batch} launches of ${kernel.label}`, streams, launches, false),
      timedSchedule('copies', 'stage', `${batch} 4-byte H2D copies`, streams, copies, false),
    ],
    notes: [],
  };
}
