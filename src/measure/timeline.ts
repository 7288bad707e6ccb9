import { type Plan, scheduleDevices, streamDevices } from '../plan/types.js';
import type { TimelineOp, TracedRep } from '../result/schema.js';
import { type PriorityRange, resolvePriority } from '../plan/priority.js';
import type { TracedRepTiming } from './runner.js';

/**
 * A kernel's bytes on the timeline: one element of every buffer it is given, per element of its range, so a kernel's
 * bar can carry a rate like a copy's.
 */
export function kernelRangeBytes(plan: Pick<Plan, 'kernels' | 'buffers'>): (op: { kernel: string; count: number }) => number {
  const perElement = new Map(plan.kernels.map((k) => [k.label, k.args.reduce((sum, arg) =>
    sum + (arg.kind === 'buffer' ? (plan.buffers.find((b) => b.name === arg.buffer)?.elementBytes ?? 0) : 0), 0)]));
  return (op) => op.count * (perElement.get(op.kernel) ?? 0);
}

/** A traced rep as the Result's timeline records it: every work op with its stream, chunk, bytes and times. */
export function timelineRep(traced: TracedRepTiming, kernelBytes: (op: { kernel: string; count: number }) => number, priorities: PriorityRange): TracedRep {
  const [rep] = timelineReps(traced, kernelBytes, () => priorities);
  if (!rep) throw new Error(`traced rep of ${traced.schedule.id} has no device`);
  return rep;
}

/**
 * The same, one rep per device for a schedule that spans devices (the renderers draw a mode's reps of several
 * devices as one chart, a block of rows per device): each with its own streams and ops, timed from its own start.
 */
export function timelineReps(
  traced: TracedRepTiming, kernelBytes: (op: { kernel: string; count: number }) => number, priorities: (device: number) => PriorityRange,
): TracedRep[] {
  const { schedule } = traced;
  const deviceOf = streamDevices(schedule);
  const ops = traced.ops.map(({ span, startMs, endMs, issuedMs, hostStartedMs, hostEndedMs }): TimelineOp => {
    const { op } = span;
    const device = deviceOf(op.stream);
    const common = { mode: schedule.id, device, stream: op.stream, chunk: op.chunk, startMs, endMs, issuedMs };
    switch (op.kind) {
      case 'copy':
        return { ...common, kind: op.direction, buffer: op.buffer, kernel: null, bytes: op.bytes };
      case 'kernel':
        return { ...common, kind: 'kernel', buffer: null, kernel: op.kernel, bytes: kernelBytes(op) };
      case 'peer':
        return { ...common, kind: 'peer', buffer: op.buffer, kernel: null, bytes: op.bytes };
      case 'host':
        return {
          ...common, kind: 'host', buffer: null, kernel: null, bytes: 0,
          ...(hostStartedMs === undefined || hostEndedMs === undefined ? {} : { hostStartedMs, hostEndedMs }),
        };
    }
  });
  return scheduleDevices(schedule).map((device) => ({
    mode: schedule.id, device, issueMs: traced.issueMs,
    totalMs: traced.deviceTotalsMs?.find((t) => t.device === device)?.totalMs ?? traced.totalMs,
    streams: schedule.streams.filter((s) => s.device === device)
      .map((s) => ({ id: s.id, flags: s.kind, priority: s.priority ? resolvePriority(s.priority, priorities(device)) : null })),
    ops: ops.filter((op) => op.device === device),
  }));
}
