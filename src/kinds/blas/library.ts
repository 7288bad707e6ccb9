import {
  type BoundCalls,
  type CheckedLibrary,
  checkedLibrary,
  type CudaLibrarySpec,
  openCudaLibrary,
} from '../../cuda/ffi.js';
import { CUBLAS_STATUS_NAME, type CublasError } from './status.js';

// A library of the cuBLAS family (cuBLAS, cuBLASLt) as its kind opens it: found and checked by cuda-pipe's own
// search against the rows its kind declares, its functions bound by name, and a status other than success as the
// family's error, in the library's own words.

/** A cuBLAS-family library's C prototypes by name, with the one that words a status. */
export type BlasPrototypes = Readonly<Record<string, string>> & { readonly statusString: string };

/** How a kind makes its error from a failed call: cuBLAS's CublasError, or one with the library's own hints. */
export type BlasError<E extends CublasError> = (
  api: string,
  status: number,
  statusName: string,
  description: string,
  context?: string,
) => E;

/** A cublasStatus_t's name, for messages that must not depend on the library that failed to answer. */
export const statusName = (status: number): string => CUBLAS_STATUS_NAME.get(status) ?? 'unknown cuBLAS status';

export function openBlasLibrary<P extends BlasPrototypes, E extends CublasError>(
  spec: CudaLibrarySpec,
  prototypes: P,
  error: BlasError<E>,
  env: NodeJS.ProcessEnv = process.env,
): CheckedLibrary<BoundCalls<P>, E> {
  return checkedLibrary(openCudaLibrary(spec, env), prototypes, (fn, status, api, context) =>
    error(api, status, statusName(status), fn.statusString(status) as string, context),
  );
}

/** The C function a prototype declares: "cublasCreate_v2" of "int cublasCreate_v2(_Out_ void **handle)". */
export const prototypeName = (prototype: string): string => /(\w+)\(/.exec(prototype)?.[1] ?? prototype;
