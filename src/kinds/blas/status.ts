import { DeviceFailure } from '../../errors.js';

// How the cuBLAS family (cuBLAS, cuBLASLt) answers: one status type, named alike, with hints by status.

/** cublasStatus_t names, for messages that must not depend on the library that failed to answer. */
export const CUBLAS_STATUS_NAME: ReadonlyMap<number, string> = new Map([
  [0, 'CUBLAS_STATUS_SUCCESS'],
  [1, 'CUBLAS_STATUS_NOT_INITIALIZED'],
  [3, 'CUBLAS_STATUS_ALLOC_FAILED'],
  [7, 'CUBLAS_STATUS_INVALID_VALUE'],
  [8, 'CUBLAS_STATUS_ARCH_MISMATCH'],
  [11, 'CUBLAS_STATUS_MAPPING_ERROR'],
  [13, 'CUBLAS_STATUS_EXECUTION_FAILED'],
  [14, 'CUBLAS_STATUS_INTERNAL_ERROR'],
  [15, 'CUBLAS_STATUS_NOT_SUPPORTED'],
  [16, 'CUBLAS_STATUS_LICENSE_ERROR'],
]);

const STATUS_HINT: ReadonlyMap<number, string> = new Map([
  [
    1,
    'cuBLAS could not initialise: libcublas must come from the same CUDA major version as libcudart, and the driver must see a GPU (nvidia-smi).',
  ],
  [
    3,
    'cuBLAS could not allocate device memory: lower the sizes or the number of streams, or free memory held by other processes.',
  ],
  [
    7,
    'An argument is out of range: m, n and k must be positive, lda at least the rows of A as stored, ldb those of B, ldc ≥ m.',
  ],
  [8, 'This GPU lacks what the data type needs: bf16 and tf32 need compute capability 8.0 or newer.'],
  [15, 'cuBLAS does not support this combination of data types, transposes and leading dimensions.'],
]);

/** A cuBLAS call that returned something other than CUBLAS_STATUS_SUCCESS; `hints` by status (cuBLASLt has its own). */
export class CublasError extends DeviceFailure {
  constructor(
    readonly api: string,
    readonly status: number,
    readonly statusName: string,
    description: string,
    context?: string,
    hints: ReadonlyMap<number, string> = STATUS_HINT,
  ) {
    super(`${api} failed${context ? ` (${context})` : ''}: ${statusName} (${status}): ${description}`, {
      hint: hints.get(status),
    });
  }
}
