import { z } from 'zod';
import type { ChunkRange } from '../chunking.js';
import type { ModeRole, PriorityLevel, StreamKind } from '../vocabulary.js';
import type { ConfigBuffer, ConfigHost } from './buffers.js';

// What a plan is, in terms both the core and the stage kinds read: schedules of ops on symbolic streams and events,
// over the work ops of some kinds (`W`). The core's plan (plan/types.ts) is this model over the listed kinds' ops;
// a kind's hooks see it over any work op, so a kind never loads the list that names it.

export type { ChunkRange } from '../chunking.js';

export type StreamId = string;
export type EventId = string;

/** The fields every work op has: the stream it is issued on, and the chunk it works on (null: the whole buffers). */
export interface WorkOpBase {
  readonly kind: string;
  readonly stream: string;
  readonly chunk: number | null;
}

/** The ops the planner adds to order and time the work: they belong to no stage kind. */
export type OrderOp =
  | { readonly kind: 'record'; readonly stream: StreamId; readonly event: EventId }
  | { readonly kind: 'wait'; readonly stream: StreamId; readonly event: EventId }
  /** Holds the stream until the host has issued the whole rep (so the timed region excludes issue cost). */
  | { readonly kind: 'gate'; readonly stream: StreamId }
  /** A kernel with no work (kernels/internal/gate.cu): its GPU time is a launch's fixed cost. */
  | { readonly kind: 'empty'; readonly stream: StreamId };

/** An op of a plan whose work ops are `W`. */
export type PlanOp<W extends WorkOpBase = WorkOpBase> = W | OrderOp;

/** Whether an op records or waits on an event (a work op of any kind does neither). */
export const isEventOp = (op: { readonly kind: string }): op is Extract<OrderOp, { readonly event: EventId }> =>
  op.kind === 'record' || op.kind === 'wait';

/**
 * A stream priority as a config writes it: the pipeline's, a latency stream's, a collective's communication stream's.
 */
export const PrioritySchema = z
  .union([z.enum(['high', 'low']), z.number().int()])
  .describe(
    "high or low: the device's highest or lowest stream priority; a number is checked against the device's range (lower is higher)",
  );

/** A priority as the config gave it, with the place that gave it, for the error once the device's range is known. */
export interface PrioritySpec {
  readonly level: PriorityLevel;
  readonly where: string;
}

export interface StreamSpec {
  readonly id: StreamId;
  /** How the stream is made: created blocking or non-blocking, or one of the two default streams (never created). */
  readonly kind: StreamKind;
  /** As the config gave it (resolved against the device's range when the stream is made); undefined: the default. */
  readonly priority?: PrioritySpec;
  readonly device: number;
}

export interface EventSpec {
  readonly id: EventId;
  /** Only events that bound a timed region need timing; the rest are cheaper without it. */
  readonly timing: boolean;
  /** The device the event is created on, where it is not the schedule's: it is recorded on a stream of that device. */
  readonly device?: number;
}

export interface Schedule<W extends WorkOpBase = WorkOpBase> {
  /** A key generated from the role (vocabulary.modeId); read the role to know what the mode is. */
  readonly id: string;
  readonly role: ModeRole;
  readonly device: number;
  readonly description: string;
  readonly streams: readonly StreamSpec[];
  readonly events: readonly EventSpec[];
  /**
   * Host issue order, in three parts: the prologue opens the timed region (gate, start event, other streams wait
   * on it), the body is the workload, the epilogue joins every stream back and records the end. A graph issuer
   * captures the body alone.
   */
  readonly prologue: readonly PlanOp<W>[];
  readonly body: readonly PlanOp<W>[];
  readonly epilogue: readonly PlanOp<W>[];
  /** The timed region: elapsed time between these two events, both recorded on the first stream. */
  readonly start: EventId;
  readonly end: EventId;
  /** True where outputs are compared against the serial baseline after a rep. */
  readonly verify: boolean;
  /** True when a gate op holds the first stream until the rep is fully issued. */
  readonly gated: boolean;
  /**
   * `peer`: bytes copied between devices, where any are; `collective`: every collective's per-rank message bytes, where
   * any run.
   */
  readonly bytes: { readonly h2d: number; readonly d2h: number; readonly peer?: number; readonly collective?: number };
  /** The element ranges the body's chunk indexes refer to; one whole range for whole-buffer modes. */
  readonly ranges: readonly ChunkRange[];
  /** stream: ops issued from the host every rep; graph: the body captured once and replayed. */
  readonly issue: 'stream' | 'graph';
  /**
   * Pairs of timing events read after every rep: around each urgent kernel of a latency mode; for a schedule that
   * spans devices, each device's own start and end, in the order of the plan's devices.
   */
  readonly probes?: ReadonlyArray<{ readonly begin: EventId; readonly end: EventId; readonly device?: number }>;
}

