import type { Config, ConfigBuffer } from '../config/types.js';
import { wholeRange } from '../chunking.js';
import {
  type DefaultStream,
  type DefaultStreamOp,
  type IssueOrder,
  type ModeRole,
  modeId,
  type OverlapLayout,
  type PlacedDefaultOp,
  type StreamKind,
} from '../vocabulary.js';
import { aloneSchedules, bodyPasses, type ChunkWork, type ComputeStep, opBytes, phaseOps } from '../kinds/index.js';
import { withRingReuse } from './ring.js';
import type { ChunkRange, EventSpec, Op, PlanKernel, Ring, Schedule, StreamSpec, WorkOp } from './types.js';
import type { TimedScheduleSpec as ModelTimedSpec } from '../model/schedule.js';

// Schedule builders: each turns a pipeline shape into one Schedule. The timed region is the same for all of them:
// the prologue records `start` on the first stream and makes every other stream wait on it, the body is the work,
// the epilogue joins every stream back into the first with an event and records `end`.

export interface PipelineShape {
  readonly device: number;
  readonly buffers: readonly ConfigBuffer[];
  /** The labels of the compute steps each chunk runs, in order (kernels and library calls alike). */
  readonly kernels: readonly string[];
  /** The compute steps that are not kernels (library calls), by label; a label absent here is a kernel. */
  readonly steps?: ReadonlyMap<string, ComputeStep>;
  readonly elements: number;
  readonly streamKind: StreamKind;
  readonly gated: boolean;
  /** Under a device-memory budget, every mode cycles the pipeline's chunks through these slots. */
  readonly ring?: { readonly ring: Ring; readonly ranges: readonly ChunkRange[] } | null;
  /** The host function after each chunk's D2H, or null. */
  readonly host?: string | null;
  /** The element of the whole buffers that this device's buffers start at (its share's first); 0 when absent. */
  readonly base?: number;
}

export function makeStreams(count: number, kind: StreamKind, device: number, prefix = 's'): StreamSpec[] {
  return Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, kind, device }));
}

/** A timed schedule as its builder is given it (the model's, over the listed kinds' ops). */
export type TimedScheduleSpec = ModelTimedSpec<WorkOp>;

export function timedSchedule(given: TimedScheduleSpec): Schedule {
  const passed = bodyPasses(given.body, given.streams, given.device);
  const spec = { ...given, body: passed.body, streams: passed.streams };
  const id = modeId(spec.role);
  const [origin, ...others] = spec.streams;
  if (!origin) throw new RangeError(`schedule ${id} needs at least one stream`);
  const events: EventSpec[] = [
    { id: 'start', timing: true },
    { id: 'end', timing: true },
    ...(spec.events ?? []),
    ...passed.events,
  ];
  // The gate sits before `start` on the first stream, and every other stream waits on `start`: one gate holds all.
  const prologue: Op[] = [
    ...(spec.gated ? [{ kind: 'gate', stream: origin.id } as const] : []),
    { kind: 'record', stream: origin.id, event: 'start' },
  ];
  for (const s of others) prologue.push({ kind: 'wait', stream: s.id, event: 'start' });
  const epilogue: Op[] = [];
  for (const s of others) {
    const join = `join:${s.id}`;
    events.push({ id: join, timing: false });
    epilogue.push({ kind: 'record', stream: s.id, event: join }, { kind: 'wait', stream: origin.id, event: join });
  }
  epilogue.push({ kind: 'record', stream: origin.id, event: 'end' });
  return regionSchedule(spec, {
    device: spec.device,
    streams: spec.streams,
    events,
    prologue,
    epilogue,
    issue: spec.issue ?? 'stream',
  });
}

/**
 * A schedule from its body and the timed region around it (from `start` to `end`), whether the region is on one device
 * (`timedSchedule`) or spans several (plan/devices.ts's `spanningSchedule`, with each device's probes).
 */
export function regionSchedule(
  spec: Pick<TimedScheduleSpec, 'role' | 'description' | 'body' | 'ranges' | 'verify' | 'gated'>,
  region: Pick<Schedule, 'device' | 'streams' | 'events' | 'prologue' | 'epilogue' | 'issue' | 'probes'>,
): Schedule {
  return {
    id: modeId(spec.role),
    role: spec.role,
    device: region.device,
    description: spec.description,
    streams: region.streams,
    events: region.events,
    prologue: region.prologue,
    body: spec.body,
    epilogue: region.epilogue,
    start: 'start',
    end: 'end',
    verify: spec.verify,
    gated: spec.gated,
    bytes: bodyBytes(spec.body),
    ranges: spec.ranges,
    issue: region.issue,
    ...(region.probes ? { probes: region.probes } : {}),
  };
}

