// The words every layer shares: element and scalar types, buffer roles, host memory kinds, issue orders, and the
// role of a measured mode. Plain data and types only, so config/, plan/, exec/, measure/ and report/ can all import
// it without importing each other.

/** The largest device index: CUDA takes one as a C int (cudaSetDevice). */
export const MAX_DEVICE_INDEX = 2 ** 31 - 1;

/** A whole number from 0 to MAX_DEVICE_INDEX: what any file or flag may name a device (or a rank) by. */
export const isDeviceIndex = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_DEVICE_INDEX;

export const ELEMENT_TYPES = ['float32', 'float64', 'int32', 'uint32', 'uint8', 'float16', 'bfloat16'] as const;
/**
 * Buffer element types; float16 and bfloat16 are moved as raw 16-bit values (and compared so, unless a tolerance is
 * given).
 */
export type ElementType = (typeof ELEMENT_TYPES)[number];

export const ELEMENT_BYTES: Record<ElementType, number> = {
  float32: 4,
  float64: 8,
  int32: 4,
  uint32: 4,
  uint8: 1,
  float16: 2,
  bfloat16: 2,
};

export const SCALAR_TYPES = [
  'int8',
  'uint8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'uint64',
  'float32',
  'float64',
] as const;
/** Kernel scalar parameter types cuda-pipe can encode. */
export type ScalarType = (typeof SCALAR_TYPES)[number];

export const SCALAR_BYTES: Record<ScalarType, number> = {
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  uint64: 8,
  float32: 4,
  float64: 8,
};

export const BUFFER_ROLES = ['in', 'out', 'inout', 'scratch', 'resident'] as const;
/**
 * in, out, inout and scratch buffers are chunked (over elements, or over items of `itemSize` elements each);
 * a resident buffer is copied to the device whole, once, before any timing, and every chunk reads all of it.
 */
export type BufferRole = (typeof BUFFER_ROLES)[number];

export const COLLECTIVES = ['allreduce', 'reducescatter', 'allgather'] as const;
/**
 * The NCCL collectives a collective stage runs (sums, in place over a chunk of one buffer, as DDP reduces a bucket).
 */
export type Collective = (typeof COLLECTIVES)[number];

export const HOST_MEMORY_KINDS = ['pinned', 'pageable', 'write-combined', 'registered'] as const;
export type HostMemoryKind = (typeof HOST_MEMORY_KINDS)[number];

export const ISSUE_ORDERS = ['depth-first', 'breadth-first'] as const;
/** depth-first: per chunk H2D, kernels, D2H; breadth-first: every H2D, then every kernel, then every D2H. */
export type IssueOrder = (typeof ISSUE_ORDERS)[number];

export const TOPOLOGIES = ['chunk-per-stream', 'stage-per-stream'] as const;
/**
 * How chunks map to streams. chunk-per-stream: chunk i runs all its stages on stream i mod S; stage-per-stream: one
 * stream per stage (load, compute, store), chunk i's kernel waiting on chunk i's load through an event.
 */
export type Topology = (typeof TOPOLOGIES)[number];

export const ISSUE_MODES = ['stream', 'graph'] as const;
/** stream: every op issued from the host each rep; graph: the rep's body captured once as a CUDA graph and replayed. */
export type IssueMode = (typeof ISSUE_MODES)[number];

export const STREAM_KINDS = ['non-blocking', 'blocking', 'legacy-default', 'per-thread-default'] as const;
/**
 * non-blocking: created with cudaStreamNonBlocking; blocking: created without it, so it serialises with the legacy
 * default stream; legacy-default: cudaStreamLegacy (handle 0x1) itself; per-thread-default: cudaStreamPerThread (0x2).
 */
export type StreamKind = (typeof STREAM_KINDS)[number];

export const ISSUE_COST_OPS = ['launch', 'copy', 'record-timing', 'record-untimed', 'wait'] as const;
/**
 * What `cuda-pipe overhead` issues in a batch: kernel launches, 4-byte copies, event records with and without timing,
 * cross-stream waits.
 */
export type IssueCostOp = (typeof ISSUE_COST_OPS)[number];

export const HOST_FUNCTIONS = ['checksum', 'empty'] as const;
/** What a host stage runs on the JS thread: a checksum of the chunk's output bytes, or nothing (the bare callback). */
export type HostFunctionKind = (typeof HOST_FUNCTIONS)[number];

export const HOST_THREADS = ['workers', 'js'] as const;
/** Where a host stage runs: a pool of worker threads fed by events, or the JS thread through cudaLaunchHostFunc. */
export type HostThread = (typeof HOST_THREADS)[number];

