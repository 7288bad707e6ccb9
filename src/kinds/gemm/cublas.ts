import {
  type BoundCalls,
  type CheckedLibrary,
  type CudaLibrarySpec,
  loadOnce,
  nativeBlock,
  row,
} from '../../cuda/ffi.js';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import { openBlasLibrary } from '../blas/library.js';
import { CublasError } from '../blas/status.js';
import type { GemmDtype } from './spec.js';

// cuBLAS, for GEMM stages: located and checked like libcudart (cuda/locate.ts; its rows below), one handle per stream
// with its own workspace, and a prebuilt call for the timed loop. Only cublasGemmEx is bound: it takes every data
// type the stages offer through one signature.

/** The functions bound below, each with the CUDA release that added it: an older libcublas is refused as it loads. */
export const CUBLAS_LIBRARY: CudaLibrarySpec = {
  name: 'libcublas',
  title: 'cuBLAS (libcublas)',
  install: 'cuBLAS (CUDA toolkit, or the libcublas package of the same CUDA major version as libcudart)',
  override: 'CUDA_PIPE_CUBLAS',
  sonames: ['libcublas.so.13', 'libcublas.so.12', 'libcublas.so'],
  marker: 'cublasCreate_v2',
  requires: [
    row('4.0', 'cublasCreate_v2'),
    row('4.0', 'cublasDestroy_v2'),
    row('4.0', 'cublasSetStream_v2'),
    row('4.0', 'cublasGetVersion_v2'),
    row('8.0', 'cublasGemmEx'),
    row('9.0', 'cublasSetMathMode'),
    row('11.4', 'cublasSetWorkspace_v2'),
    row('11.4', 'cublasGetStatusString'),
  ],
};

declare const cublasBrand: unique symbol;
/** A cublasHandle_t. Branded so that it cannot be passed where a stream or a pointer is expected. */
export type CublasHandle = bigint & { readonly [cublasBrand]: 'CublasHandle' };

/** Whether cuBLAS reads an operand as stored (column-major) or transposed. */
export type GemmTranspose = 'N' | 'T';

/**
 * One cublasGemmEx call (the step's product is `GemmSpec` in spec.ts): C = alpha · op(A) · op(B) + beta · C,
 * column-major as
 * all hold `dtype`'s elements (C in the inputs' type, as PyTorch's matmul returns it).
 */
export interface CublasGemmCall {
  readonly transA: GemmTranspose;
  readonly transB: GemmTranspose;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly lda: number;
  readonly ldb: number;
  readonly ldc: number;
  readonly alpha: number;
  readonly beta: number;
  readonly dtype: GemmDtype;
  /** C holds float32 while A and B hold a 16-bit type (absent: C holds A's type). */
  readonly cFloat32?: boolean;
}

/** cudaDataType_t values (library_types.h). */
export const CUDA_DATA_TYPE = { R_32F: 0, R_16F: 2, R_16BF: 14 } as const;
/** cublasComputeType_t values (cublas_api.h, CUDA 11 and later). */
export const CUBLAS_COMPUTE = { COMPUTE_16F: 64, COMPUTE_32F: 68, COMPUTE_32F_FAST_TF32: 77 } as const;
export const CUBLAS_OP: Record<GemmTranspose, number> = { N: 0, T: 1 };
/**
 * CUBLAS_DEFAULT_MATH: no TF32 unless the compute type asks for it, reduced-precision reductions allowed (PyTorch's
 * default).
 */
const DEFAULT_MATH = 0;
/** CUBLAS_GEMM_DEFAULT: cuBLAS's heuristics pick the algorithm (the tensor-op variants are the same since CUDA 11). */
const GEMM_DEFAULT_ALGO = -1;

export interface GemmTypes {
  /** Of A, B and C. */
  readonly dataType: number;
  readonly computeType: number;
  readonly elementBytes: number;
}

/**
 * The cuBLAS types of each dtype. Every one accumulates in fp32, so alpha and beta are floats for all four: fp16 with
 * CUBLAS_COMPUTE_32F rather than 16F because a 4096-long fp16 sum overflows and loses most digits, and because
 * PyTorch's fp16 matmul, the baseline we are compared with, accumulates in fp32 too.
 */
export const GEMM_TYPES: Readonly<Record<GemmDtype, GemmTypes>> = {
  fp32: { dataType: CUDA_DATA_TYPE.R_32F, computeType: CUBLAS_COMPUTE.COMPUTE_32F, elementBytes: 4 },
  tf32: { dataType: CUDA_DATA_TYPE.R_32F, computeType: CUBLAS_COMPUTE.COMPUTE_32F_FAST_TF32, elementBytes: 4 },
  fp16: { dataType: CUDA_DATA_TYPE.R_16F, computeType: CUBLAS_COMPUTE.COMPUTE_32F, elementBytes: 2 },
  bf16: { dataType: CUDA_DATA_TYPE.R_16BF, computeType: CUBLAS_COMPUTE.COMPUTE_32F, elementBytes: 2 },
};

/** What a GPU-tuned workspace needs: cuBLAS asks for 32 MiB per handle on Hopper. */
export const DEFAULT_WORKSPACE_BYTES = 32 << 20;

/** "bf16 4096×4096×4096 (A N, B T), lda 4096 ldb 4096 ldc 4096": how messages and records name a GEMM. */
export function describeGemm(spec: CublasGemmCall): string {
  return `${spec.dtype}${spec.cFloat32 ? ' (C float32)' : ''} ${spec.m}×${spec.n}×${spec.k} (A ${spec.transA}, B ${spec.transB}), lda ${spec.lda} ldb ${spec.ldb} ldc ${spec.ldc}`;
}