/** The device each of a schedule's streams is on; a stream it does not list is on the schedule's device. */
export function streamDevices(schedule: Pick<Schedule, 'device' | 'streams'>): (stream: StreamId) => number {
  const devices = new Map(schedule.streams.map((s) => [s.id, s.device]));
  return (stream) => devices.get(stream) ?? schedule.device;
}

/** The devices a schedule's streams are on, its own device first. */
export const scheduleDevices = (schedule: Pick<Schedule, 'device' | 'streams'>): number[] => [
  ...new Set([schedule.device, ...schedule.streams.map((s) => s.device)]),
];

/** Every op of a rep in host issue order. */
export const scheduleOps = <O>(s: {
  readonly prologue: readonly O[];
  readonly body: readonly O[];
  readonly epilogue: readonly O[];
}): O[] => [...s.prologue, ...s.body, ...s.epilogue];

/**
 * A plan whose work ops are `W` and whose kernels are `K` (the core keeps what it launches of a resolved kernel;
 * a kind reads none of it).
 */
export interface Plan<W extends WorkOpBase = WorkOpBase, K = unknown> {
  readonly name: string;
  /** Every device a schedule runs on. */
  readonly devices: readonly number[];
  readonly elements: number;
  readonly buffers: readonly ConfigBuffer[];
  readonly kernels: readonly K[];
  /** What the config asked for; each overlapped schedule's role says what it got. */
  readonly pipeline: {
    /** What chunks range over: items where `items` is present, else elements. */
    readonly elements: number;
    readonly align: number;
    readonly requestedChunks: number;
    readonly requestedStreams: number;
    /** Present where the config gave pipeline.items. */
    readonly items?: number;
    /** The hardware work queues CUDA spreads streams over, where the config gave pipeline.connections. */
    readonly connections?: number;
  };
  readonly schedules: readonly Schedule<W>[];
  /** Things the planner changed from what was asked, said to the user. */
  readonly notes: readonly string[];
  /**
   * Elements each device buffer holds: all of them, or under a device-memory budget a ring of `slots` chunk-sized
   * slots that every schedule cycles its chunks through.
   */
  readonly device: { readonly elements: number; readonly ring: Ring | null; readonly budgetBytes: number | null };
  /** The host stage every host op runs, or null. */
  readonly host: ConfigHost | null;
  /**
   * Every device after the first (`devices[0]` holds `device.elements`): the elements its buffers hold, and the
   * element of the whole buffers its first one stands for (its share's first element; 0 where it holds them all).
   * Host buffers are shared by every device.
   */
  readonly placements: readonly Placement[];
  /**
   * A plan with all-reduces: the serial mode with its collectives left out, on the first device alone, whose outputs
   * the verification scales by the ranks to check what the all-reduce summed. Never measured; absent without one.
   */
  readonly reference?: Schedule<W>;
}

export interface Placement {
  readonly device: number;
  readonly elements: number;
  readonly base: number;
  /** A data-parallel rank's outputs go to host memory of its own (ranks' results differ after a reduce-scatter). */
  readonly ownOutputs?: boolean;
}

/**
 * A ring of device slots: chunk i lives in slot i mod slots, at item slot × slotElements of every chunked device
 * buffer (items are elements without pipeline.items; resident buffers are whole beside the ring).
 */
export interface Ring {
  readonly slots: number;
  readonly slotElements: number;
}

/** A timed schedule as its builder is given it: the body, the streams and events beside the timed region's own. */
export interface TimedScheduleSpec<W extends WorkOpBase = WorkOpBase> {
  readonly role: ModeRole;
  readonly device: number;
  readonly description: string;
  readonly streams: readonly StreamSpec[];
  readonly body: readonly PlanOp<W>[];
  readonly ranges: readonly ChunkRange[];
  readonly verify: boolean;
  readonly gated: boolean;
  /** Events the body records and waits on, beyond the timed region's own. */
  readonly events?: readonly EventSpec[];
  readonly issue?: 'stream' | 'graph';
}

/** One device's streams in a schedule that spans devices; the first stream starts and ends that device's part. */
export interface DevicePart {
  readonly device: number;
  readonly streams: readonly StreamSpec[];
}

/** A timed schedule's spec with its streams grouped by device; always issued op by op. */
export type SpanningSpec<W extends WorkOpBase = WorkOpBase> = Omit<
  TimedScheduleSpec<W>,
  'device' | 'streams' | 'issue'
> & {
  readonly parts: readonly DevicePart[];
};
