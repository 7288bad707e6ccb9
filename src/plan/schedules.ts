import type { ConfigBuffer, IssueOrder } from '../config/load.js';
import type { ChunkRange, EventSpec, Op, Schedule, ScheduleKind, StreamSpec } from './types.js';

// Schedule builders: each turns a pipeline shape into one Schedule. The timed region is the same for all of them:
// record `start` on the first stream, make every other stream wait on it, issue the body, join every stream back
// into the first with an event, record `end`.

export interface PipelineShape {
  readonly device: number;
  readonly buffers: readonly ConfigBuffer[];
  readonly kernels: readonly string[];
  readonly elements: number;
  readonly ranges: readonly ChunkRange[];
  readonly streams: number;
  readonly streamFlags: StreamSpec['flags'];
  readonly gated: boolean;
}

const WHOLE: (elements: number) => ChunkRange = (elements) => ({ index: 0, first: 0, count: elements });

export function makeStreams(count: number, flags: StreamSpec['flags'], device: number, prefix = 's'): StreamSpec[] {
  return Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, flags, device }));
}

export function timedSchedule(
  id: string,
  kind: ScheduleKind,
  description: string,
  streams: readonly StreamSpec[],
  body: readonly Op[],
  verify: boolean,
  gated = false,
): Schedule {
  const [origin, ...others] = streams;
  if (!origin) throw new RangeError(`schedule ${id} needs at least one stream`);
  const events: EventSpec[] = [{ id: 'start', timing: true }, { id: 'end', timing: true }];
  // The gate sits before `start` on the first stream, and every other stream waits on `start`: one gate holds all.
  const ops: Op[] = [...(gated ? [{ kind: 'gate', stream: origin.id } as const] : []), { kind: 'record', stream: origin.id, event: 'start' }];
  for (const s of others) ops.push({ kind: 'wait', stream: s.id, event: 'start' });
  ops.push(...body);
  for (const s of others) {
    const join = `join:${s.id}`;
    events.push({ id: join, timing: false });
    ops.push({ kind: 'record', stream: s.id, event: join }, { kind: 'wait', stream: origin.id, event: join });
  }
  ops.push({ kind: 'record', stream: origin.id, event: 'end' });
  const bytes = { h2d: 0, d2h: 0 };
  for (const op of body) if (op.kind === 'copy') bytes[op.direction] += op.bytes;
  return { id, kind, description, streams, events, ops, start: 'start', end: 'end', verify, gated, bytes };
}

function copyOp(buffer: ConfigBuffer, range: ChunkRange, direction: 'h2d' | 'd2h', stream: string, chunk: number | null): Op {
  const offset = range.first * buffer.elementBytes;
  return { kind: 'copy', stream, direction, buffer: buffer.name, hostOffset: offset, deviceOffset: offset,
    bytes: range.count * buffer.elementBytes, chunk };
}

const loads = (buffers: readonly ConfigBuffer[]) => buffers.filter((b) => b.role === 'in' || b.role === 'inout');
const stores = (buffers: readonly ConfigBuffer[]) => buffers.filter((b) => b.role === 'out' || b.role === 'inout');

function loadOps(shape: PipelineShape, range: ChunkRange, stream: string, chunk: number | null): Op[] {
  return loads(shape.buffers).map((b) => copyOp(b, range, 'h2d', stream, chunk));
}

function storeOps(shape: PipelineShape, range: ChunkRange, stream: string, chunk: number | null): Op[] {
  return stores(shape.buffers).map((b) => copyOp(b, range, 'd2h', stream, chunk));
}

function kernelOps(kernels: readonly string[], range: ChunkRange, stream: string, chunk: number | null): Op[] {
  return kernels.map((kernel) => ({ kind: 'kernel', stream, kernel, chunk, first: range.first, count: range.count, deviceFirst: range.first }));
}