/** The bytes a body copies each way, and between devices where it copies any (absent otherwise). */
export function bodyBytes(body: readonly Op[]): Schedule['bytes'] {
  const { h2d, d2h, peer, collective } = opBytes(body);
  return { h2d, d2h, ...(peer ? { peer } : {}), ...(collective ? { collective } : {}) };
}

/**
 * The pipeline as the planner shapes it on the config's device: its buffers, and the compute steps each chunk runs
 * in the config's order (the latency kernel runs on its urgent stream only, never per chunk).
 */
export function pipelineShape(
  config: Config,
  kernels: readonly Pick<PlanKernel, 'label'>[],
  gated: boolean,
): PipelineShape {
  const steps = config.steps ?? kernels.map((k): ComputeStep => ({ stage: 'kernel', label: k.label, spec: null }));
  return {
    device: config.device,
    buffers: config.buffers,
    kernels: steps.map((s) => s.label).filter((k) => k !== config.latency?.kernel),
    steps: new Map(steps.filter((s) => s.stage !== 'kernel').map((s) => [s.label, s])),
    elements: config.elements,
    streamKind: config.pipeline.streamKind,
    gated,
    host: config.host?.name ?? null,
  };
}

/** Where a chunk lives in the device buffers: its own range, or its slot of the ring. */
export function deviceFirst(shape: Pick<PipelineShape, 'ring' | 'base'>, range: ChunkRange): number {
  const ring = shape.ring?.ring;
  return ring ? (range.index % ring.slots) * ring.slotElements : range.first - (shape.base ?? 0);
}

export const loads = (buffers: readonly ConfigBuffer[]) => buffers.filter((b) => b.role === 'in' || b.role === 'inout');
export const stores = (buffers: readonly ConfigBuffer[]) =>
  buffers.filter((b) => b.role === 'out' || b.role === 'inout');

/** One chunk's work as its stage kinds plan it. */
const chunkWork = (
  shape: PipelineShape,
  kernels: readonly string[],
  range: ChunkRange,
  stream: string,
  chunk: number | null,
): ChunkWork => ({
  buffers: shape.buffers,
  compute: kernels.map((label) => shape.steps?.get(label) ?? { stage: 'kernel', label, spec: null }),
  host: shape.host || null,
  range,
  deviceFirst: deviceFirst(shape, range),
  stream,
  chunk,
});

export function loadOps(shape: PipelineShape, range: ChunkRange, stream: string, chunk: number | null): Op[] {
  return phaseOps('load', chunkWork(shape, shape.kernels, range, stream, chunk));
}

/** The chunk's D2H copies, then the host stage over them when there is one. */
export function storeOps(shape: PipelineShape, range: ChunkRange, stream: string, chunk: number | null): Op[] {
  return phaseOps('store', chunkWork(shape, shape.kernels, range, stream, chunk));
}

export function kernelOps(
  shape: PipelineShape,
  kernels: readonly string[],
  range: ChunkRange,
  stream: string,
  chunk: number | null,
): Op[] {
  return phaseOps('compute', chunkWork(shape, kernels, range, stream, chunk));
}

/** Whole buffers, or under a ring the pipeline's chunks one after the other: the ranges a one-stream mode walks. */
function oneStreamRanges(shape: PipelineShape): { ranges: readonly ChunkRange[]; chunked: boolean } {
  return shape.ring
    ? { ranges: shape.ring.ranges, chunked: true }
    : { ranges: [wholeRange(shape.elements)], chunked: false };
}

const ringNote = (shape: PipelineShape) =>
  shape.ring ? `, chunked through ${shape.ring.ring.slots} device slots` : '';

/** Whole buffers on one stream: H2D, every kernel, D2H. The baseline every speedup is measured against. */
export function serialSchedule(shape: PipelineShape): Schedule {
  const { ranges, chunked } = oneStreamRanges(shape);
  const body = ranges.flatMap((r) => {
    const chunk = chunked ? r.index : null;
    return [
      ...loadOps(shape, r, 's0', chunk),
      ...kernelOps(shape, shape.kernels, r, 's0', chunk),
      ...storeOps(shape, r, 's0', chunk),
    ];
  });
  return timedSchedule({
    role: { kind: 'serial' },
    device: shape.device,
    description: `whole buffers on one stream: H2D, kernels, D2H${ringNote(shape)}`,
    streams: makeStreams(1, shape.streamKind, shape.device),
    body,
    ranges,
    verify: true,
    gated: shape.gated,
  });
}

