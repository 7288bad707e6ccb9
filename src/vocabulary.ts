// The words every layer shares: element and scalar types, buffer roles, host memory kinds, issue orders, and the
// role of a measured mode. Plain data and types only, so config/, plan/, exec/, measure/ and report/ can all import
// it without importing each other.

export const ELEMENT_TYPES = ['float32', 'float64', 'int32', 'uint32', 'uint8', 'float16'] as const;
/** Buffer element types; float16 is moved and compared as raw 16-bit values. */
export type ElementType = (typeof ELEMENT_TYPES)[number];

export const ELEMENT_BYTES: Record<ElementType, number> = { float32: 4, float64: 8, int32: 4, uint32: 4, uint8: 1, float16: 2 };

export const SCALAR_TYPES = ['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'float32', 'float64'] as const;
/** Kernel scalar parameter types cuda-pipe can encode. */
export type ScalarType = (typeof SCALAR_TYPES)[number];

export const SCALAR_BYTES: Record<ScalarType, number> = {
  int8: 1, uint8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8, float32: 4, float64: 8,
};

export const BUFFER_ROLES = ['in', 'out', 'inout', 'scratch'] as const;
export type BufferRole = (typeof BUFFER_ROLES)[number];

export const HOST_MEMORY_KINDS = ['pinned', 'pageable', 'write-combined', 'registered'] as const;
export type HostMemoryKind = (typeof HOST_MEMORY_KINDS)[number];

export const ISSUE_ORDERS = ['depth-first', 'breadth-first'] as const;
/** depth-first: per chunk H2D, kernels, D2H; breadth-first: every H2D, then every kernel, then every D2H. */
export type IssueOrder = (typeof ISSUE_ORDERS)[number];

export const TOPOLOGIES = ['chunk-per-stream'] as const;
/** How chunks map to streams. chunk-per-stream: chunk i runs all its stages on stream i mod S. */
export type Topology = (typeof TOPOLOGIES)[number];

/** Why a mode stopped repeating; 'clearly-slower' is a sweep's layout dropped because it could not be the best. */
export const STOP_RULES = ['fixed-reps', 'noise-target', 'noise-stable', 'max-time', 'max-reps', 'clearly-slower'] as const;
export type StopRule = (typeof STOP_RULES)[number];

/** The layout an overlapped mode measures: its identity, not derived figures. */
export interface OverlapLayout {
  readonly chunks: number;
  readonly streams: number;
  readonly order: IssueOrder;
  readonly topology: Topology;
}

/**
 * What a measured mode is, as data. Code branches on `kind` (and `stage`); it never takes a mode's id apart.
 * - serial: whole buffers on one stream, the baseline of every speedup;
 * - overlapped: a chunked layout over several streams;
 * - stage: one stage alone on whole buffers (what the bound is built from);
 * - link: both copy directions at once, in large chunked copies over several streams per direction (the link at its
 *   best);
 * - kernels-chunked: the kernels alone, chunked and spread over the streams of an overlapped layout (no copies), so
 *   that concurrency between kernels and per-launch costs are in the model;
 * - op-cost: a batch of one kind of small op back to back on one stream: gated, its GPU time per op is the op's fixed
 *   cost on the device; its host issue time per op is the host's cost (`cuda-pipe overhead`).
 */
export type ModeRole =
  | { readonly kind: 'serial' }
  | { readonly kind: 'overlapped'; readonly layout: OverlapLayout }
  | { readonly kind: 'stage'; readonly stage: 'h2d' | 'd2h' }
  | { readonly kind: 'stage'; readonly stage: 'kernel'; readonly kernel: string }
  | { readonly kind: 'link'; readonly copiesPerDirection: number; readonly streamsPerDirection: number }
  | { readonly kind: 'kernels-chunked'; readonly layout: OverlapLayout }
  | { readonly kind: 'op-cost'; readonly op: SmallOp };

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
    case 'overlapped':
      return `overlapped:${role.layout.chunks}x${role.layout.streams}:${role.layout.order}:${role.layout.topology}`;
    case 'stage':
      return role.stage === 'kernel' ? `kernel:${role.kernel}` : role.stage;
    case 'link':
      return 'bidirectional';
    case 'kernels-chunked':
      return `kernels-chunked:${role.layout.chunks}x${role.layout.streams}:${role.layout.order}:${role.layout.topology}`;
    case 'op-cost':
      return `op-cost:${role.op}`;
  }
}

/** True when two roles name the same mode (pairing across results goes through this, never through ids). */
export function sameRole(a: ModeRole, b: ModeRole): boolean {
  return modeId(a) === modeId(b);
}