/** A stream priority as a config gives it: the device's highest or lowest, or a number checked against its range. */
export type PriorityLevel = 'high' | 'low' | number;

/** Why a mode stopped repeating; 'clearly-slower' is a sweep's layout dropped because it could not be the best. */
export const STOP_RULES = [
  'fixed-reps',
  'noise-target',
  'noise-stable',
  'max-time',
  'max-reps',
  'clearly-slower',
] as const;
export type StopRule = (typeof STOP_RULES)[number];

/** The layout an overlapped mode measures: its identity, not derived figures. */
export interface OverlapLayout {
  readonly chunks: number;
  readonly streams: number;
  readonly order: IssueOrder;
  readonly topology: Topology;
  // The fields below are absent in layouts that do not use them, so results written before they existed still read.
  /** 'graph' when the body is replayed as a CUDA graph; absent when issued op by op. */
  readonly issue?: 'graph';
  /** The host function run after each chunk's D2H (the config's `host:` stage); absent when there is none. */
  readonly host?: string;
  /** Device slots the chunks cycle through under a device-memory budget; absent when every chunk has its own. */
  readonly slots?: number;
  /** The op issued on the legacy default stream to show what it costs; absent in every other layout. */
  readonly legacyOp?: DefaultStreamOp;
  /** The same op issued on the per-thread default stream instead, which blocking streams do not wait for. */
  readonly perThreadOp?: DefaultStreamOp;
}

/**
 * The layout variants a run measures beside their twin without them (the stream toolbox's: a graph replay, a host
 * stage, an op on a default stream).
 */
export type LayoutVariant = 'issue' | 'host' | 'legacyOp' | 'perThreadOp';

export const DEFAULT_STREAM_OPS = ['kernel', 'h2d'] as const;
/** One chunk's op moved onto a default stream: its kernels, or its loads. */
export interface DefaultStreamOp {
  readonly chunk: number;
  readonly op: (typeof DEFAULT_STREAM_OPS)[number];
}

export const DEFAULT_STREAMS = ['legacy', 'per-thread'] as const;
/** cudaStreamLegacy, which every blocking stream synchronises with, or cudaStreamPerThread, which they do not. */
export type DefaultStream = (typeof DEFAULT_STREAMS)[number];

/** One chunk's op on one of the two default streams: a variant of a chunk-per-stream layout. */
export interface PlacedDefaultOp extends DefaultStreamOp {
  readonly stream: DefaultStream;
}

/**
 * What a measured mode is, as data. Code branches on `kind` (and `stage`); it never takes a mode's id apart.
 * - serial: whole buffers on one stream, the baseline of every speedup;
 * - overlapped: a chunked layout over several streams;
 * - stage: one stage alone on whole buffers (what the bound is built from), or a collective step alone;
 * - link: both copy directions at once, in large chunked copies over several streams per direction (the link at its
 *   best);
 * - kernels-chunked: the kernels alone, chunked and spread over the streams of an overlapped layout (no copies), so
 *   that concurrency between kernels and per-launch costs are in the model;
 * - op-cost: a batch of one kind of small op back to back on one stream: gated, its GPU time per op is the op's fixed
 *   cost on the device; its host issue time per op is the host's cost (`cuda-pipe overhead`).
 * - issue-cost: a batch of one kind of op issued back to back, for `cuda-pipe overhead` (the host's cost per op);
 * - latency: a latency-critical stream's small kernels beside the overlapped pipeline.
 * - split: the input split across several devices, each running the layout over its share, all issued together from
 *   one process; with `alone`, that one device's share run by itself (its link and engines without the others);
 * - split-link: each device's share copied both ways at once as the link mode copies (the link at its best), on
 *   every device at once, or with `alone` on that device by itself: what the host gives all links together;
 * - cross-device: one pipeline over two devices, each chunk's first kernels on the first, handed over by a peer copy,
 *   the rest and the store on the second;
 * - peer: the handed-over buffers copied whole from one device to the other, alone (what the peer link gives); with
 *   `both`, each way at once (probe's figure).
 * Overlapped layouts carry optional variants (graph replay, a host stage, a device ring, one op on the legacy or the
 * per-thread default stream).
 */
