import type { ModelResource } from '../api/index.js';

// The SMs, which kernels and every library call on them (cuBLAS, cuBLASLt) share: one resource of the overlap model,
// one engine row of the trace, and what the library calls are alike in.

/**
 * The SMs in the overlap model: every compute step's time alone on whole buffers (a mode per step), or all of them
 * chunked as the layout runs them, and the fixed cost of a launch.
 */
export const SMS: ModelResource = {
  term: 'kernels',
  estimate: 'alone',
  hostLink: false,
  measured: (p) => ({ wholeMs: p.kernelWholeMs, opMs: p.launchOpMs, opsPerChunk: p.kernelsPerChunk, bytes: 0 }),
};

/** The SMs as the trace draws them: one engine row that every compute kind on them shares. */
export const SMS_ENGINE = { row: 3000, name: 'SMs', hostCopy: false, exclusive: false } as const;

/**
 * What every library call on the SMs (a cuBLAS GEMM, a cuBLASLt matmul) is alike in: it moves no bytes and owns its
 * op kind; it launches kernels of its own, and may clear its workspace with a memset among them, each with the
 * correlation id of the call, which the timeline spans; its time comes from its mode alone on whole buffers; and the
 * library may pick another algorithm for a chunk's rows than for the whole buffers, so its outputs take
 * verify.tolerance.
 */
export const LIBRARY_ON_SMS = {
  moves: () => null,
  owns: () => true,
  touchesDevice: true,
  cupti: { kind: 'kernel', memsets: true },
  model: SMS,
  verify: 'tolerance',
  subject: (op: { readonly kernel: string | null }) => op.kernel,
} as const;
