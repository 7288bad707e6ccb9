import { splitRanges } from '../chunking.js';
import type { Config, ConfigBuffer } from '../config/types.js';
import type { Handoff } from '../config/devices.js';
import { UsageError } from '../errors.js';
import { type IssueOrder, type ModeRole, modeId, type OverlapLayout, type StreamKind } from '../vocabulary.js';
import {
  kernelOps,
  loadOps,
  makeStreams,
  overlappedSchedule,
  pipelineShape,
  type PipelineShape,
  regionSchedule,
  storeOps,
  timedSchedule,
} from './schedules.js';
import { bidirectionalSchedule, linkRanges } from './part-schedules.js';
import type { ChunkRange, EventSpec, Op, Placement, Plan, Schedule, StreamSpec, WorkOp } from './types.js';
import type { SpanningSpec as ModelSpanningSpec } from '../model/schedule.js';

// Schedules over several devices, issued from one process. Each device's streams are its own; the timed region
// starts with one event on the first device's first stream, which every other stream waits on (across devices, a
// wait on another device's event), and ends there once every device's streams have joined back. Each device also
// records its own start and end, read as the schedule's probes, so that each device's time is known too.

export type { DevicePart } from '../model/schedule.js';

/** A stream's name in a schedule that spans devices: its one-device name behind its device's ("d1:s0"). */
const onDeviceName = (device: number, stream: string) => `d${device}:${stream}`;
export const deviceStream = (device: number, stream: number) => onDeviceName(device, `s${stream}`);
/** `count` streams on `device`, named as deviceStream names them. */
const deviceStreams = (count: number, kind: StreamKind, device: number) =>
  makeStreams(count, kind, device, onDeviceName(device, 's'));

/** A timed schedule's spec with its streams grouped by device; always issued op by op. */
export type SpanningSpec = ModelSpanningSpec<WorkOp>;

/** The timed region around a body whose streams are on several devices (see the top of this file). */
export function spanningSchedule(spec: SpanningSpec): Schedule {
  const [first, ...others] = spec.parts;
  const origin = first?.streams[0];
  if (!first || !origin || spec.parts.some((p) => !p.streams.length))
    throw new RangeError(`schedule ${modeId(spec.role)} needs a stream on every device`);
  const events: EventSpec[] = [{ id: 'start', timing: true }, { id: 'end', timing: true }, ...(spec.events ?? [])];
  const prologue: Op[] = [
    ...(spec.gated ? [{ kind: 'gate', stream: origin.id } as const] : []),
    { kind: 'record', stream: origin.id, event: 'start' },
  ];
  const epilogue: Op[] = [];
  const probes: Array<{ begin: string; end: string; device: number }> = [];
  for (const part of spec.parts) {
    const [lead, ...rest] = part.streams as [StreamSpec, ...StreamSpec[]];
    const begin = part === first ? 'start' : `start:d${part.device}`;
    const end = `end:d${part.device}`;
    if (part !== first) {
      events.push({ id: begin, timing: true, device: part.device });
      prologue.push(
        { kind: 'wait', stream: lead.id, event: 'start' },
        { kind: 'record', stream: lead.id, event: begin },
      );
    }
    events.push({ id: end, timing: true, device: part.device });
    for (const s of rest) {
      prologue.push({ kind: 'wait', stream: s.id, event: begin });
      const join = `join:${s.id}`;
      events.push({ id: join, timing: false, device: part.device });
      epilogue.push({ kind: 'record', stream: s.id, event: join }, { kind: 'wait', stream: lead.id, event: join });
    }
    epilogue.push({ kind: 'record', stream: lead.id, event: end });
    probes.push({ begin, end, device: part.device });
  }
  for (const part of others) epilogue.push({ kind: 'wait', stream: origin.id, event: `end:d${part.device}` });
  epilogue.push({ kind: 'record', stream: origin.id, event: 'end' });
  return regionSchedule(spec, {
    device: first.device,
    streams: spec.parts.flatMap((p) => p.streams),
    events,
    prologue,
    epilogue,
    issue: 'stream',
    probes,
  });
}

