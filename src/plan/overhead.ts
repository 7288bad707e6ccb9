import type { ConfigBuffer } from '../config/load.js';
import { wholeRange } from '../chunking.js';
import { makeStreams, timedSchedule } from './schedules.js';
import type { Op, Plan, PlanKernel } from './types.js';

export const OVERHEAD_ELEMENTS = 256;

/**
 * Two schedules for measuring host issue cost: `batch` launches of a tiny kernel, and `batch` 4-byte H2D copies,
 * all on one stream. Batches stay short so that the GPU's queue never fills and blocks the host.
 */
export function overheadPlan(kernel: PlanKernel, batch: number, device: number): Plan {
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
  const whole = wholeRange(OVERHEAD_ELEMENTS);
  const schedule = (op: 'launch' | 'h2d', description: string, body: Op[]) =>
    timedSchedule({ role: { kind: 'op-cost', op }, device, description, streams, body, ranges: [whole], verify: false, gated: false });
  return {
    name: 'host-overhead', devices: [device], elements: OVERHEAD_ELEMENTS, buffers: [buffer('src', 'in'), buffer('dst', 'out')], kernels: [kernel],
    pipeline: { elements: OVERHEAD_ELEMENTS, align: 1, requestedChunks: 1, requestedStreams: 1 },
    schedules: [
      schedule('launch', `${batch} launches of ${kernel.label}`, launches),
      schedule('h2d', `${batch} 4-byte H2D copies`, copies),
    ],
    notes: [],
  };
}
