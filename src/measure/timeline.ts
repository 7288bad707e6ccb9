import { type Plan, scheduleDevices, streamDevices } from '../plan/types.js';
import type { TimelineOp, TracedRep } from '../result/timeline.js';
import { type PriorityRange, resolvePriority } from '../plan/priority.js';
import { stageOf, timelineFields } from '../kinds/index.js';
import type { EngineSource, TracedRepTiming } from './runner.js';

/**
 * A kernel's bytes on the timeline: one item of every chunked buffer it is given, per item of its range, so a
 * kernel's bar can carry a rate like a copy's. Resident buffers are left out: how much of one a kernel reads is its
 * own.
 */
export function kernelRangeBytes(
  plan: Pick<Plan, 'kernels' | 'buffers'>,
): (op: { kernel: string; count: number }) => number {
  const bytesOf = (name: string) => {
    const b = plan.buffers.find((buffer) => buffer.name === name);
    return b && b.role !== 'resident' ? b.itemSize * b.elementBytes : 0;
  };
  const perElement = new Map(
    plan.kernels.map((k) => [
      k.label,
      k.args.reduce((sum, arg) => sum + (arg.kind === 'buffer' ? bytesOf(arg.buffer) : 0), 0),
    ]),
  );
  return (op) => op.count * (perElement.get(op.kernel) ?? 0);
}

/** A traced rep as the Result's timeline records it: every work op with its stream, chunk, bytes and times. */
export function timelineRep(
  traced: TracedRepTiming,
  kernelBytes: (op: { kernel: string; count: number }) => number,
  priorities: PriorityRange,
): TracedRep {
  const [rep] = timelineReps(traced, kernelBytes, () => priorities);
  if (!rep) throw new Error(`traced rep of ${traced.schedule.id} has no device`);
  return rep;
}

/**
 * The same, one rep per device for a schedule that spans devices (the renderers draw a mode's reps of several
 * devices as one chart, a block of rows per device): each with its own streams and ops, timed from its own start.
 */
export function timelineReps(
  traced: TracedRepTiming,
  kernelBytes: (op: { kernel: string; count: number }) => number,
  priorities: (device: number) => PriorityRange,
): TracedRep[] {
  const { schedule } = traced;
  const deviceOf = streamDevices(schedule);
  const ops = traced.ops.map(({ span, startMs, endMs, issuedMs, hostStartedMs, hostEndedMs }): TimelineOp => {
    const { op } = span;
    const device = deviceOf(op.stream);
    const common = { mode: schedule.id, device, stream: op.stream, chunk: op.chunk, startMs, endMs, issuedMs };
    const fields = timelineFields(op, kernelBytes);
    return {
      ...common,
      kind: stageOf(op).id,
      ...fields,
      // Only ops that run on the host (their host call's tag) carry these.
      ...(hostStartedMs === undefined || hostEndedMs === undefined ? {} : { hostStartedMs, hostEndedMs }),
    };
  });
  const workerTasks = traced.kindRep?.workerTasks;
  // The workers are the host's: their rows go with the schedule's own device.
  return scheduleDevices(schedule).map((device) => {
    const own = traced.ops.flatMap((timing, i) =>
      ops[i]!.device === device ? [{ op: ops[i]!, engineNs: timing.engineNs }] : [],
    );
    const engine = withEngineTimes(own, traced.engine);
    return {
      mode: schedule.id,
      device,
      issueMs: traced.issueMs,
      ...(traced.originEpochMs === undefined ? {} : { originEpochMs: traced.originEpochMs }),
      totalMs: traced.deviceTotalsMs?.find((t) => t.device === device)?.totalMs ?? traced.totalMs,
      streams: schedule.streams
        .filter((s) => s.device === device)
        .map((s) => ({
          id: s.id,
          flags: s.kind,
          priority: s.priority ? resolvePriority(s.priority, priorities(device)) : null,
        })),
      ops: engine.ops,
      ...(engine.timing ? { timing: engine.timing } : {}),
      ...(workerTasks && device === schedule.device ? { workerTasks } : {}),
    };
  });
}

/**
 * How far apart CUPTI's times and the events' may lie, ms, before the two are taken to disagree: a few times the
 * events' resolution and the lag of an event behind the op before it.
 */
export const ALIGN_TOLERANCE_MS = 0.005;

/**
 * CUPTI's times of one device's ops put on the events' clock (ms from the rep's start event). Each op's engine work
 * lies between the events recorded around it on its stream, so the offset from CUPTI's clock to the events' is at
 * least the largest (begin event - engine start) and at most the smallest (end event - engine end); both bounds are
 * as tight as the shortest lag between an event and the op beside it (µs). The midpoint is taken; a gap between
 * the bounds wider than ALIGN_TOLERANCE_MS means the records do not belong to these ops, and events are used alone.
 */
export function alignEngineTimes(
  ops: ReadonlyArray<{
    readonly startMs: number;
    readonly endMs: number;
    readonly engineNs?: { readonly start: number; readonly end: number } | undefined;
  }>,
): { readonly offsetMs: number; readonly withinMs: number } | { readonly mismatchMs: number } | null {
  let low = -Infinity;
  let high = Infinity;
  for (const op of ops) {
    if (!op.engineNs) continue;
    low = Math.max(low, op.startMs - op.engineNs.start / 1e6);
    high = Math.min(high, op.endMs - op.engineNs.end / 1e6);
  }
  if (low === -Infinity) return null;
  if (low > high + ALIGN_TOLERANCE_MS) return { mismatchMs: low - high };
  return { offsetMs: (low + high) / 2, withinMs: Math.abs(high - low) / 2 };
}

/**
 * One device's ops with their engine times on the events' clock, and the rep's timing source, when the runner said one.
 */
export function withEngineTimes(
  own: ReadonlyArray<{
    readonly op: TimelineOp;
    readonly engineNs?: { readonly start: number; readonly end: number } | undefined;
  }>,
  source: EngineSource | undefined,
): { ops: TimelineOp[]; timing: TracedRep['timing'] } {
  const plain = own.map((o) => o.op);
  if (source === undefined) return { ops: plain, timing: undefined };
  if (source.source === 'events') return { ops: plain, timing: { source: 'events', note: source.reason } };
  const aligned = alignEngineTimes(
    own.map((o) => ({ startMs: o.op.startMs, endMs: o.op.endMs, engineNs: o.engineNs })),
  );
  if (aligned === null)
    return { ops: plain, timing: { source: 'events', note: 'CUPTI recorded no copy or kernel of this device' } };
  if ('mismatchMs' in aligned) {
    return {
      ops: plain,
      timing: {
        source: 'events',
        note: `CUPTI's times do not fit between the events around their ops (${(aligned.mismatchMs * 1000).toFixed(1)} µs apart)`,
      },
    };
  }
  const ops = own.map(({ op, engineNs }) => {
    if (!engineNs) return op;
    // Within the tolerance an engine time may stray past its events; it is drawn between them.
    const engineStartMs = clamp(engineNs.start / 1e6 + aligned.offsetMs, op.startMs, op.endMs);
    return { ...op, engineStartMs, engineEndMs: clamp(engineNs.end / 1e6 + aligned.offsetMs, engineStartMs, op.endMs) };
  });
  return {
    ops,
    timing: {
      source: 'cupti',
      note: `engine times from CUPTI, put on the events' clock to within ±${(aligned.withinMs * 1000).toFixed(1)} µs`,
    },
  };
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
