import type { ChunkRange } from '../chunking.js';
import type { ConfigBuffer, ConfigHost } from '../config/types.js';
import type { PrioritySpec } from '../config/toolbox.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import type { WorkOp } from '../kinds/index.js';
import type { ModeRole, StreamKind } from '../vocabulary.js';

// A Plan is pure data: which buffers exist, and for every mode the ops in host issue order, each naming its stream.
// Device, stream and event identities are symbolic ("s0", "start"); exec/ binds them to handles. New schedules
// (a stage-per-stream topology, graph capture, host functions, priorities, several devices) are new builders over
// this same vocabulary.

export type { ChunkRange } from '../chunking.js';
// The work ops are their stage kinds' own (src/kinds/<kind>/); the planner adds the ops that order and time them.
export type { CollectiveOp, CopyOp, HostOp, KernelOp, PeerOp, WorkOp } from '../kinds/index.js';
export { isWorkOp } from '../kinds/index.js';

export type StreamId = string;
export type EventId = string;

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

export type Op =
  | WorkOp
  | { readonly kind: 'record'; readonly stream: StreamId; readonly event: EventId }
  | { readonly kind: 'wait'; readonly stream: StreamId; readonly event: EventId }
  /** Holds the stream until the host has issued the whole rep (so the timed region excludes issue cost). */
  | { readonly kind: 'gate'; readonly stream: StreamId }
  /** A kernel with no work (kernels/internal/gate.cu): its GPU time is a launch's fixed cost. */
  | { readonly kind: 'empty'; readonly stream: StreamId };

export interface Schedule {
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
  readonly prologue: readonly Op[];
  readonly body: readonly Op[];
  readonly epilogue: readonly Op[];
  /** The timed region: elapsed time between these two events, both recorded on the first stream. */
  readonly start: EventId;
  readonly end: EventId;
  /** True where outputs are compared against the serial baseline after a rep. */
  readonly verify: boolean;
  /** True when a gate op holds the first stream until the rep is fully issued. */
  readonly gated: boolean;
  /** `peer`: bytes copied between devices, where any are; `collective`: every collective's per-rank message bytes, where any run. */
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
export const scheduleDevices = (schedule: Pick<Schedule, 'device' | 'streams'>): number[] => [...new Set([schedule.device, ...schedule.streams.map((s) => s.device)])];

/** Every op of a rep in host issue order. */
export const scheduleOps = (s: Pick<Schedule, 'prologue' | 'body' | 'epilogue'>): Op[] => [...s.prologue, ...s.body, ...s.epilogue];

/** What a plan keeps of a resolved kernel: enough to build launch records, nothing of its source text. */
export type PlanKernel = Pick<ResolvedKernel, 'label' | 'entry' | 'sourcePath' | 'block' | 'grid' | 'args'>;

export const planKernel = ({ label, entry, sourcePath, block, grid, args }: PlanKernel): PlanKernel => ({ label, entry, sourcePath, block, grid, args });

export interface Plan {
  readonly name: string;
  /** Every device a schedule runs on. */
  readonly devices: readonly number[];
  readonly elements: number;
  readonly buffers: readonly ConfigBuffer[];
  readonly kernels: readonly PlanKernel[];
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
  readonly schedules: readonly Schedule[];
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
  readonly reference?: Schedule;
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
