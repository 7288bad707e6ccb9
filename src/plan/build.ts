import type { Config, ConfigBuffer } from '../config/load.js';
import type { HostMemoryKind } from '../vocabulary.js';
import { ringSlots, splitRanges } from '../chunking.js';
import { asGraph, bidirectionalSchedule, overlappedSchedule, type PipelineShape, serialSchedule, stageSchedules } from './schedules.js';
import type { LatencySpec, PrioritySpec } from '../config/toolbox.js';
import { latencySchedule } from './latency.js';
import { stagePerStreamSchedule } from './stage-per-stream.js';
import { type ChunkRange, type Plan, type PlanKernel, planKernel, type Ring, type Schedule } from './types.js';

/**
 * Config → Plan: the serial baseline, the overlapped layouts (one per order, each also as a graph replay in graph
 * mode, without the host stage, or with one kernel on the legacy default stream), each stage alone, and the link.
 */
export function buildPlan(config: Config, kernels: readonly PlanKernel[], options: { gate?: boolean } = {}): Plan {
  const gated = options.gate ?? false;
  const { chunks, streams, orders, streamKind, align } = config.pipeline;
  const ranges = splitRanges(config.elements, chunks, align);
  const usedStreams = Math.min(streams, ranges.length);
  const notes: string[] = [...config.notes];
  const ring = ringOf(config, ranges);
  if (ranges.length < chunks) {
    notes.push(`${chunks} chunks asked for, ${ranges.length} made: ${config.elements} elements in equal chunks of ${ranges[0]?.count ?? 0} leave no room for more.`);
  }
  if (usedStreams < streams) notes.push(`${streams} streams asked for, ${usedStreams} used: there are only ${ranges.length} chunks.`);
  const shape: PipelineShape = {
    // The latency kernel runs on the urgent stream only, never per chunk.
    device: config.device, buffers: config.buffers, kernels: kernels.map((k) => k.label).filter((k) => k !== config.latency?.kernel),
    elements: config.elements, streamKind, gated,
    ring: ring ? { ring, ranges } : null, host: config.host?.name ?? null,
  };
  if (config.pipeline.topology === 'stage-per-stream' && streams !== 3) notes.push(`stage-per-stream uses three streams (load, compute, store); pipeline.streams ${streams} is not used.`);
  // At least two copies a direction, so that the link mode keeps both of its streams per direction busy.
  const link = bidirectionalSchedule(config.buffers, ranges.length > 1 ? ranges : splitRanges(config.elements, 2), config.device, gated, 2, shape);
  return {
    name: config.name,
    devices: [config.device],
    elements: config.elements,
    buffers: config.buffers,
    kernels: kernels.map(planKernel),
    pipeline: { elements: config.elements, align, requestedChunks: chunks, requestedStreams: streams },
    schedules: [
      withPriority(serialSchedule(shape), config.pipeline.priority),
      ...overlappedSchedules(config, shape, ranges, usedStreams).map((s) => withPriority(s, config.pipeline.priority)),
      ...(config.latency ? [true, false].map((priorities) =>
        latencySchedule(shape, ranges, usedStreams, orders[0] ?? 'depth-first', config.latency as LatencySpec, config.pipeline.priority, priorities)) : []),
      ...stageSchedules(shape),
      ...(link ? [link] : []),
    ],
    notes,
    device: {
      elements: ring ? ring.slots * ring.slotElements : config.elements, ring, budgetBytes: config.deviceMemory,
    },
    host: config.host,
  };
}

/** The pipeline's own streams at the config's priority; the link and the stages alone keep the default. */
function withPriority(schedule: Schedule, priority: PrioritySpec | null): Schedule {
  return priority ? { ...schedule, streams: schedule.streams.map((s) => ({ ...s, priority })) } : schedule;
}

function ringOf(config: Config, ranges: readonly ChunkRange[]): Ring | null {
  const slotElements = ranges[0]?.count ?? config.elements;
  const slots = ringSlots({
    chunks: ranges.length, chunkElements: slotElements, bytesPerElement: config.buffers.reduce((sum, b) => sum + b.elementBytes, 0),
    budgetBytes: config.deviceMemory, slots: config.pipeline.slots,
  });
  // config/load.ts already refused budgets that hold no chunk, with the file's line.
  if (slots !== null && typeof slots === 'object') throw new RangeError(slots.error);
  return slots === null ? null : { slots, slotElements };
}

/** Every overlapped layout the config asks for; the first is the headline. */
function overlappedSchedules(config: Config, shape: PipelineShape, ranges: readonly ChunkRange[], streams: number): Schedule[] {
  const { orders, topology, mode, legacyDefaultOp } = config.pipeline;
  const layout = (s: PipelineShape, order: (typeof orders)[number], legacy: number | null = null) => (topology === 'stage-per-stream'
    ? stagePerStreamSchedule(s, ranges, order)
    : overlappedSchedule(s, ranges, streams, order, legacy));
  const base = orders.map((order) => layout(shape, order));
  const first = orders[0] ?? 'depth-first';
  return [
    ...base,
    ...(mode === 'graph' ? base.map(asGraph) : []),
    // What the host stage costs the pipeline: the same layout without it.
    ...(shape.host ? [layout({ ...shape, host: null }, first)] : []),
    ...(legacyDefaultOp && topology === 'chunk-per-stream' ? orders.map((order) => layout(shape, order, legacyDefaultOp.chunk)) : []),
  ];
}

/** Each direction's copies in the bidirectional bandwidth figure, as GPU-FACTS.md measured the link. */
export const BANDWIDTH_PIECES = 16;

/** Copies only, for `probe --bandwidth`: H2D alone, D2H alone, and both at once chunked over several streams. */
export function bandwidthPlan(bytes: number, hostMemory: HostMemoryKind, device: number, bidirectional: boolean): Plan {
  const buffer = (name: string, role: 'in' | 'out'): ConfigBuffer => ({
    name, type: 'uint8', elementBytes: 1, elements: bytes, bytes, role, init: { kind: 'random', seed: 7 }, hostMemory,
  });
  const buffers = [buffer('upload', 'in'), buffer('download', 'out')];
  const shape: PipelineShape = { device, buffers, kernels: [], elements: bytes, streamKind: 'non-blocking', gated: false };
  const link = bidirectional ? bidirectionalSchedule(buffers, splitRanges(bytes, BANDWIDTH_PIECES), device, false) : null;
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
  };
}

