import type { EventSpec, PlanOp, StreamSpec } from '../../model/schedule.js';
import type { BodyPassFacts, PassedBody } from '../api/index.js';
import { communicatorCtas, isCollectiveOp } from './spec.js';

// Collectives run on a communication stream of their device, in every topology, as DDP runs its all-reduces: the
// stage kind plans a collective on the chunk's compute stream, and this pass moves it, with the compute steps the
// config lists after it for the same chunk (what works on the reduced bucket, such as a checksum or an optimizer
// step). An event recorded on the compute stream after the compute that produced the bucket orders the collective
// after it; an event recorded on the communication stream after the moved ops orders the chunk's later ops (its D2H),
// on whatever stream they are, after them. The compute stream itself never waits for a collective, so the next
// bucket's compute overlaps it.

/** A work op: every op but the ordering and timing ops carries its chunk (the model's WorkOpBase). */
const isWork = (op: PlanOp): op is PlanOp & { readonly chunk: number | null } => 'chunk' in op;

/** The communication stream of a device: `comm` on the schedule's own device, `comm:d<n>` on another. */
const commStreamId = (device: number, scheduleDevice: number): string =>
  device === scheduleDevice ? 'comm' : `comm:d${device}`;

/**
 * Each collective's group: the body indexes of the collective and of the compute ops of its chunk that follow it on
 * the same stream, up to the chunk's first op of another kind there.
 */
function groups(body: readonly PlanOp[], computeKinds: ReadonlySet<string>): number[][] {
  const taken = new Set<number>();
  const found: number[][] = [];
  body.forEach((op, i) => {
    if (op.kind !== 'collective' || taken.has(i)) return;
    const group = [i];
    for (let j = i + 1; j < body.length; j++) {
      const next = body[j] as PlanOp;
      if (!isWork(next) || next.chunk !== op.chunk || next.stream !== op.stream) continue;
      if (!computeKinds.has(next.kind)) break;
      group.push(j);
    }
    for (const j of group) taken.add(j);
    found.push(group);
  });
  return found;
}

/**
 * The body with every collective (and the compute after it) moved to its device's communication stream and
 * ordered by events, the streams with the communication streams added, and the events it records. A body without
 * collectives comes back as it was.
 */
export function withCommStreams(
  {
    body,
    streams,
    device,
  }: { readonly body: readonly PlanOp[]; readonly streams: readonly StreamSpec[]; readonly device: number },
  facts: BodyPassFacts,
): PassedBody {
  const found = groups(body, facts.computeKinds);
  if (!found.length) return { body, streams, events: [] };
  // Refused here, as the plan is built (a dry run too): the communicators the collectives share take one count.
  communicatorCtas(body);
  const deviceOf = new Map(streams.map((s) => [s.id, s.device]));
  const added = new Map<string, StreamSpec>();
  const events: EventSpec[] = [];
  const leaderOf = new Map(found.map((g, n) => [g[0] as number, n]));
  const moved = new Set(found.flat());
  // Groups still to wait for: their chunk, their event, and the streams that already wait on it.
  const pending: { chunk: number | null; event: string; waited: Set<string> }[] = [];
  const out: PlanOp[] = [];
  body.forEach((op, i) => {
    const n = leaderOf.get(i);
    if (n !== undefined && isWork(op)) {
      const comm = commStreamId(deviceOf.get(op.stream) ?? device, device);
      // The stream takes the priority its first collective's entry gives (a config's collectives share the stream).
      const priority = isCollectiveOp(op) ? op.spec.priority : undefined;
      if (!added.has(comm))
        added.set(comm, {
          id: comm,
          kind: 'non-blocking',
          device: deviceOf.get(op.stream) ?? device,
          ...(priority ? { priority } : {}),
        });
      const bucket = `bucket:${n}`;
      const reduced = `reduced:${n}`;
      events.push({ id: bucket, timing: false }, { id: reduced, timing: false });
      out.push({ kind: 'record', stream: op.stream, event: bucket }, { kind: 'wait', stream: comm, event: bucket });
      for (const j of found[n] as number[]) out.push({ ...(body[j] as PlanOp), stream: comm } as PlanOp);
      out.push({ kind: 'record', stream: comm, event: reduced });
      pending.push({ chunk: op.chunk, event: reduced, waited: new Set([comm]) });
      return;
    }
    if (moved.has(i)) return;
    if (isWork(op)) {
      for (const p of pending) {
        if (p.chunk !== op.chunk || p.waited.has(op.stream)) continue;
        p.waited.add(op.stream);
        out.push({ kind: 'wait', stream: op.stream, event: p.event });
      }
    }
    out.push(op);
  });
  return { body: out, streams: [...streams, ...added.values()], events };
}