/** The optional parts of an overlapped layout that this shape implies. */
export function layoutVariant(shape: PipelineShape): Pick<OverlapLayout, 'host' | 'slots'> {
  return { ...(shape.host ? { host: shape.host } : {}), ...(shape.ring ? { slots: shape.ring.ring.slots } : {}) };
}

const DEFAULT_STREAM_SPECS: Readonly<Record<DefaultStream, { readonly kind: StreamKind; readonly name: string }>> = {
  legacy: { kind: 'legacy-default', name: 'the legacy default stream' },
  'per-thread': { kind: 'per-thread-default', name: 'the per-thread default stream' },
};

/**
 * A chunk-per-stream layout: chunk i on stream i mod `streams`, issued depth-first or breadth-first. The caller
 * passes streams no more than the chunks (buildPlan decides and says so). `moved` puts one chunk's kernels (or its
 * loads) on a default stream, ordered against the chunk's own stream by events, to show what that one op costs.
 */
export function overlappedSchedule(
  shape: PipelineShape,
  ranges: readonly ChunkRange[],
  streams: number,
  order: IssueOrder,
  moved: PlacedDefaultOp | null = null,
): Schedule {
  const streamOf = (range: ChunkRange) => `s${range.index % streams}`;
  // The default stream's id is its name in the Result's timeline ('legacy', 'per-thread'), its events named after it.
  const d = moved?.stream ?? '';
  const isMoved = (r: ChunkRange, op: DefaultStreamOp['op']) =>
    moved !== null && r.index === moved.chunk && moved.op === op;
  const loadsOf = (r: ChunkRange): Op[] =>
    isMoved(r, 'h2d')
      ? [
          ...loadOps(shape, r, d, r.index),
          { kind: 'record', stream: d, event: `${d}:loaded` },
          { kind: 'wait', stream: streamOf(r), event: `${d}:loaded` },
        ]
      : loadOps(shape, r, streamOf(r), r.index);
  const kernelsOf = (r: ChunkRange): Op[] =>
    isMoved(r, 'kernel')
      ? [
          { kind: 'record', stream: streamOf(r), event: `${d}:loaded` },
          { kind: 'wait', stream: d, event: `${d}:loaded` },
          ...kernelOps(shape, shape.kernels, r, d, r.index),
          { kind: 'record', stream: d, event: `${d}:computed` },
          { kind: 'wait', stream: streamOf(r), event: `${d}:computed` },
        ]
      : kernelOps(shape, shape.kernels, r, streamOf(r), r.index);
  const body: Op[] = [];
  if (order === 'depth-first') {
    for (const r of ranges) body.push(...loadsOf(r), ...kernelsOf(r), ...storeOps(shape, r, streamOf(r), r.index));
  } else {
    for (const r of ranges) body.push(...loadsOf(r));
    for (const r of ranges) body.push(...kernelsOf(r));
    for (const r of ranges) body.push(...storeOps(shape, r, streamOf(r), r.index));
  }
  const ring = shape.ring ? withRingReuse(body, shape.ring.ring.slots) : { body, events: [] };
  const layout: OverlapLayout = {
    chunks: ranges.length,
    streams,
    order,
    topology: 'chunk-per-stream',
    ...layoutVariant(shape),
    ...(moved?.stream === 'legacy' ? { legacyOp: { chunk: moved.chunk, op: moved.op } } : {}),
    ...(moved?.stream === 'per-thread' ? { perThreadOp: { chunk: moved.chunk, op: moved.op } } : {}),
  };
  const defaultStream = moved ? DEFAULT_STREAM_SPECS[moved.stream] : null;
  return timedSchedule({
    role: { kind: 'overlapped', layout },
    device: shape.device,
    description:
      `${ranges.length} chunks over ${streams} streams, ${order}${ringNote(shape)}${shape.host ? `, host ${shape.host} after each D2H` : ''}` +
      (moved
        ? `, chunk ${moved.chunk}'s ${moved.op === 'h2d' ? 'loads' : 'kernel'} on ${DEFAULT_STREAM_SPECS[moved.stream].name}`
        : ''),
    streams: [
      ...makeStreams(streams, shape.streamKind, shape.device),
      ...(defaultStream ? [{ id: d, kind: defaultStream.kind, device: shape.device }] : []),
    ],
    body: ring.body,
    ranges,
    verify: true,
    gated: shape.gated,
    events: [
      ...ring.events,
      ...(moved?.op === 'kernel' ? [`${d}:loaded`, `${d}:computed`] : moved ? [`${d}:loaded`] : []).map((id) => ({
        id,
        timing: false,
      })),
    ],
  });
}

