// Buffers of any shape: chunked buffers hold `itemSize` elements per item and follow the chunks' item ranges; a
// resident buffer is whole on the device, once, and no chunk range applies to it.

// Structural, not ConfigBuffer's: types.ts imports toolbox.ts, which checks rings with these.
interface Roled {
  readonly role: string;
}
interface Shaped extends Roled {
  readonly itemSize: number;
  readonly elementBytes: number;
}

export const isResident = (b: Roled): boolean => b.role === 'resident';

/** The buffers chunks cut: every one but the resident ones. */
export const chunkedBuffers = <B extends Roled>(buffers: readonly B[]): B[] => buffers.filter((b) => !isResident(b));

export const residentBuffers = <B extends Roled>(buffers: readonly B[]): B[] => buffers.filter(isResident);

/** Bytes one item takes in a chunked buffer. */
export const itemBytes = (b: Shaped): number => b.itemSize * b.elementBytes;

/** Bytes one item takes in all the chunked buffers together: what a chunk of n items costs per device slot. */
export const bytesPerItem = (buffers: readonly Shaped[]): number =>
  chunkedBuffers(buffers).reduce((sum, b) => sum + itemBytes(b), 0);

/** Bytes of the resident buffers, which sit on the device whole beside any ring. */
export const residentBytes = (buffers: readonly (Roled & { readonly bytes: number })[]): number =>
  residentBuffers(buffers).reduce((sum, b) => sum + b.bytes, 0);

/** Device bytes of one buffer when the chunked buffers hold `deviceItems` items (all of them, or a ring's slots). */
export const deviceBytesOf = (b: Shaped & { readonly bytes: number }, deviceItems: number): number =>
  isResident(b) ? b.bytes : deviceItems * itemBytes(b);