/** Whole buffers on one stream: H2D, every kernel, D2H. The baseline every speedup is measured against. */
export function serialSchedule(shape: PipelineShape): Schedule {
  const streams = makeStreams(1, shape.streamFlags, shape.device);
  const whole = WHOLE(shape.elements);
  const body = [...loadOps(shape, whole, 's0', null), ...kernelOps(shape.kernels, whole, 's0', null), ...storeOps(shape, whole, 's0', null)];
  return timedSchedule('serial', 'serial', 'whole buffers on one stream: H2D, kernels, D2H', streams, body, true, shape.gated);
}

/** The configured layout: chunk i on stream i mod S, issued depth-first or breadth-first. */
export function overlappedSchedule(shape: PipelineShape, order: IssueOrder, id = 'overlapped'): Schedule {
  const streamCount = Math.min(shape.streams, shape.ranges.length);
  const streams = makeStreams(streamCount, shape.streamFlags, shape.device);
  const streamOf = (range: ChunkRange) => `s${range.index % streamCount}`;
  const body: Op[] = [];
  if (order === 'depth-first') {
    for (const r of shape.ranges) {
      body.push(...loadOps(shape, r, streamOf(r), r.index), ...kernelOps(shape.kernels, r, streamOf(r), r.index), ...storeOps(shape, r, streamOf(r), r.index));
    }
  } else {
    for (const r of shape.ranges) body.push(...loadOps(shape, r, streamOf(r), r.index));
    for (const r of shape.ranges) body.push(...kernelOps(shape.kernels, r, streamOf(r), r.index));
    for (const r of shape.ranges) body.push(...storeOps(shape, r, streamOf(r), r.index));
  }
  const description = `${shape.ranges.length} chunks over ${streamCount} streams, ${order}`;
  return timedSchedule(id, 'overlapped', description, streams, body, true, shape.gated);
}

/** Each stage alone on whole buffers: what the bound is built from. */
export function stageSchedules(shape: PipelineShape): Schedule[] {
  const whole = WHOLE(shape.elements);
  const one = makeStreams(1, shape.streamFlags, shape.device);
  const schedules: Schedule[] = [];
  const h2d = loadOps(shape, whole, 's0', null);
  if (h2d.length) schedules.push(timedSchedule('h2d', 'stage', 'H2D of every input, whole buffers', one, h2d, false, shape.gated));
  for (const kernel of shape.kernels) {
    schedules.push(timedSchedule(`kernel:${kernel}`, 'stage', `kernel ${kernel} alone on whole buffers`, one, kernelOps([kernel], whole, 's0', null), false, shape.gated));
  }
  const d2h = storeOps(shape, whole, 's0', null);
  if (d2h.length) schedules.push(timedSchedule('d2h', 'stage', 'D2H of every output, whole buffers', one, d2h, false, shape.gated));
  return schedules;
}

/**
 * H2D and D2H at once: each direction's bytes cut into `ranges` (a pipeline passes its own chunks, so the link is
 * measured with the copies the pipeline makes), spread over `streamsPerDirection` streams per direction and issued
 * alternately. Two whole-buffer copies understate the link; this is what it can do. Null when the buffers move
 * data one way only.
 */
export function bidirectionalSchedule(
  buffers: readonly ConfigBuffer[],
  ranges: readonly ChunkRange[],
  device: number,
  gated: boolean,
  streamsPerDirection = 2,
): Schedule | null {
  const up = loads(buffers);
  const down = stores(buffers);
  if (!up.length || !down.length) return null;
  const streams = makeStreams(2 * streamsPerDirection, 'non-blocking', device);
  const body: Op[] = [];
  for (const r of ranges) {
    const upStream = `s${r.index % streamsPerDirection}`;
    const downStream = `s${streamsPerDirection + (r.index % streamsPerDirection)}`;
    for (const b of up) body.push(copyOp(b, r, 'h2d', upStream, r.index));
    for (const b of down) body.push(copyOp(b, r, 'd2h', downStream, r.index));
  }
  const description = `H2D and D2H at once, ${ranges.length} copies per buffer over ${streamsPerDirection} streams per direction`;
  return timedSchedule('bidirectional', 'link', description, streams, body, false, gated);
}