/**
 * The same schedule with its body captured once as a CUDA graph and replayed each rep: an overlapped layout, or the
 * kernels chunked as one runs them (the bound of a graph replay is built from parts measured the way a graph runs).
 */
export function asGraph(schedule: Schedule): Schedule {
  const { role: from } = schedule;
  if (from.kind !== 'overlapped' && from.kind !== 'kernels-chunked')
    throw new Error(`only overlapped layouts and their kernels are replayed as graphs, not ${schedule.id}`);
  const role: ModeRole = { kind: from.kind, layout: { ...from.layout, issue: 'graph' } };
  return {
    ...schedule,
    id: modeId(role),
    role,
    issue: 'graph',
    description: `${schedule.description}, replayed as a CUDA graph`,
  };
}

/** Each stage alone on whole buffers: what the bound is built from. */
export function stageSchedules(shape: PipelineShape): Schedule[] {
  const { ranges, chunked } = oneStreamRanges(shape);
  const one = makeStreams(1, shape.streamKind, shape.device);
  // The host stage is not a GPU stage: the bound is built from the GPU's stages alone.
  const gpuOnly: PipelineShape = { ...shape, host: null };
  const stage = (role: ModeRole, description: string, body: Op[]) =>
    timedSchedule({
      role,
      device: shape.device,
      description: description + ringNote(shape),
      streams: one,
      body,
      ranges,
      verify: false,
      gated: shape.gated,
    });
  const chunkOf = (r: ChunkRange) => (chunked ? r.index : null);
  const schedules: Schedule[] = [];
  const h2d = ranges.flatMap((r) => loadOps(gpuOnly, r, 's0', chunkOf(r)));
  if (h2d.length) schedules.push(stage({ kind: 'stage', stage: 'h2d' }, 'H2D of every input, whole buffers', h2d));
  for (const kernel of shape.kernels) {
    // A step whose kind times it alone itself is timed with the layouts (ownAloneSchedules).
    if (timesItself(shape, kernel)) continue;
    schedules.push(
      stage(
        { kind: 'stage', stage: 'kernel', kernel },
        `kernel ${kernel} alone on whole buffers`,
        ranges.flatMap((r) => kernelOps(gpuOnly, [kernel], r, 's0', chunkOf(r))),
      ),
    );
  }
  const d2h = ranges.flatMap((r) => storeOps(gpuOnly, r, 's0', chunkOf(r)));
  if (d2h.length) schedules.push(stage({ kind: 'stage', stage: 'd2h' }, 'D2H of every output, whole buffers', d2h));
  return schedules;
}

/** Whether a step's kind times it alone itself (a collective per bucket count), apart from the compute steps. */
const timesItself = (shape: PipelineShape, kernel: string) => ownAlone(shape, kernel, []) !== null;

/** A step's own schedules alone, by its kind's pass, over the layouts' chunk cuts; null where its kind has no pass. */
function ownAlone(
  shape: PipelineShape,
  kernel: string,
  layouts: readonly (readonly ChunkRange[])[],
): Schedule[] | null {
  const step = shape.steps?.get(kernel);
  if (!step) return null;
  const gpuOnly: PipelineShape = { ...shape, host: null };
  return aloneSchedules(step, {
    layouts,
    timed: (role, description, ranges) =>
      timedSchedule({
        role,
        device: shape.device,
        description,
        streams: makeStreams(1, shape.streamKind, shape.device),
        body: ranges.flatMap((r) => kernelOps(gpuOnly, [kernel], r, 's0', r.index)),
        ranges,
        verify: false,
        gated: shape.gated,
      }),
  });
}

/** The steps whose kinds time them alone themselves, at each distinct chunk count of the layouts. */
export function ownAloneSchedules(shape: PipelineShape, layouts: readonly (readonly ChunkRange[])[]): Schedule[] {
  const counts = [...new Map(layouts.map((ranges) => [ranges.length, ranges])).values()];
  return shape.kernels.flatMap((kernel) => ownAlone(shape, kernel, counts) ?? []);
}
