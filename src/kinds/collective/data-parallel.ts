import { UsageError } from '../../errors.js';
import {
  type EventSpec,
  isEventOp,
  type Plan,
  type PlanOp,
  type Schedule,
  type StreamSpec,
} from '../../model/schedule.js';
import type { PlanPassContext } from '../api/index.js';
import { type CollectiveOp, isCollectiveOp } from './spec.js';

// Data parallelism from one process, as DDP lays it out: every device runs the same pipeline over the whole
// buffers (its own device memory, the same seeded host inputs), with its own compute and communication streams,
// and each bucket's collective is one call per device, all issued inside one NCCL group. A mode whose body has a
// collective runs on every device at once (a rank of a communicator cannot run alone: its peers would never come);
// the modes without one (each copy alone, the link, the small ops) stay on the first device, as they do for a split.

/** Whether a schedule's body issues a collective. */
export const hasCollective = (schedule: Pick<Schedule, 'body'>): boolean =>
  schedule.body.some((op) => op.kind === 'collective');

/** A one-device name moved onto `device`: streams and events alike ("d1:comm", "d1:bucket:0"). */
const on = (device: number, id: string) => `d${device}:${id}`;

/** The one-device body on `device`: its streams and the events it records and waits on renamed. */
function moved(body: readonly PlanOp[], device: number): PlanOp[] {
  return body.map((op) =>
    isEventOp(op)
      ? { ...op, stream: on(device, op.stream), event: on(device, op.event) }
      : { ...op, stream: on(device, op.stream) },
  );
}

/** A body cut at its collectives: the ops before the first, each collective, the ops between, and so on. */
function cut(body: readonly PlanOp[]): { readonly runs: PlanOp[][]; readonly calls: CollectiveOp[] } {
  const runs: PlanOp[][] = [[]];
  const calls: CollectiveOp[] = [];
  for (const op of body) {
    if (isCollectiveOp(op)) {
      calls.push(op);
      runs.push([]);
    } else (runs[runs.length - 1] as PlanOp[]).push(op);
  }
  return { runs, calls };
}

/**
 * The devices' bodies in one issue order: each device's ops up to its next collective, device after device, then
 * that bucket's collective on every device as one group (the first device's call opens it, the last's closes it).
 * Each device's own order is kept, which is all its streams depend on.
 */
export function groupedBody(bodies: ReadonlyArray<readonly PlanOp[]>): PlanOp[] {
  const cuts = bodies.map(cut);
  const buckets = cuts[0]?.calls.length ?? 0;
  if (cuts.some((c) => c.calls.length !== buckets))
    throw new RangeError('every device of a data-parallel schedule issues the same collectives');
  const out: PlanOp[] = [];
  for (let i = 0; i <= buckets; i++) {
    for (const c of cuts) out.push(...(c.runs[i] ?? []));
    if (i === buckets) break;
    cuts.forEach((c, k) => {
      const call: CollectiveOp = {
        ...(c.calls[i] as CollectiveOp),
        group: { opens: k === 0, closes: k === cuts.length - 1 },
      };
      out.push(call);
    });
  }
  return out;
}

/** A one-device schedule run on every device at once, timed as a split is (each device's own start and end too). */
export function replicated(
  schedule: Schedule,
  devices: readonly number[],
  spanningSchedule: PlanPassContext['spanning'],
): Schedule {
  if (schedule.probes?.length) {
    throw new UsageError(
      `${schedule.description} times probes of its own, which a data-parallel run across devices ${devices.join(', ')} does not replicate.`,
      {
        hint: 'Leave latency: out of a config with a collective stage run on several devices.',
      },
    );
  }
  // The timed region's own events are made again around the devices; the body's (bucket and reduced events) move.
  const own = new Set([schedule.start, schedule.end, ...schedule.streams.map((s) => `join:${s.id}`)]);
  const bodyEvents = schedule.events.filter((e) => !own.has(e.id));
  const events: EventSpec[] = devices.flatMap((device) =>
    bodyEvents.map((e) => ({ ...e, id: on(device, e.id), device })),
  );
  const parts = devices.map((device) => ({
    device,
    streams: schedule.streams.map((s): StreamSpec => ({ ...s, id: on(device, s.id), device })),
  }));
  const spanning = spanningSchedule({
    role: schedule.role,
    description: `${schedule.description}, on GPUs ${devices.join(', ')} at once (data-parallel: one NCCL rank each)`,
    parts,
    body: groupedBody(devices.map((device) => moved(schedule.body, device))),
    ranges: schedule.ranges,
    verify: schedule.verify,
    gated: schedule.gated,
    events,
  });
  // A collective's bytes are per rank (as nccl-tests counts a message), not summed over the ranks.
  const collective = schedule.bytes.collective;
  return { ...spanning, bytes: { ...spanning.bytes, ...(collective === undefined ? {} : { collective }) } };
}

/**
 * The one-device plan (planned on the first device) made data-parallel over `devices`: every mode with a collective
 * replicated on each, every other device holding whole buffers of its own beside the first's.
 */
export function dataParallel(plan: Plan, devices: readonly number[], context: PlanPassContext): Plan {
  if (context.graph) {
    throw new UsageError(
      `A data-parallel run over devices ${devices.join(', ')} issues each bucket's collectives across devices in one NCCL group from one thread, which cuda-pipe does not capture into a CUDA graph.`,
      {
        hint: 'Use pipeline.mode: stream (or --mode stream) with several devices, or capture on one GPU per process: mpirun -np N cuda-pipe run … --mode graph.',
      },
    );
  }
  return {
    ...plan,
    devices: [...devices],
    schedules: plan.schedules.map((s) => (hasCollective(s) ? replicated(s, devices, context.spanning) : s)),
    placements: devices
      .slice(1)
      .map((device) => ({ device, elements: plan.device.elements, base: 0, ownOutputs: true })),
    notes: [
      ...plan.notes,
      `Data-parallel over GPUs ${devices.join(', ')}: every mode with a collective runs the same pipeline on each GPU at once (whole buffers, the same inputs), each bucket's collective grouped across them; the modes without one run on GPU ${devices[0]} alone.`,
    ],
  };
}