export type ModeRole =
  | { readonly kind: 'serial' }
  | { readonly kind: 'overlapped'; readonly layout: OverlapLayout }
  | { readonly kind: 'stage'; readonly stage: 'h2d' | 'd2h' }
  | { readonly kind: 'stage'; readonly stage: 'kernel'; readonly kernel: string }
  /**
   * A collective step alone (only its NCCL calls): on whole buffers, or, with `buckets`, one call per bucket of a
   * layout's chunks, the message size data-parallel users tune, so that its bandwidth is known at every bucket size.
   */
  | { readonly kind: 'stage'; readonly stage: 'collective'; readonly collective: string; readonly buckets?: number }
  | { readonly kind: 'link'; readonly copiesPerDirection: number; readonly streamsPerDirection: number }
  | { readonly kind: 'kernels-chunked'; readonly layout: OverlapLayout }
  | { readonly kind: 'op-cost'; readonly op: SmallOp }
  | { readonly kind: 'issue-cost'; readonly op: IssueCostOp }
  /**
   * A latency-critical stream's small kernels beside the overlapped pipeline; `priorities`: the urgent stream (and the
   * pipeline's, when the config sets one) got the priorities the config asked for, else every stream the default.
   */
  | { readonly kind: 'latency'; readonly kernel: string; readonly priorities: boolean }
  | {
      readonly kind: 'split';
      readonly layout: OverlapLayout;
      readonly devices: readonly number[];
      readonly alone?: number;
    }
  | { readonly kind: 'split-link'; readonly devices: readonly number[]; readonly alone?: number }
  | {
      readonly kind: 'cross-device';
      readonly layout: OverlapLayout;
      readonly from: number;
      readonly to: number;
      readonly after: string;
    }
  | { readonly kind: 'peer'; readonly from: number; readonly to: number; readonly both?: true };

export const SMALL_OPS = ['launch', 'h2d', 'd2h'] as const;
/** The small ops whose fixed costs the model needs: a kernel launch and a copy each way. */
export type SmallOp = (typeof SMALL_OPS)[number];

export type ModeKind = ModeRole['kind'];

/**
 * The key a mode is stored and paired under. Generated from the role, never parsed: code that needs to know what a
 * mode is reads its role.
 */
export function modeId(role: ModeRole): string {
  switch (role.kind) {
    case 'serial':
      return 'serial';
    case 'overlapped': {
      const { layout } = role;
      return (
        `overlapped:${layout.chunks}x${layout.streams}:${layout.order}:${layout.topology}` +
        (layout.slots === undefined ? '' : `:slots${layout.slots}`) +
        (layout.host === undefined ? '' : `:host-${layout.host}`) +
        (layout.legacyOp === undefined ? '' : `:legacy-${layout.legacyOp.op}${layout.legacyOp.chunk}`) +
        (layout.perThreadOp === undefined ? '' : `:per-thread-${layout.perThreadOp.op}${layout.perThreadOp.chunk}`) +
        (layout.issue === undefined ? '' : `:${layout.issue}`)
      );
    }
    case 'stage':
      if (role.stage === 'collective')
        return `collective:${role.collective}${role.buckets === undefined ? '' : `:${role.buckets}-buckets`}`;
      return role.stage === 'kernel' ? `kernel:${role.kernel}` : role.stage;
    case 'link':
      return 'bidirectional';
    case 'kernels-chunked':
      return (
        `kernels-chunked:${role.layout.chunks}x${role.layout.streams}:${role.layout.order}:${role.layout.topology}` +
        (role.layout.issue === undefined ? '' : `:${role.layout.issue}`)
      );
    case 'op-cost':
      return `op-cost:${role.op}`;
    case 'latency':
      return `latency:${role.kernel}:${role.priorities ? 'priorities' : 'equal'}`;
    case 'issue-cost':
      return `issue-cost:${role.op}`;
    case 'split':
      return (
        `split:${role.layout.chunks}x${role.layout.streams}:${role.layout.order}:d${role.devices.join('+d')}` +
        (role.alone === undefined ? '' : `:alone-d${role.alone}`)
      );
    case 'split-link':
      return `split-link:d${role.devices.join('+d')}${role.alone === undefined ? '' : `:alone-d${role.alone}`}`;
    case 'cross-device':
      return `cross-device:${role.layout.chunks}x${role.layout.streams}:${role.layout.order}:d${role.from}>d${role.to}:after-${role.after}`;
    case 'peer':
      return `peer:d${role.from}${role.both ? '<>' : '>'}d${role.to}`;
  }
}

/** True when two roles name the same mode (pairing across results goes through this, never through ids). */
export function sameRole(a: ModeRole, b: ModeRole): boolean {
  return modeId(a) === modeId(b);
}
