import type { IssueOrder, OverlapLayout } from '../vocabulary.js';
import { withRingReuse } from './ring.js';
import { kernelOps, layoutVariant, loadOps, type PipelineShape, storeOps, timedSchedule } from './schedules.js';
import type { ChunkRange, EventSpec, Op, Schedule, StreamSpec } from './types.js';

/**
 * One stream per stage: every chunk's loads on `load`, its kernels on `compute`, its stores (and host stage) on
 * `store`. Chunk i's kernels wait on an event recorded after chunk i's loads, its stores on one recorded after its
 * kernels: producer and consumer. Under a ring, chunk i's loads also wait until chunk i − slots has left the slot.
 */
export function stagePerStreamSchedule(
  shape: PipelineShape,
  ranges: readonly ChunkRange[],
  order: IssueOrder,
): Schedule {
  const events: EventSpec[] = [];
  const stages = ranges.map((r) => {
    const load = loadOps(shape, r, 'load', r.index);
    const compute = kernelOps(shape, shape.kernels, r, 'compute', r.index);
    const store = storeOps(shape, r, 'store', r.index);
    const handOff = (ops: Op[], from: string, to: string, next: Op[]): [Op[], Op[]] => {
      if (!ops.length || !next.length) return [ops, next];
      const event = `${from === 'load' ? 'loaded' : 'computed'}:${r.index}`;
      events.push({ id: event, timing: false });
      return [
        [...ops, { kind: 'record', stream: from, event }],
        [{ kind: 'wait', stream: to, event }, ...next],
      ];
    };
    const [loaded, computeWaiting] = handOff(load, 'load', 'compute', compute);
    // A chunk without kernels hands its loads straight to the stores.
    const [computed, storeWaiting] = compute.length
      ? handOff(computeWaiting, 'compute', 'store', store)
      : handOff(loaded, 'load', 'store', store);
    return compute.length ? [loaded, computed, storeWaiting] : [computed, [], storeWaiting];
  });
  const body: Op[] =
    order === 'depth-first'
      ? stages.flatMap((s) => s.flat())
      : [0, 1, 2].flatMap((stage) => stages.flatMap((s) => s[stage] ?? []));
  const ring = shape.ring ? withRingReuse(body, shape.ring.ring.slots) : { body, events: [] };
  const streams: StreamSpec[] = ['load', 'compute', 'store'].map((id) => ({
    id,
    kind: shape.streamKind,
    device: shape.device,
  }));
  const layout: OverlapLayout = {
    chunks: ranges.length,
    streams: streams.length,
    order,
    topology: 'stage-per-stream',
    ...layoutVariant(shape),
  };
  return timedSchedule({
    role: { kind: 'overlapped', layout },
    device: shape.device,
    description:
      `${ranges.length} chunks, one stream per stage (load, compute, store), ${order}` +
      (shape.ring ? `, through ${shape.ring.ring.slots} device slots` : '') +
      (shape.host ? `, host ${shape.host} after each D2H` : ''),
    streams,
    body: ring.body,
    ranges,
    verify: true,
    gated: shape.gated,
    events: [...events, ...ring.events],
  });
}
