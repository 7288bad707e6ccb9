import koffi from 'koffi';
import type { HostPtr } from './types.js';

/** Plain malloc'd (pageable) native memory: what a program gets without asking CUDA. */
export function allocPageable(bytes: number): HostPtr {
  // koffi counts elements in a signed 32-bit int: 8-byte elements reach 16 GiB where bytes stop at 2 GiB.
  return koffi.alloc('uint64', Math.max(1, Math.ceil(bytes / 8))) as HostPtr;
}

export function freePageable(pointer: HostPtr): void {
  koffi.free(pointer);
}

/**
 * A zero-copy byte view of native host memory. The view must be dropped before the memory is freed; callers keep
 * views inside the scope that owns the allocation.
 */
export function hostBytes(pointer: HostPtr, bytes: number): Uint8Array {
  return new Uint8Array(koffi.view(pointer, bytes));
}
