import type { LatencySpec, PrioritySpec } from '../config/toolbox.js';
import { isWorkOp, stageOf } from '../kinds/index.js';
import type { IssueOrder } from '../vocabulary.js';
import { overlappedSchedule, type PipelineShape, timedSchedule } from './schedules.js';
import type { ChunkRange, EventSpec, Op, Schedule, StreamSpec } from './types.js';

/**
 * The overlapped pipeline with a latency-critical stream beside it: once chunk i's loads have finished (an event
 * recorded after them on the chunk's stream), the `urgent` stream launches one small kernel, with a timing event
 * right before and right after it. The time between the two is that kernel's latency: the wait for SMs that the
 * pipeline's kernels hold, plus its own run. `priorities`: the urgent stream gets the latency spec's priority and
 * the pipeline's streams theirs; without, every stream has the device's default, to compare against.
 */
export function latencySchedule(
  shape: PipelineShape,
  ranges: readonly ChunkRange[],
  streams: number,
  order: IssueOrder,
  latency: LatencySpec,
  pipelinePriority: PrioritySpec | null,
  priorities: boolean,
): Schedule {
  const base = overlappedSchedule(shape, ranges, streams, order);
  const events: EventSpec[] = [];
  const probes: Array<{ begin: string; end: string }> = [];
  const body: Op[] = [];
  const loadsLeft = new Map<number, number>();
  // A chunk's loads: the ops of the stage kinds whose phase is load.
  const loadOf = (op: Op) => (isWorkOp(op) && stageOf(op).phase === 'load' ? op.chunk : null);
  for (const op of base.body) {
    const chunk = loadOf(op);
    if (chunk !== null) loadsLeft.set(chunk, (loadsLeft.get(chunk) ?? 0) + 1);
  }
  for (const op of base.body) {
    body.push(op);
    const chunk = loadOf(op);
    if (chunk === null) continue;
    const left = (loadsLeft.get(chunk) ?? 1) - 1;
    loadsLeft.set(chunk, left);
    if (left > 0) continue;
    const i = chunk;
    const ready = `urgent:ready:${i}`;
    const probe = { begin: `urgent:${i}:begin`, end: `urgent:${i}:end` };
    events.push({ id: ready, timing: false }, { id: probe.begin, timing: true }, { id: probe.end, timing: true });
    probes.push(probe);
    body.push(
      { kind: 'record', stream: op.stream, event: ready },
      { kind: 'wait', stream: 'urgent', event: ready },
      { kind: 'record', stream: 'urgent', event: probe.begin },
      {
        kind: 'kernel',
        stream: 'urgent',
        kernel: latency.kernel,
        chunk: null,
        first: 0,
        count: latency.elements,
        deviceFirst: 0,
      },
      { kind: 'record', stream: 'urgent', event: probe.end },
    );
  }
  const withPriority = (s: StreamSpec, p: PrioritySpec | null): StreamSpec =>
    priorities && p ? { ...s, priority: p } : s;
  const urgent: StreamSpec = withPriority(
    { id: 'urgent', kind: shape.streamKind, device: shape.device },
    latency.priority,
  );
  const schedule = timedSchedule({
    role: { kind: 'latency', kernel: latency.kernel, priorities },
    device: shape.device,
    description:
      `${base.description}, with ${latency.kernel} on an urgent stream after each chunk's load, ` +
      (priorities ? 'with priorities' : 'every stream at the default priority'),
    streams: [...base.streams.map((s) => withPriority(s, pipelinePriority)), urgent],
    body,
    ranges,
    verify: true,
    gated: shape.gated,
    events: [...base.events.filter((e) => !['start', 'end'].includes(e.id) && !e.id.startsWith('join:')), ...events],
  });
  return { ...schedule, probes };
}
