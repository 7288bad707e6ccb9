import type { DevicePtr, StreamHandle } from '../../src/cuda/types.js';
import type { IssueSite } from '../../src/kinds/index.js';

// An IssueSite without a device, for a kind's runtime under test: each buffer lives at its own fake base address,
// so a test reads an operand back as `buffer@element` (`siteAddress`).

const BASE = 1n << 32n;
const buffers = new Map<string, bigint>();

const baseOf = (buffer: string): bigint => {
  let base = buffers.get(buffer);
  if (base === undefined) {
    base = BigInt(buffers.size + 1) * BASE;
    buffers.set(buffer, base);
  }
  return base;
};

/** A site on stream 7 of device 0 whose buffers hold `elementBytes`-byte elements of `type`. */
export function fakeSite(options: { readonly elementBytes?: number; readonly type?: string } = {}): IssueSite {
  const elementBytes = options.elementBytes ?? 4;
  return {
    stream: 7n as StreamHandle,
    device: 0,
    schedule: 'a test schedule',
    scheduleId: 'test',
    ranges: [],
    address: (buffer, elementOffset) => (baseOf(buffer) + BigInt(elementOffset)) as DevicePtr,
    buffer: () => ({ type: options.type ?? 'float32', elementBytes }),
    onDevice: (make) => make(),
    hostCall: () => {
      throw new Error('a fake site runs no host function');
    },
  };
}

/** The `buffer@element` a fake address stands for. */
export const siteAddress = (pointer: DevicePtr): string => {
  const base = (pointer / BASE) * BASE;
  const name = [...buffers].find(([, b]) => b === base)?.[0] ?? '?';
  return `${name}@${pointer - base}`;
};
