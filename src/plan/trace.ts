import type { EventSpec, Op, Schedule, WorkOp } from './types.js';
import { isWorkOp } from './types.js';

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

/**
 * The same schedule with a timing event recorded right before and right after every work op, on the op's own stream.
 * The events perturb the timing (a few per cent on the reference H100), so a traced rep is never a timed one.
 */
export function traceSchedule(schedule: Schedule): TracedSchedule {
  const body: Op[] = [];
  const events: EventSpec[] = [...schedule.events];
  const spans: TracedSpan[] = [];
  schedule.body.forEach((op, index) => {
    if (!isWorkOp(op)) {
      body.push(op);
      return;
    }
    const begin = `trace:${index}:begin`;
    const end = `trace:${index}:end`;
    events.push({ id: begin, timing: true }, { id: end, timing: true });
    body.push({ kind: 'record', stream: op.stream, event: begin });
    spans.push({ op, begin, end, bodyIndex: body.length });
    body.push(op, { kind: 'record', stream: op.stream, event: end });
  });
  return { schedule: { ...schedule, id: `${schedule.id}:traced`, events, body }, spans };
}
