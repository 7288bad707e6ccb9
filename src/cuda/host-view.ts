import koffi from 'koffi';

/**
 * A zero-copy byte view of native host memory that another thread allocated: a worker thread gets the address as
 * a plain BigInt (numbers cross threads; views do not) and opens its own view, so pinned memory reaches the worker
 * without a copy. Like `hostBytes`, the view starts at byteOffset 0, so a checksum over it sums the same words as
 * one over the allocating thread's view. The memory must outlive the view: its owner frees it only after every
 * worker's task over it ended.
 */
export function hostView(address: bigint, bytes: number): Uint8Array {
  return new Uint8Array(koffi.view(address, bytes));
}
