import { bytesPerItem, residentBytes } from '../config/items.js';
import type { Config, ConfigBuffer } from '../config/types.js';
import { ringSlots, splitRanges, wholeRange } from '../chunking.js';
import { eventCostSchedules } from './overhead.js';
import { type HostMemoryKind, type IssueOrder, type PlacedDefaultOp, SMALL_OPS } from '../vocabulary.js';
import {
  asGraph,
  overlappedSchedule,
  pipelineShape,
  type PipelineShape,
  serialSchedule,
  ownAloneSchedules,
  stageSchedules,
} from './schedules.js';
import {
  bidirectionalSchedule,
  kernelsChunkedSchedule,
  linkRanges,
  opCostSchedule,
  SMALL_OP_BATCH,
} from './part-schedules.js';
import type { LatencySpec, PrioritySpec } from '../config/toolbox.js';
import { referenceOf, spanningPass } from '../kinds/index.js';
import { spanningSchedule, withDevices } from './devices.js';
import { latencySchedule } from './latency.js';
import { stagePerStreamSchedule } from './stage-per-stream.js';
import { type ChunkRange, type Plan, type PlanKernel, planKernel, type Ring, type Schedule } from './types.js';

/** A chunk-per-stream layout as asked for; the planner may make fewer chunks or use fewer streams, and says so. */
export interface RequestedLayout {
  readonly chunks: number;
  readonly streams: number;
}

/**
 * Config → Plan: the serial baseline; the overlapped layouts (one per order, each also as a graph replay in graph
 * mode, without the host stage, or with one op on a default stream, legacy or per-thread); and what the overlap
 * model is built from: each stage alone, the kernels chunked as the layout runs them (and replayed as a graph in
 * graph mode), the link at its best, and the fixed cost of small ops.
 */
export function buildPlan(
  config: Config,
  kernels: readonly PlanKernel[],
  options: { gate?: boolean; devices?: readonly number[] | null } = {},
): Plan {
  const { chunks, streams } = config.pipeline;
  const plan = buildLayoutsPlan(config, kernels, [{ chunks, streams }], config.pipeline.orders, options);
  const devices = options.devices ?? config.devices;
  if (devices === 'all') throw new RangeError('devices: all must be counted before planning');
  if (!devices || devices.length <= 1) return plan;
  // Without a kind that lays the devices out (a collective's ranks of one data-parallel step), they share the input.
  return overDevices(plan, config, devices) ?? withDevices(plan, config, devices, { gated: options.gate ?? false });
}

/**
 * The plan laid out over `devices` by the whole-plan pass of a kind whose ops it holds; null where no such kind has
 * one.
 */
export function overDevices(plan: Plan, config: Pick<Config, 'pipeline'>, devices: readonly number[]): Plan | null {
  const pass = spanningPass(plan);
  return pass ? pass(plan, devices, { graph: config.pipeline.mode === 'graph', spanning: spanningSchedule }) : null;
}

/**
 * The same for many layouts at once (a sweep): every layout in every order, with one kernels-chunked mode per
 * distinct chunk and stream count; the serial baseline and the device-wide parts once. A device ring is sized for
 * the first layout, so a sweep under `deviceMemory` is refused before it gets here.
 */
export function buildLayoutsPlan(
  config: Config,
  kernels: readonly PlanKernel[],
  layouts: readonly RequestedLayout[],
  orders: readonly IssueOrder[],
  options: { gate?: boolean } = {},
): Plan {
  const gated = options.gate ?? false;
  const { align, topology } = config.pipeline;
  const notes: string[] = [...config.notes];
  const made = new Map<string, { ranges: ChunkRange[]; streams: number }>();
  for (const layout of layouts) {
    const ranges = splitRanges(config.elements, layout.chunks, align);
    const streams = Math.min(layout.streams, ranges.length);
    if (ranges.length < layout.chunks) {
      notes.push(
        `${layout.chunks} chunks asked for, ${ranges.length} made: ${config.elements} elements in equal chunks of ${ranges[0]?.count ?? 0} leave no room for more.`,
      );
    }
    // Stage per stream runs on its three streams whatever the count asked for: one layout per chunk count.
    const perStage = topology === 'stage-per-stream';
    if (!perStage && streams < layout.streams)
      notes.push(`${layout.streams} streams asked for, ${streams} used: there are only ${ranges.length} chunks.`);
    // A layout made twice (two requests cut the same) is set again with equal ranges, keeping its first place.
    made.set(perStage ? `${ranges.length}` : `${ranges.length}x${streams}`, { ranges, streams });
  }
  const [first] = made.values();
  if (!first) throw new RangeError('a plan needs at least one layout');
  const ring = ringOf(config, first.ranges);
  const shape: PipelineShape = {
    ...pipelineShape(config, kernels, gated),
    ring: ring ? { ring, ranges: first.ranges } : null,
  };
  const requested = layouts[0] as RequestedLayout; // not empty: `made` is not
  if (topology === 'stage-per-stream' && requested.streams !== 3) {
    notes.push(
      `stage-per-stream uses three streams (load, compute, store); pipeline.streams ${requested.streams} is not used.`,
    );
  }
  const link = bidirectionalSchedule(
    config.buffers,
    ring ? first.ranges : linkRanges(config.buffers, config.elements),
    config.device,
    gated,
    2,
    shape,
  );
  const firstOrder = orders[0] ?? 'depth-first';
  // Kernels without copies, over the whole buffers: not under a ring, whose device buffers hold only its slots.
  const streamIssued =
    shape.kernels.length && !ring && topology === 'chunk-per-stream'
      ? [...made.values()].map(({ ranges, streams }) => kernelsChunkedSchedule(shape, ranges, streams, firstOrder))
      : [];
  // A graph replay pays no host cost per op: its kernels are measured replayed as a graph too.
  const chunkedKernels =
    config.pipeline.mode === 'graph' ? [...streamIssued, ...streamIssued.map(asGraph)] : streamIssued;
  const serial = withPriority(serialSchedule(shape), config.pipeline.priority);
  const reference = referenceOf(serial);
  return {
    name: config.name,
    devices: [config.device],
    elements: config.elements,
    buffers: config.buffers,
    kernels: kernels.map(planKernel),
    pipeline: {
      elements: config.elements,
      align,
      requestedChunks: requested.chunks,
      requestedStreams: requested.streams,
      ...(config.items === null ? {} : { items: config.items }),
      ...(config.pipeline.connections === null ? {} : { connections: config.pipeline.connections }),
    },
    schedules: [
      serial,
      ...[...made.values()]
        .flatMap(({ ranges, streams }) => overlappedSchedules(config, shape, ranges, streams, orders))
        .map((s) => withPriority(s, config.pipeline.priority)),
      ...(config.latency
        ? [true, false].map((priorities) =>
            latencySchedule(
              shape,
              first.ranges,
              first.streams,
              firstOrder,
              config.latency as LatencySpec,
              config.pipeline.priority,
              priorities,
            ),
          )
        : []),
      ...stageSchedules(shape),
      ...ownAloneSchedules(
        shape,
        [...made.values()].map((m) => m.ranges),
      ),
      ...chunkedKernels,
      ...(link ? [link] : []),
      ...SMALL_OPS.flatMap((op) => opCostSchedule(shape, op) ?? []),
      ...eventCostSchedules(config.device, SMALL_OP_BATCH, wholeRange(config.elements)),
    ],
    notes: [...new Set(notes)],
    device: {
      elements: ring ? ring.slots * ring.slotElements : config.elements,
      ring,
      budgetBytes: config.deviceMemory,
    },
    host: config.host,
    placements: [],
    ...(reference ? { reference } : {}),
  };
}

