import { DeviceFailure, EnvironmentError } from '../errors.js';
import { driverLibraryLoads, loadedLibraryPath } from './load.js';

/** A CUDA runtime call that returned something other than cudaSuccess. */
export class CudaError extends DeviceFailure {
  constructor(
    readonly api: string,
    readonly code: number,
    readonly errorName: string,
    readonly errorMessage: string,
    context?: string,
  ) {
    super(`${api} failed${context ? ` (${context})` : ''}: ${errorName} (${code}): ${errorMessage}`, {
      contextLost: STICKY_ERRORS.has(code),
    });
  }
}

/**
 * The codes CUDA documents as leaving the process "in an inconsistent state": every later call returns the same
 * error until the process ends. Not every code in 700–799 is one (701, out of resources for a launch, is not).
 */
export const STICKY_ERRORS: ReadonlySet<number> = new Set([
  700, // cudaErrorIllegalAddress
  702, // cudaErrorLaunchTimeout
  710, // cudaErrorAssert
  714, // cudaErrorHardwareStackError
  715, // cudaErrorIllegalInstruction
  716, // cudaErrorMisalignedAddress
  717, // cudaErrorInvalidAddressSpace
  718, // cudaErrorInvalidPc
  719, // cudaErrorLaunchFailure
]);

export const CUDA_ERROR = {
  notReady: 600,
  illegalAddress: 700,
} as const;

// Codes that say the machine cannot run CUDA at all, rather than that a call went wrong.
const ENVIRONMENT_CODES: ReadonlyMap<number, { sentence: string; hint: string }> = new Map([
  [
    34,
    {
      sentence: 'The CUDA driver library that was found is a stub, not a real driver',
      hint: 'Remove the stubs directory from LD_LIBRARY_PATH so that the real libcuda.so is loaded.',
    },
  ],
  [
    3,
    {
      sentence: 'The CUDA driver failed to initialise',
      hint: 'Check the driver with nvidia-smi; a reboot or reloading the kernel module may be needed.',
    },
  ],
  [
    803,
    {
      sentence: 'The CUDA driver library and the loaded kernel module have different versions',
      hint: 'Reload the NVIDIA kernel module or reboot after a driver upgrade.',
    },
  ],
  [
    46,
    {
      sentence: 'Every CUDA device is busy or unavailable',
      hint: 'Another process may hold a GPU in exclusive compute mode; check nvidia-smi.',
    },
  ],
]);

const NO_DRIVER = 35;
const NO_DEVICE = 100;

/** What still works on a machine without a GPU; the one place that says so. */
export const WORKS_WITHOUT_GPU =
  'Without a GPU these still work: `run --dry-run` (the plan), `kernels --check` (compiles with NVRTC), `schema`, ' +
  '`report` and `compare` (saved results).';

/**
 * The explanation for "no driver" (35) and "no device" (100), the answers every CUDA call gives on a machine without
 * a usable GPU: which libcudart said it, whether the driver's own library (libcuda.so.1) is there at all, and what
 * can be done without a GPU.
 */
export function noGpuExplanation(code: number, api: string, name: string): { message: string; hint: string } {
  const runtime = loadedLibraryPath('cudart') ?? 'libcudart';
  const driverFound = driverLibraryLoads();
  const facts = `CUDA runtime ${runtime}; driver library libcuda.so.1: ${driverFound ? 'found' : 'not found'}`;
  if (code === NO_DEVICE) {
    return {
      message: `No CUDA device: the driver is loaded but reports no GPU (${api} returned ${name}, ${code}; ${facts}).`,
      hint: `Check that the GPU is visible (nvidia-smi) and that CUDA_VISIBLE_DEVICES does not hide it. ${WORKS_WITHOUT_GPU}`,
    };
  }
  const remedy = driverFound
    ? `The driver is installed but older than this runtime needs, or cannot reach a GPU: check nvidia-smi, upgrade the driver, or point CUDA_PIPE_CUDART at an older libcudart.`
    : 'No NVIDIA driver is installed here: run on a machine with an NVIDIA GPU and its driver (nvidia-smi should list the GPU).';
  return {
    message: `No CUDA driver: the CUDA runtime found no usable NVIDIA driver (${api} returned ${name}, ${code}; ${facts}).`,
    hint: `${remedy} ${WORKS_WITHOUT_GPU}`,
  };
}

/** Turns a failed call into the error the user should see: an environment error for "no driver"-like codes. */
export function cudaFailure(api: string, code: number, name: string, message: string, context?: string): Error {
  const cause = new CudaError(api, code, name, message, context);
  if (code === NO_DRIVER || code === NO_DEVICE) {
    const explanation = noGpuExplanation(code, api, name);
    return new EnvironmentError(explanation.message, { hint: explanation.hint, cause });
  }
  const environment = ENVIRONMENT_CODES.get(code);
  if (environment) {
    return new EnvironmentError(`${environment.sentence} (${api} returned ${name}, ${code}).`, {
      hint: environment.hint,
      cause,
    });
  }
  return cause;
}
