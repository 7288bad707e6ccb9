import type { Config, ConfigBuffer } from '../config/load.js';
import type { HostMemoryKind } from '../vocabulary.js';
import { splitRanges } from '../chunking.js';
import { SMALL_OPS } from '../vocabulary.js';
import {
  bidirectionalSchedule, kernelsChunkedSchedule, linkRanges, opCostSchedule, overlappedSchedule, type PipelineShape, serialSchedule,
  stageSchedules,
} from './schedules.js';
import { type Plan, type PlanKernel, planKernel } from './types.js';

/**
 * Config → Plan: the serial baseline, one overlapped mode per order, and what the overlap model is built from: each
 * stage alone, the kernels chunked as the layout runs them, the link at its best, and the fixed cost of small ops.
 */
export function buildPlan(config: Config, kernels: readonly PlanKernel[], options: { gate?: boolean } = {}): Plan {
  const gated = options.gate ?? false;
  const { chunks, streams, orders, streamFlags, align } = config.pipeline;
  const ranges = splitRanges(config.elements, chunks, align);
  const usedStreams = Math.min(streams, ranges.length);
  const notes: string[] = [];
  if (ranges.length < chunks) {
    notes.push(`${chunks} chunks asked for, ${ranges.length} made: ${config.elements} elements in equal chunks of ${ranges[0]?.count ?? 0} leave no room for more.`);
  }
  if (usedStreams < streams) notes.push(`${streams} streams asked for, ${usedStreams} used: there are only ${ranges.length} chunks.`);
  const shape: PipelineShape = {
    device: config.device, buffers: config.buffers, kernels: kernels.map((k) => k.label), elements: config.elements, streamFlags, gated,
  };
  const link = bidirectionalSchedule(config.buffers, linkRanges(config.buffers, config.elements), config.device, gated);
  const firstOrder = orders[0] ?? 'depth-first';
  return {
    name: config.name,
    devices: [config.device],
    elements: config.elements,
    buffers: config.buffers,
    kernels: kernels.map(planKernel),
    pipeline: { elements: config.elements, align, requestedChunks: chunks, requestedStreams: streams },
    schedules: [
      serialSchedule(shape),
      ...orders.map((order) => overlappedSchedule(shape, ranges, usedStreams, order)),
      ...stageSchedules(shape),
      ...(kernels.length ? [kernelsChunkedSchedule(shape, ranges, usedStreams, firstOrder)] : []),
      ...(link ? [link] : []),
      ...SMALL_OPS.flatMap((op) => opCostSchedule(shape, op) ?? []),
    ],
    notes,
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

