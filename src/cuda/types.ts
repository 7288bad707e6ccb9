import type { ScalarType } from '../vocabulary.js';

// koffi 3 hands pointers over as BigInt. Branding them keeps a device pointer from being passed where a host
// pointer or a stream is expected, and makes every piece of pointer arithmetic go through `offsetPointer`.

declare const brand: unique symbol;
type Branded<T, B extends string> = T & { readonly [brand]: B };

export type DevicePtr = Branded<bigint, 'DevicePtr'>;
export type HostPtr = Branded<bigint, 'HostPtr'>;
export type StreamHandle = Branded<bigint, 'Stream'>;
export type EventHandle = Branded<bigint, 'Event'>;
export type LibraryHandle = Branded<bigint, 'Library'>;
export type KernelHandle = Branded<bigint, 'Kernel'>;
export type GraphHandle = Branded<bigint, 'Graph'>;
export type GraphExecHandle = Branded<bigint, 'GraphExec'>;

export function offsetPointer<P extends DevicePtr | HostPtr>(pointer: P, bytes: number): P {
  return (pointer + BigInt(bytes)) as P;
}

/** The legacy default stream (handle 0). */
export const DEFAULT_STREAM = 0n as StreamHandle;
/** cudaStreamLegacy: the legacy default stream named explicitly, whatever the per-thread compilation mode. */
export const LEGACY_STREAM = 1n as StreamHandle;
/** cudaStreamPerThread: the calling thread's default stream, which does not synchronise with other streams. */
export const PER_THREAD_STREAM = 2n as StreamHandle;

export type { ScalarType } from '../vocabulary.js';

/** One kernel argument as it goes into the launch's argument block. */
export type KernelArgValue =
  | { readonly kind: 'pointer'; readonly value: DevicePtr | HostPtr }
  | { readonly kind: 'scalar'; readonly type: ScalarType; readonly value: number | bigint };

export type CopyDirection = 'h2d' | 'd2h' | 'd2d';

export type HostAllocKind = 'pinned' | 'write-combined' | 'mapped';
