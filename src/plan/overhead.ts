import type { ConfigBuffer } from '../config/types.js';
import { wholeRange } from '../chunking.js';
import type { IssueCostOp } from '../vocabulary.js';
import { makeStreams, timedSchedule, type TimedScheduleSpec } from './schedules.js';
import type { ChunkRange, Op, Plan, PlanKernel, Schedule } from './types.js';

export const OVERHEAD_ELEMENTS = 256;

/**
 * Schedules for measuring host issue cost: `batch` launches of a tiny kernel, `batch` 4-byte H2D copies, `batch`
 * event records with and without timing, and `batch` cross-stream waits. Batches stay short so that the GPU's queue
 * never fills and blocks the host.
 */
export function overheadPlan(kernel: PlanKernel, batch: number, device: number): Plan {
  const buffer = (name: string, role: 'in' | 'out'): ConfigBuffer => ({
    name,
    type: 'uint32',
    elementBytes: 4,
    elements: OVERHEAD_ELEMENTS,
    bytes: OVERHEAD_ELEMENTS * 4,
    itemSize: 1,
    role,
    init: { kind: 'ramp', start: 1, step: 1 },
    hostMemory: 'pinned',
  });
  const streams = makeStreams(1, 'non-blocking', device);
  const launches: Op[] = Array.from({ length: batch }, () => ({
    kind: 'kernel',
    stream: 's0',
    kernel: kernel.label,
    chunk: null,
    first: 0,
    count: OVERHEAD_ELEMENTS,
    deviceFirst: 0,
  }));
  const copies: Op[] = Array.from({ length: batch }, () => ({
    kind: 'copy',
    stream: 's0',
    direction: 'h2d',
    buffer: 'src',
    hostOffset: 0,
    deviceOffset: 0,
    bytes: 4,
    chunk: null,
  }));
  const whole = wholeRange(OVERHEAD_ELEMENTS);
  const schedule = (op: IssueCostOp, description: string, body: Op[]) =>
    timedSchedule({
      role: { kind: 'issue-cost', op },
      device,
      description,
      body,
      ranges: [whole],
      verify: false,
      gated: false,
      streams,
    });
  return {
    name: 'host-overhead',
    devices: [device],
    elements: OVERHEAD_ELEMENTS,
    buffers: [buffer('src', 'in'), buffer('dst', 'out')],
    kernels: [kernel],
    pipeline: { elements: OVERHEAD_ELEMENTS, align: 1, requestedChunks: 1, requestedStreams: 1 },
    schedules: [
      schedule('launch', `${batch} launches of ${kernel.label}`, launches),
      schedule('copy', `${batch} 4-byte H2D copies`, copies),
      ...eventCostSchedules(device, batch, whole),
    ],
    notes: [],
    device: { elements: OVERHEAD_ELEMENTS, ring: null, budgetBytes: null },
    host: null,
    placements: [],
  };
}

/**
 * What events cost the host: `batch` records of an event with timing, of one created with cudaEventDisableTiming
 * (cheaper: the events a pipeline only synchronises with), and cross-stream waits. `overhead` measures them, and
 * so does every `run`, beside the pipeline.
 */
export function eventCostSchedules(device: number, batch: number, range: ChunkRange): Schedule[] {
  const streams = makeStreams(1, 'non-blocking', device);
  const schedule = (
    op: IssueCostOp,
    description: string,
    body: Op[],
    extra: Pick<TimedScheduleSpec, 'streams' | 'events'>,
  ) =>
    timedSchedule({
      role: { kind: 'issue-cost', op },
      device,
      description,
      body,
      ranges: [range],
      verify: false,
      gated: false,
      ...extra,
    });
  const records = (event: string): Op[] =>
    Array.from({ length: batch }, () => ({ kind: 'record', stream: 's0', event }));
  // Waits on an event another stream recorded once: each wait is a real cross-stream dependency, never a no-op.
  const waits: Op[] = [
    { kind: 'record', stream: 's1', event: 'other' },
    ...Array.from({ length: batch }, (): Op => ({ kind: 'wait', stream: 's0', event: 'other' })),
  ];
  return [
    schedule('record-timing', `${batch} records of an event with timing`, records('probe-timing'), {
      streams,
      events: [{ id: 'probe-timing', timing: true }],
    }),
    schedule(
      'record-untimed',
      `${batch} records of an event created with cudaEventDisableTiming`,
      records('probe-untimed'),
      {
        streams,
        events: [{ id: 'probe-untimed', timing: false }],
      },
    ),
    schedule('wait', `${batch} cudaStreamWaitEvent on an event of another stream`, waits, {
      streams: makeStreams(2, 'non-blocking', device),
      events: [{ id: 'other', timing: false }],
    }),
  ];
}

/**
 * The ops an issue-cost schedule times, counted by kind: the one record a wait schedule waits on is setup, not a
 * timed op, so per-op costs divide by this and never by the body's length.
 */
export function issuedOpCount(schedule: Schedule): number {
  if (schedule.role.kind !== 'issue-cost') return 0;
  const op = schedule.role.op;
  const kind = op === 'launch' ? 'kernel' : op === 'copy' ? 'copy' : op === 'wait' ? 'wait' : 'record';
  return schedule.body.filter((o) => o.kind === kind).length;
}
