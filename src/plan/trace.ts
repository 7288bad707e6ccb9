import type { EventSpec, Op, Schedule, WorkOp } from './types.js';
import { isWorkOp, streamDevices } from './types.js';

/** A work op of a traced schedule and the two timing events recorded around it on its stream. */
export interface TracedSpan {
  readonly op: WorkOp;
  readonly begin: string;
  readonly end: string;
  /** Index of the op in the traced schedule's body, for matching host issue times. */
  readonly bodyIndex: number;
}

export interface TracedSchedule {
  readonly schedule: Schedule;
  readonly spans: readonly TracedSpan[];
}

/** True for the events a traced schedule adds around its work ops. */
export function isTraceEvent(id: string): boolean {
  return id.startsWith('trace:');
}

/**
 * The same schedule with a timing event recorded right before and right after every work op, on the op's own stream.
 * The events perturb the timing (a few per cent on the reference H100), so a traced rep is never a timed one.
 * Over several devices each op is timed from its own device's start (the schedule's probes), since events of two
 * devices cannot be timed against each other.
 */
export function traceSchedule(schedule: Schedule): TracedSchedule {
  const deviceOf = streamDevices(schedule);
  const body: Op[] = [];
  const events: EventSpec[] = [...schedule.events];
  const spans: TracedSpan[] = [];
  const timed = (op: WorkOp, index: number) => {
    const begin = `trace:${index}:begin`;
    const end = `trace:${index}:end`;
    // On the op's own device (a schedule may span devices): an event is recorded on a stream of its device.
    const device = deviceOf(op.stream);
    const on = device === schedule.device ? {} : { device };
    events.push({ id: begin, timing: true, ...on }, { id: end, timing: true, ...on });
    return { op, begin, end };
  };
  // A group of collectives across devices is enqueued when it closes: an event recorded between its calls would
  // land before them on their streams. Every call's begin goes before the group, every end after it.
  let group: { op: WorkOp; begin: string; end: string }[] | null = null;
  for (const [index, op] of schedule.body.entries()) {
    if (!isWorkOp(op)) {
      body.push(op);
      continue;
    }
    const span = timed(op, index);
    const grouped = 'group' in op ? op.group : undefined;
    if (grouped || group) {
      group ??= [];
      group.push(span);
      if (!grouped?.closes) continue;
      for (const g of group) body.push({ kind: 'record', stream: g.op.stream, event: g.begin });
      for (const g of group) {
        spans.push({ ...g, bodyIndex: body.length });
        body.push(g.op);
      }
      for (const g of group) body.push({ kind: 'record', stream: g.op.stream, event: g.end });
      group = null;
      continue;
    }
    body.push({ kind: 'record', stream: op.stream, event: span.begin });
    spans.push({ ...span, bodyIndex: body.length });
    body.push(op, { kind: 'record', stream: op.stream, event: span.end });
  }
  // A group still open here would leave its calls, and any op after them, out of the traced rep: a planner's bug
  // (exit 70), said here rather than traced as less work than the schedule runs.
  if (group) {
    const ops = group.map((g) => `${g.op.kind} on stream ${g.op.stream}`).join(', ');
    throw new Error(`${schedule.id}: a group of collectives never closes (${ops}); the traced rep would leave it out`);
  }
  return { schedule: { ...schedule, id: `${schedule.id}:traced`, events, body }, spans };
}
