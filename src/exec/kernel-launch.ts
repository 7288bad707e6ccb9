import { offsetPointer, type KernelArgValue } from '../cuda/types.js';
import { chunkArgs, launchElements } from '../plan/kernel-args.js';
import type { PlanKernel } from '../plan/types.js';
import type { DeviceFacts } from '../result/environment.js';
import type { DeviceBuffers } from './buffers.js';

/**
 * A plan kernel's launch over one chunk: its grid for the elements its arguments cover there, and its arguments at the
 * chunk's offsets on `buffers`' device.
 */
export function kernelLaunch(
  kernel: PlanKernel,
  op: { readonly first: number; readonly count: number; readonly deviceFirst: number },
  buffers: DeviceBuffers,
  device: Pick<DeviceFacts, 'multiprocessors' | 'maxThreadsPerMultiprocessor'>,
): { grid: number; block: number; args: KernelArgValue[] } {
  const named = kernel.args.flatMap((a) => (a.kind === 'buffer' ? [buffers.binding(a.buffer).buffer] : []));
  const args = chunkArgs(kernel.args, named, op).map(
    (arg): KernelArgValue =>
      arg.kind === 'buffer'
        ? { kind: 'pointer', value: offsetPointer(buffers.binding(arg.buffer).device, arg.byteOffset) }
        : arg,
  );
  return { grid: gridSize(kernel, launchElements(kernel.args, named, op.count), device), block: kernel.block, args };
}

export function gridSize(
  kernel: Pick<PlanKernel, 'grid' | 'block'>,
  count: number,
  device: Pick<DeviceFacts, 'multiprocessors' | 'maxThreadsPerMultiprocessor'>,
): number {
  const cover = Math.max(1, Math.ceil(count / kernel.block));
  if (kernel.grid === 'cover') return cover;
  if (kernel.grid === 'auto') {
    const resident =
      device.multiprocessors * Math.max(1, Math.floor(device.maxThreadsPerMultiprocessor / kernel.block));
    return Math.min(cover, resident);
  }
  return kernel.grid;
}