/**
 * A plan for one device, given the modes that use the others: the input split across every device (each running
 * the layout over its share, all at once, and each alone), or with a handoff one pipeline across two devices.
 */
export function withDevices(plan: Plan, config: Config, devices: readonly number[], options: { gated: boolean }): Plan {
  const shape = pipelineShape({ ...config, device: devices[0] ?? config.device }, plan.kernels, options.gated);
  const order = config.pipeline.orders[0] ?? 'depth-first';
  const { chunks, streams, align, handoff } = config.pipeline;
  const made = handoff
    ? crossDevice(
        shape,
        devices[1] ?? shape.device,
        handoff,
        splitRanges(config.elements, chunks, align),
        streams,
        order,
      )
    : split(shape, devices, chunks, streams, order, align);
  const graphNote =
    config.pipeline.mode === 'graph'
      ? ['Graph replay is measured on the first device only; the modes that span devices issue op by op.']
      : [];
  return {
    ...plan,
    devices: [...devices],
    schedules: [...plan.schedules, ...made.schedules],
    placements: made.placements,
    notes: [...plan.notes, ...graphNote],
  };
}

/** Renames a one-device body's streams to the spanning schedule's names for that device. */
function onDevice(body: readonly Op[], device: number): Op[] {
  return body.map((op) => ({ ...op, stream: onDeviceName(device, op.stream) }));
}

/**
 * Ops grouped by chunk as issued, taken in turn from each device, so that without the gate no device waits for the
 * host to issue another's whole rep first. Each device's own order is kept, which is all its streams depend on.
 */
function interleave(bodies: readonly (readonly Op[])[]): Op[] {
  const groups = bodies.map((body) => {
    const out: Op[][] = [];
    for (const op of body) {
      const last = out[out.length - 1];
      const chunk = 'chunk' in op ? op.chunk : null;
      const lastChunk = last?.[0] && 'chunk' in last[0] ? last[0].chunk : undefined;
      if (last && lastChunk === chunk) last.push(op);
      else out.push([op]);
    }
    return out;
  });
  const result: Op[] = [];
  for (let i = 0; groups.some((g) => i < g.length); i++) for (const g of groups) result.push(...(g[i] ?? []));
  return result;
}

function split(
  shape: PipelineShape,
  devices: readonly number[],
  chunks: number,
  streams: number,
  order: IssueOrder,
  align: number,
): { schedules: Schedule[]; placements: Placement[] } {
  const shares = splitRanges(shape.elements, devices.length, align);
  if (shares.length < devices.length) {
    throw new UsageError(
      `${shape.elements} elements in rows of ${align} cannot be split across ${devices.length} devices.`,
      { hint: 'Use larger buffers or fewer devices.' },
    );
  }
  let offset = 0;
  const parts = devices.map((device, k) => {
    const share = shares[k] as ChunkRange;
    const ranges = splitRanges(share.count, chunks, align).map((r) => ({
      index: r.index + offset,
      first: r.first + share.first,
      count: r.count,
    }));
    offset += ranges.length;
    const used = Math.min(streams, ranges.length);
    return {
      device,
      share,
      ranges,
      streams: used,
      schedule: overlappedSchedule({ ...shape, device, base: k === 0 ? 0 : share.first }, ranges, used, order),
    };
  });
  const ranges = parts.flatMap((p) => p.ranges);
  const head = parts[0] as (typeof parts)[number];
  const layout: OverlapLayout = {
    chunks: head.ranges.length,
    streams: head.streams,
    order,
    topology: 'chunk-per-stream',
  };
  const what = `${head.ranges.length} chunks over ${head.streams} streams, ${order}`;
  const alone = parts.map(({ device, share, schedule }): Schedule => {
    const role: ModeRole = { kind: 'split', layout, devices: [...devices], alone: device };
    return {
      ...schedule,
      role,
      id: modeId(role),
      ranges,
      verify: false,
      description: `GPU ${device}'s share alone (elements ${share.first} to ${share.first + share.count - 1}): ${what}`,
    };
  });
  const links = splitLinks(shape, parts, devices);
  const together = spanningSchedule({
    role: { kind: 'split', layout, devices: [...devices] },
    description: `the input split across GPUs ${devices.join(', ')}, all at once: ${what} on each`,
    parts: parts.map((p) => ({ device: p.device, streams: deviceStreams(p.streams, shape.streamKind, p.device) })),
    body: interleave(parts.map((p) => onDevice(p.schedule.body, p.device))),
    ranges,
    verify: true,
    gated: shape.gated,
  });
  return {
    schedules: [together, ...alone, ...links],
    placements: parts.slice(1).map((p) => ({ device: p.device, elements: p.share.count, base: p.share.first })),
  };
}

