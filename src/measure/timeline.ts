import type { Plan } from '../plan/types.js';
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
  const { schedule } = traced;
  const ops = traced.ops.map(({ span, startMs, endMs, issuedMs, hostStartedMs, hostEndedMs }): TimelineOp => {
    const { op } = span;
    const common = { mode: schedule.id, device: schedule.device, stream: op.stream, chunk: op.chunk, startMs, endMs, issuedMs };
    switch (op.kind) {
      case 'copy':
        return { ...common, kind: op.direction, buffer: op.buffer, kernel: null, bytes: op.bytes };
      case 'kernel':
        return { ...common, kind: 'kernel', buffer: null, kernel: op.kernel, bytes: kernelBytes(op) };
      case 'peer':
        // A schedule that spans devices is never traced: its events could not be timed against one start.
        throw new Error(`schedule ${schedule.id} spans devices and has no timeline`);
      case 'host':
        return {
          ...common, kind: 'host', buffer: null, kernel: null, bytes: 0,
          ...(hostStartedMs === undefined || hostEndedMs === undefined ? {} : { hostStartedMs, hostEndedMs }),
        };
    }
  });
  return {
    mode: schedule.id, device: schedule.device, totalMs: traced.totalMs, issueMs: traced.issueMs,
    streams: schedule.streams.map((s) => ({ id: s.id, flags: s.kind, priority: s.priority ? resolvePriority(s.priority, priorities) : null })),
    ops,
  };
}
