import { CudaPipeError } from '../../../errors.js';

/**
 * A host stage's function failed while running on a worker thread: it threw, or its worker died. Exit 4 like a
 * faulting kernel, but the CUDA context is untouched, so the ordinary cleanup runs.
 */
export class HostStageFailure extends CudaPipeError {
  readonly exitCode = 4 as const;
}