/**
 * Each device's share copied both ways at once in large pieces, as the link mode copies, on every device together
 * and on each alone: whether the host moves what the links add up to. None when data moves one way only.
 */
function splitLinks(
  shape: PipelineShape,
  parts: ReadonlyArray<{ device: number; share: ChunkRange }>,
  devices: readonly number[],
): Schedule[] {
  const each = parts.map(({ device, share }, k) => ({
    device,
    share,
    schedule: bidirectionalSchedule(
      shape.buffers,
      linkRanges(shape.buffers, share.count).map((r) => ({ ...r, first: r.first + share.first })),
      device,
      shape.gated,
      2,
      { base: k === 0 ? 0 : share.first },
    ),
  }));
  if (each.some((e) => e.schedule === null)) return [];
  const linked = each as ReadonlyArray<{ device: number; share: ChunkRange; schedule: Schedule }>;
  const alone = linked.map(({ device, share, schedule }): Schedule => {
    const role: ModeRole = { kind: 'split-link', devices: [...devices], alone: device };
    return {
      ...schedule,
      role,
      id: modeId(role),
      description: `GPU ${device}'s share (elements ${share.first} to ${share.first + share.count - 1}) both ways at once, alone`,
    };
  });
  const together = spanningSchedule({
    role: { kind: 'split-link', devices: [...devices] },
    description: `every GPU's share both ways at once, on GPUs ${devices.join(', ')} together`,
    parts: linked.map(({ device, schedule }) => ({
      device,
      streams: schedule.streams.map((s) => ({ ...s, id: onDeviceName(device, s.id) })),
    })),
    body: interleave(linked.map(({ device, schedule }) => onDevice(schedule.body, device))),
    ranges: linked[0]?.schedule.ranges ?? [],
    verify: false,
    gated: shape.gated,
  });
  return [together, ...alone];
}

