import type { Config, ConfigBuffer } from '../config/load.js';
import { type ChunkRange, splitRanges } from '../chunking.js';
import { type HostMemoryKind, type IssueOrder, SMALL_OPS } from '../vocabulary.js';
import {
  bidirectionalSchedule, kernelsChunkedSchedule, linkRanges, opCostSchedule, overlappedSchedule, type PipelineShape, serialSchedule,
  stageSchedules,
} from './schedules.js';
import { type Plan, type PlanKernel, planKernel } from './types.js';

/** A chunk-per-stream layout as asked for; the planner may make fewer chunks or use fewer streams, and says so. */
export interface RequestedLayout {
  readonly chunks: number;
  readonly streams: number;
}

/**
 * Config → Plan: the serial baseline, one overlapped mode per order of the config's layout, and what the overlap
 * model is built from: each stage alone, the kernels chunked as the layout runs them, the link at its best, and the
 * fixed cost of small ops.
 */
export function buildPlan(config: Config, kernels: readonly PlanKernel[], options: { gate?: boolean } = {}): Plan {
  const { chunks, streams } = config.pipeline;
  return buildLayoutsPlan(config, kernels, [{ chunks, streams }], config.pipeline.orders, options);
}

/**
 * The same for many layouts at once (a sweep): every layout in every order, with one kernels-chunked mode per
 * distinct chunk and stream count; the serial baseline and the device-wide parts once.
 */
export function buildLayoutsPlan(
  config: Config,
  kernels: readonly PlanKernel[],
  layouts: readonly RequestedLayout[],
  orders: readonly IssueOrder[],
  options: { gate?: boolean } = {},
): Plan {
  const gated = options.gate ?? false;
  const { streamFlags, align } = config.pipeline;
  const shape: PipelineShape = {
    device: config.device, buffers: config.buffers, kernels: kernels.map((k) => k.label), elements: config.elements, streamFlags, gated,
  };
  const notes: string[] = [];
  const made = new Map<string, { ranges: ChunkRange[]; streams: number }>();
  for (const layout of layouts) {
    const ranges = splitRanges(config.elements, layout.chunks, align);
    const streams = Math.min(layout.streams, ranges.length);
    if (ranges.length < layout.chunks) {
      notes.push(`${layout.chunks} chunks asked for, ${ranges.length} made: ${config.elements} elements in equal chunks of ${ranges[0]?.count ?? 0} leave no room for more.`);
    }
    if (streams < layout.streams) notes.push(`${layout.streams} streams asked for, ${streams} used: there are only ${ranges.length} chunks.`);
    made.set(`${ranges.length}x${streams}`, { ranges, streams });
  }
  const link = bidirectionalSchedule(config.buffers, linkRanges(config.buffers, config.elements), config.device, gated);
  const firstOrder = orders[0] ?? 'depth-first';
  const first = layouts[0] ?? { chunks: 1, streams: 1 };
  return {
    name: config.name,
    devices: [config.device],
    elements: config.elements,
    buffers: config.buffers,
    kernels: kernels.map(planKernel),
    pipeline: { elements: config.elements, align, requestedChunks: first.chunks, requestedStreams: first.streams },
    schedules: [
      serialSchedule(shape),
      ...[...made.values()].flatMap(({ ranges, streams }) => orders.map((order) => overlappedSchedule(shape, ranges, streams, order))),
      ...stageSchedules(shape),
      ...(kernels.length ? [...made.values()].map(({ ranges, streams }) => kernelsChunkedSchedule(shape, ranges, streams, firstOrder)) : []),
      ...(link ? [link] : []),
      ...SMALL_OPS.flatMap((op) => opCostSchedule(shape, op) ?? []),
    ],
    notes: [...new Set(notes)],
  };
}

/** Each direction's copies in the bidirectional bandwidth figure, as GPU-FACTS.md measured the link. */
export const BANDWIDTH_PIECES = 16;

/** Copies only, for `probe --bandwidth`: H2D alone, D2H alone, and both at once chunked over several streams. */
export function bandwidthPlan(bytes: number, hostMemory: HostMemoryKind, device: number, bidirectional: boolean): Plan {
  const buffer = (name: string, role: 'in' | 'out'): ConfigBuffer => ({
    name, type: 'uint8', elementBytes: 1, elements: bytes, bytes, role, init: { kind: 'random', seed: 7 }, hostMemory,
  });
  const buffers = [buffer('upload', 'in'), buffer('download', 'out')];
  const shape: PipelineShape = { device, buffers, kernels: [], elements: bytes, streamFlags: 'non-blocking', gated: false };
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
  };
}

