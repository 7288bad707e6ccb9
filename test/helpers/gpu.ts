import { openRuntime } from '../../src/cuda/runtime.js';

/** Why GPU tests cannot run here, or null when a device is present. Shown as the skip reason. */
export function gpuSkipReason(): string | null {
  try {
    const count = openRuntime().deviceCount();
    return count > 0 ? null : 'no CUDA device on this machine';
  } catch (error) {
    return `no GPU here: ${(error as Error).message.split('\n')[0]}`;
  }
}
