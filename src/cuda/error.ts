import { DeviceFailure, EnvironmentError } from '../errors.js';

/** A CUDA runtime call that returned something other than cudaSuccess. */
export class CudaError extends DeviceFailure {
  constructor(
    readonly api: string,
    readonly code: number,
    readonly errorName: string,
    readonly errorMessage: string,
    context?: string,
  ) {
    super(`${api} failed${context ? ` (${context})` : ''}: ${errorName} (${code}): ${errorMessage}`);
  }
}

export const CUDA_ERROR = {
  notReady: 600,
  illegalAddress: 700,
} as const;

// Codes that say the machine cannot run CUDA at all, rather than that a call went wrong.
const ENVIRONMENT_CODES: ReadonlyMap<number, { sentence: string; hint: string }> = new Map([
  [35, {
    sentence: 'No CUDA driver: the CUDA runtime found no NVIDIA driver, or one older than it needs',
    hint: 'Run this on a machine with an NVIDIA GPU and its driver (nvidia-smi should list the GPU), or point CUDA_PIPE_CUDART at a runtime no newer than the driver.',
  }],
  [100, {
    sentence: 'No CUDA device: the driver is loaded but reports no GPU',
    hint: 'Check that the GPU is visible (nvidia-smi) and that CUDA_VISIBLE_DEVICES does not hide it.',
  }],
  [34, {
    sentence: 'The CUDA driver library that was found is a stub, not a real driver',
    hint: 'Remove the stubs directory from LD_LIBRARY_PATH so that the real libcuda.so is loaded.',
  }],
  [3, {
    sentence: 'The CUDA driver failed to initialise',
    hint: 'Check the driver with nvidia-smi; a reboot or reloading the kernel module may be needed.',
  }],
  [803, {
    sentence: 'The CUDA driver library and the loaded kernel module have different versions',
    hint: 'Reload the NVIDIA kernel module or reboot after a driver upgrade.',
  }],
  [46, {
    sentence: 'Every CUDA device is busy or unavailable',
    hint: 'Another process may hold a GPU in exclusive compute mode; check nvidia-smi.',
  }],
]);

/** Turns a failed call into the error the user should see: an environment error for "no driver"-like codes. */
export function cudaFailure(api: string, code: number, name: string, message: string, context?: string): Error {
  const environment = ENVIRONMENT_CODES.get(code);
  if (environment) {
    const cause = new CudaError(api, code, name, message, context);
    return new EnvironmentError(`${environment.sentence} (${api} returned ${name}, ${code}).`, {
      hint: environment.hint,
      cause,
    });
  }
  return new CudaError(api, code, name, message, context);
}