/** The pipeline's own streams at the config's priority; the link and the stages alone keep the default. */
function withPriority(schedule: Schedule, priority: PrioritySpec | null): Schedule {
  return priority ? { ...schedule, streams: schedule.streams.map((s) => ({ ...s, priority })) } : schedule;
}

function ringOf(config: Config, ranges: readonly ChunkRange[]): Ring | null {
  const slotElements = ranges[0]?.count ?? config.elements;
  const slots = ringSlots({
    chunks: ranges.length,
    chunkElements: slotElements,
    bytesPerElement: bytesPerItem(config.buffers),
    // Resident buffers sit on the device whole beside the ring.
    budgetBytes: config.deviceMemory === null ? null : config.deviceMemory - residentBytes(config.buffers),
    slots: config.pipeline.slots,
  });
  // config/load.ts already refused budgets that hold no chunk, with the file's line.
  if (slots !== null && typeof slots === 'object') throw new RangeError(slots.error);
  return slots === null ? null : { slots, slotElements };
}

/** Every overlapped layout the config asks for; the first is the headline. */
function overlappedSchedules(
  config: Config,
  shape: PipelineShape,
  ranges: readonly ChunkRange[],
  streams: number,
  orders: readonly IssueOrder[],
): Schedule[] {
  const { topology, mode, defaultStreamOps } = config.pipeline;
  const layout = (s: PipelineShape, order: (typeof orders)[number], moved: PlacedDefaultOp | null = null) =>
    topology === 'stage-per-stream'
      ? stagePerStreamSchedule(s, ranges, order)
      : overlappedSchedule(s, ranges, streams, order, moved);
  const base = orders.map((order) => layout(shape, order));
  const first = orders[0] ?? 'depth-first';
  return [
    ...base,
    ...(mode === 'graph' ? base.map(asGraph) : []),
    // What the host stage costs the pipeline: the same layout without it.
    ...(shape.host ? [layout({ ...shape, host: null }, first)] : []),
    ...(topology === 'chunk-per-stream'
      ? defaultStreamOps.flatMap((moved) => orders.map((order) => layout(shape, order, moved)))
      : []),
  ];
}

/** Each direction's copies in the bidirectional bandwidth figure, as GPU-FACTS.md measured the link. */
export const BANDWIDTH_PIECES = 16;

/** Copies only, for `probe --bandwidth`: H2D alone, D2H alone, and both at once chunked over several streams. */
export function bandwidthPlan(bytes: number, hostMemory: HostMemoryKind, device: number, bidirectional: boolean): Plan {
  const buffer = (name: string, role: 'in' | 'out'): ConfigBuffer => ({
    name,
    type: 'uint8',
    elementBytes: 1,
    elements: bytes,
    bytes,
    itemSize: 1,
    role,
    init: { kind: 'random', seed: 7 },
    hostMemory,
  });
  const buffers = [buffer('upload', 'in'), buffer('download', 'out')];
  const shape: PipelineShape = {
    device,
    buffers,
    kernels: [],
    elements: bytes,
    streamKind: 'non-blocking',
    gated: false,
  };
  const link = bidirectional
    ? bidirectionalSchedule(buffers, splitRanges(bytes, BANDWIDTH_PIECES), device, false)
    : null;
  return {
    name: `bandwidth-${hostMemory}`,
    devices: [device],
    elements: bytes,
    buffers,
    kernels: [],
    pipeline: { elements: bytes, align: 1, requestedChunks: 1, requestedStreams: 1 },
    schedules: [...stageSchedules(shape), ...(link ? [link] : [])],
    notes: [],
    device: { elements: bytes, ring: null, budgetBytes: null },
    host: null,
    placements: [],
  };
}