/**
 * A GEMM whose scalars live in native memory, built once: the hot loop calls `launch` and compares its status with 0.
 */
export interface GemmRecord {
  /** Enqueues the GEMM on the handle's stream; returns the raw cublasStatus_t. */
  readonly launch: () => number;
  readonly describe: string;
  free(): void;
}

export const CUBLAS_PROTOTYPES = {
  create: 'int cublasCreate_v2(_Out_ void **handle)',
  destroy: 'int cublasDestroy_v2(void *handle)',
  setStream: 'int cublasSetStream_v2(void *handle, void *stream)',
  setWorkspace: 'int cublasSetWorkspace_v2(void *handle, void *workspace, size_t bytes)',
  setMathMode: 'int cublasSetMathMode(void *handle, int mode)',
  getVersion: 'int cublasGetVersion_v2(void *handle, _Out_ int *version)',
  statusString: 'const char *cublasGetStatusString(int status)',
  gemmEx:
    'int cublasGemmEx(void *handle, int transa, int transb, int m, int n, int k, void *alpha, void *A, int Atype, int lda, ' +
    'void *B, int Btype, int ldb, void *beta, void *C, int Ctype, int ldc, int computeType, int algo)',
} as const;

/** libcublas, typed. Every checked call throws `CublasError`; `record` builds the hot loop's closure. */
export class Cublas {
  readonly libraryPath: string;
  private readonly fn: BoundCalls<typeof CUBLAS_PROTOTYPES>;
  private readonly out = new BigUint64Array(1);

  constructor(private readonly lib: CheckedLibrary<BoundCalls<typeof CUBLAS_PROTOTYPES>, CublasError>) {
    this.libraryPath = lib.path;
    this.fn = lib.fn;
  }

  check(status: number, api: string, context?: string): void {
    this.lib.check(status, api, context);
  }

  failure(status: number, api: string, context?: string): CublasError {
    return this.lib.failure(status, api, context);
  }

  /**
   * A handle that issues on `stream` into its own `workspace`, with the default math mode. The workspace is set after
   * the stream because cublasSetStream puts the handle back on cuBLAS's own pool; with a workspace of its own a handle
   * allocates nothing while a graph is captured, and two handles never share scratch memory across streams.
   */
  create(stream: StreamHandle, workspace: DevicePtr, workspaceBytes: number): CublasHandle {
    this.out[0] = 0n;
    this.check(this.fn.create(this.out) as number, 'cublasCreate_v2');
    const handle = (this.out[0] ?? 0n) as CublasHandle;
    try {
      this.check(this.fn.setStream(handle, stream) as number, 'cublasSetStream_v2');
      this.check(
        this.fn.setWorkspace(handle, workspace, workspaceBytes) as number,
        'cublasSetWorkspace_v2',
        `${workspaceBytes} bytes`,
      );
      this.check(this.fn.setMathMode(handle, DEFAULT_MATH) as number, 'cublasSetMathMode');
    } catch (error) {
      this.fn.destroy(handle);
      throw error;
    }
    return handle;
  }

  destroy(handle: CublasHandle): void {
    this.check(this.fn.destroy(handle) as number, 'cublasDestroy_v2');
  }

  /** CUBLAS_VERSION of the loaded library: major × 10000 + minor × 100 + patch (13.0.0 is 130000). */
  version(handle: CublasHandle): number {
    const version = [0];
    this.check(this.fn.getVersion(handle, version) as number, 'cublasGetVersion_v2');
    return version[0] ?? 0;
  }

  /**
   * The GEMM bound once: alpha and beta encoded into native floats (host pointer mode, the handle's default), every
   * other argument captured as a number or pointer, so a call costs the conversion of 19 arguments and nothing more.
   */
  record(handle: CublasHandle, spec: CublasGemmCall, a: DevicePtr, b: DevicePtr, c: DevicePtr): GemmRecord {
    const types = GEMM_TYPES[spec.dtype];
    const scalars = nativeBlock(8);
    scalars.view.setFloat32(0, spec.alpha, true);
    scalars.view.setFloat32(4, spec.beta, true);
    const alpha = scalars.address;
    const beta = alpha + 4n;
    const gemmEx = this.fn.gemmEx;
    const { m, n, k, lda, ldb, ldc } = spec;
    const transA = CUBLAS_OP[spec.transA];
    const transB = CUBLAS_OP[spec.transB];
    const { dataType, computeType } = types;
    const cType = spec.cFloat32 ? CUDA_DATA_TYPE.R_32F : dataType;
    return {
      launch: () =>
        gemmEx(
          handle,
          transA,
          transB,
          m,
          n,
          k,
          alpha,
          a,
          dataType,
          lda,
          b,
          dataType,
          ldb,
          beta,
          c,
          cType,
          ldc,
          computeType,
          GEMM_DEFAULT_ALGO,
        ) as number,
      describe: describeGemm(spec),
      free: () => scalars.free(),
    };
  }

  /** One checked GEMM, for set-up and tests; the timed loop uses `record`. */
  gemm(handle: CublasHandle, spec: CublasGemmCall, a: DevicePtr, b: DevicePtr, c: DevicePtr): void {
    const record = this.record(handle, spec, a, b, c);
    try {
      this.check(record.launch(), 'cublasGemmEx', record.describe);
    } finally {
      record.free();
    }
  }
}

/** Loads libcublas (see cuda/locate.ts for where it looks); a missing or incomplete one is an EnvironmentError. */
export function loadCublas(env: NodeJS.ProcessEnv = process.env): Cublas {
  return new Cublas(openBlasLibrary(CUBLAS_LIBRARY, CUBLAS_PROTOTYPES, (...args) => new CublasError(...args), env));
}

/** libcublas, loaded once per process. */
export const openCublas = loadOnce(loadCublas);
