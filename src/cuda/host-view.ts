import koffi from 'koffi';

/**
 * A zero-copy byte view of native host memory that another thread allocated: a worker thread gets the address as
 * a plain BigInt (pointers do not cross threads, numbers do) and opens its own view, so pinned memory reaches the
 * worker without a copy. The view starts at the address rounded down to 8 bytes and is cut back to the address, so
 * its byteOffset keeps the address's alignment: a checksum of aligned words, or a Float64Array over it, sees what
 * it would see through the allocating thread's view. The memory must outlive the view; its owner frees it only
 * after every worker finished with it.
 */
export function hostView(address: bigint, bytes: number): Uint8Array {
  const misalignment = Number(address % 8n);
  const view = new Uint8Array(koffi.view(address - BigInt(misalignment), bytes + misalignment));
  return view.subarray(misalignment);
}
