import { stageOf } from '../kinds/index.js';
import { isWorkOp, type EventSpec, type Op, type WorkOp } from './types.js';

/** Ops that read or write device slots, as their stage kind says; event ops touch none. */
const touchesDevice = (op: Op): op is WorkOp => isWorkOp(op) && stageOf(op).touchesDevice;

/**
 * Makes a body safe to run on a ring of `slots` device slots: chunk i reuses the slot of chunk i − slots, so its
 * first device op must wait until every device op of that chunk has finished. Where the two are on different
 * streams, an event recorded after the old chunk's last device op is waited on before the new chunk's first one
 * (on the same stream, stream order already guarantees it). The old chunk's ops must be issued first: a wait
 * binds to the last record issued before it, so a body that issues the new chunk earlier cannot be made safe.
 */
export function withRingReuse(body: readonly Op[], slots: number): { body: Op[]; events: EventSpec[] } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  body.forEach((op, i) => {
    if (!touchesDevice(op) || op.chunk === null) return;
    if (!first.has(op.chunk)) first.set(op.chunk, i);
    last.set(op.chunk, i);
  });
  const recordsAfter = new Map<number, Op[]>();
  const waitsBefore = new Map<number, Op[]>();
  const events: EventSpec[] = [];
  for (const [chunk, start] of first) {
    const previous = chunk - slots;
    const end = last.get(previous);
    if (end === undefined) continue;
    if (end > start) {
      throw new RangeError(
        `chunk ${chunk} is issued before chunk ${previous} has left its slot: a ring of device slots needs depth-first issue`,
      );
    }
    const from = body[end] as Op;
    const to = body[start] as Op;
    if (from.stream === to.stream) continue;
    const event = `slot-free:${previous}`;
    events.push({ id: event, timing: false });
    recordsAfter.set(end, [...(recordsAfter.get(end) ?? []), { kind: 'record', stream: from.stream, event }]);
    waitsBefore.set(start, [...(waitsBefore.get(start) ?? []), { kind: 'wait', stream: to.stream, event }]);
  }
  const out: Op[] = [];
  body.forEach((op, i) => out.push(...(waitsBefore.get(i) ?? []), op, ...(recordsAfter.get(i) ?? [])));
  return { body: out, events };
}