function crossDevice(
  shape: PipelineShape,
  to: number,
  handoff: Handoff,
  ranges: readonly ChunkRange[],
  streams: number,
  order: IssueOrder,
): { schedules: Schedule[]; placements: Placement[] } {
  const from = shape.device;
  const used = Math.min(streams, ranges.length);
  const firstHalf: PipelineShape = { ...shape, kernels: handoff.first, host: null };
  const secondHalf: PipelineShape = { ...shape, device: to, kernels: handoff.second };
  const handed = shape.buffers.filter((b) => handoff.buffers.includes(b.name));
  const peerOps = (r: ChunkRange, stream: string, chunk: number | null): Op[] =>
    handed.map((b) => ({
      kind: 'peer',
      stream,
      buffer: b.name,
      from,
      to,
      deviceOffset: r.first * b.elementBytes,
      bytes: r.count * b.elementBytes,
      chunk,
    }));
  const before: Op[][] = [];
  const after: Op[][] = [];
  for (const r of ranges) {
    const a = deviceStream(from, r.index % used);
    const b = deviceStream(to, r.index % used);
    const event = `handoff:${r.index}`;
    before.push([
      ...loadOps(firstHalf, r, a, r.index),
      ...kernelOps(firstHalf, handoff.first, r, a, r.index),
      ...peerOps(r, a, r.index),
      { kind: 'record', stream: a, event },
    ]);
    after.push([
      { kind: 'wait', stream: b, event },
      ...kernelOps(secondHalf, handoff.second, r, b, r.index),
      ...storeOps(secondHalf, r, b, r.index),
    ]);
  }
  const body =
    order === 'depth-first'
      ? ranges.flatMap((_, i) => [...(before[i] ?? []), ...(after[i] ?? [])])
      : [...before.flat(), ...after.flat()];
  const layout: OverlapLayout = { chunks: ranges.length, streams: used, order, topology: 'chunk-per-stream' };
  const pipeline = spanningSchedule({
    role: { kind: 'cross-device', layout, from, to, after: handoff.after },
    description:
      `${ranges.length} chunks over ${used} streams per GPU, ${order}: ${handoff.first.join(', ')} on GPU ${from}, ` +
      `${handoff.buffers.join(', ')} copied to GPU ${to}, ${handoff.second.join(', ')} there`,
    parts: [from, to].map((device) => ({ device, streams: deviceStreams(used, shape.streamKind, device) })),
    body,
    ranges,
    verify: true,
    gated: shape.gated,
    events: ranges.map((r) => ({ id: `handoff:${r.index}`, timing: false, device: from })),
  });
  const whole = { index: 0, first: 0, count: shape.elements };
  const peer = timedSchedule({
    role: { kind: 'peer', from, to },
    device: from,
    description: `${handoff.buffers.join(', ')} copied whole from GPU ${from} to GPU ${to}, one stream`,
    streams: makeStreams(1, 'non-blocking', from),
    body: peerOps(whole, 's0', null),
    ranges: [whole],
    verify: false,
    gated: shape.gated,
  });
  return { schedules: [peer, pipeline], placements: [{ device: to, elements: shape.elements, base: 0 }] };
}

/**
 * Copies between two devices for `probe --bandwidth`: `bytes` of device memory on each, copied one way, the other
 * way, and both ways at once (each from its own device's stream).
 */
export function peerBandwidthPlan(bytes: number, a: number, b: number): Plan {
  const buffer: ConfigBuffer = {
    name: 'peer',
    type: 'uint8',
    elementBytes: 1,
    elements: bytes,
    bytes,
    itemSize: 1,
    role: 'scratch',
    init: { kind: 'constant', value: 1 },
    hostMemory: 'pinned',
  };
  const whole = { index: 0, first: 0, count: bytes };
  const copy = (from: number, to: number, stream: string): Op => ({
    kind: 'peer',
    stream,
    buffer: 'peer',
    from,
    to,
    deviceOffset: 0,
    bytes,
    chunk: null,
  });
  const oneWay = (from: number, to: number) =>
    timedSchedule({
      role: { kind: 'peer', from, to },
      device: from,
      description: `${bytes} bytes from GPU ${from} to GPU ${to}`,
      streams: makeStreams(1, 'non-blocking', from),
      body: [copy(from, to, 's0')],
      ranges: [whole],
      verify: false,
      gated: false,
    });
  const both = spanningSchedule({
    role: { kind: 'peer', from: a, to: b, both: true },
    description: `${bytes} bytes each way between GPU ${a} and GPU ${b} at once`,
    parts: [a, b].map((device) => ({ device, streams: deviceStreams(1, 'non-blocking', device) })),
    body: [copy(a, b, deviceStream(a, 0)), copy(b, a, deviceStream(b, 0))],
    ranges: [whole],
    verify: false,
    gated: false,
  });
  return {
    name: `peer-${a}-${b}`,
    devices: [a, b],
    elements: bytes,
    buffers: [buffer],
    kernels: [],
    pipeline: { elements: bytes, align: 1, requestedChunks: 1, requestedStreams: 1 },
    schedules: [oneWay(a, b), oneWay(b, a), both],
    notes: [],
    device: { elements: bytes, ring: null, budgetBytes: null },
    host: null,
    placements: [{ device: b, elements: bytes, base: 0 }],
  };
}
