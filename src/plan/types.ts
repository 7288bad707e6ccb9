import type { ConfigBuffer, IssueOrder } from '../config/load.js';
import type { KernelArg } from '../kernels/resolve.js';

// A Plan is pure data: which buffers exist, and for every mode the ops in host issue order, each naming its stream.
// Device, stream and event identities are symbolic ("s0", "start"); exec/ binds them to handles. New schedules
// (a stage-per-stream topology, graph capture, host functions, priorities, several devices, traced reps) are new
// builders over this same vocabulary.

export type StreamId = string;
export type EventId = string;

export interface StreamSpec {
  readonly id: StreamId;
  /** 'default' streams synchronise with the legacy default stream; 'non-blocking' ones do not. */
  readonly flags: 'non-blocking' | 'default';
  /** Lower numbers are higher priority; undefined means the device's default. */
  readonly priority?: number;
  readonly device: number;
}

export interface EventSpec {
  readonly id: EventId;
  /** Only events that bound a timed region need timing; the rest are cheaper without it. */
  readonly timing: boolean;
}

export interface ChunkRange {
  readonly index: number;
  /** First element and element count; every buffer of the plan shares these ranges. */
  readonly first: number;
  readonly count: number;
}

export type Op =
  | {
      readonly kind: 'copy';
      readonly stream: StreamId;
      readonly direction: 'h2d' | 'd2h';
      readonly buffer: string;
      readonly hostOffset: number;
      /** Separate from hostOffset so that a ring of device slots can map many chunks onto few. */
      readonly deviceOffset: number;
      readonly bytes: number;
      readonly chunk: number | null;
    }
  | {
      readonly kind: 'kernel';
      readonly stream: StreamId;
      readonly kernel: string;
      readonly chunk: number | null;
      readonly first: number;
      readonly count: number;
      /** Element index in the device buffers where this chunk lives. */
      readonly deviceFirst: number;
    }
  | { readonly kind: 'record'; readonly stream: StreamId; readonly event: EventId }
  | { readonly kind: 'wait'; readonly stream: StreamId; readonly event: EventId }
  | { readonly kind: 'host'; readonly stream: StreamId; readonly name: string }
  /** Holds the stream until the host has issued the whole rep (so the timed region excludes issue cost). */
  | { readonly kind: 'gate'; readonly stream: StreamId };

export type ScheduleKind = 'serial' | 'overlapped' | 'stage' | 'link';

export interface Schedule {
  /** 'serial', 'overlapped', 'h2d', 'd2h', 'kernel:<label>', 'bidirectional' */
  readonly id: string;
  readonly kind: ScheduleKind;
  readonly description: string;
  readonly streams: readonly StreamSpec[];
  readonly events: readonly EventSpec[];
  /** Host issue order; each op names its stream, so per-stream order is the subsequence of one stream. */
  readonly ops: readonly Op[];
  /** The timed region: elapsed time between these two events, both recorded on the first stream. */
  readonly start: EventId;
  readonly end: EventId;
  /** True where outputs are compared against the serial baseline after a rep. */
  readonly verify: boolean;
  /** True when a gate op holds the first stream until the rep is fully issued. */
  readonly gated: boolean;
  readonly bytes: { readonly h2d: number; readonly d2h: number };
}

export interface PlanKernel {
  readonly label: string;
  readonly entry: string;
  readonly sourcePath: string;
  readonly block: number;
  readonly grid: 'auto' | 'cover' | number;
  readonly args: readonly KernelArg[];
}

export interface Layout {
  readonly chunks: number;
  readonly requestedChunks: number;
  readonly streams: number;
  readonly requestedStreams: number;
  /** The headline order, measured as the 'overlapped' mode. */
  readonly order: IssueOrder;
  /** Every order measured; the others are modes named 'overlapped:<order>'. */
  readonly orders: readonly IssueOrder[];
  readonly align: number;
  readonly ranges: readonly ChunkRange[];
}

export interface Plan {
  readonly name: string;
  readonly device: number;
  readonly elements: number;
  readonly buffers: readonly ConfigBuffer[];
  readonly kernels: readonly PlanKernel[];
  readonly layout: Layout;
  readonly schedules: readonly Schedule[];
  /** Things the planner changed from what was asked, said to the user. */
  readonly notes: readonly string[];
}
