import { openBlasLibrary, statusName } from '../blas/library.js';
import { CublasError } from '../blas/status.js';
import { type CudaLibrarySpec, loadOnce, row } from '../../cuda/ffi.js';
import type { DevicePtr, HostPtr, StreamHandle } from '../../cuda/types.js';
import type { Epilogue, MatmulDtype, OutputType } from './spec.js';

// libcublasLt, bound through src/cuda/ffi.ts: the calls a matmul step makes, and the numbers of cublasLt.h they take.
//
// Where the numbers come from: no cuBLAS headers are installed where this is built, so each value below was read from
// bindgen's output of NVIDIA's cublasLt.h, cublas_api.h and library_types.h for CUDA 13.0 (the Rust crate cudarc
// 0.18.1, src/cublaslt/sys/mod.rs, whose feature cuda-13000 gives every value used here, and the same values for
// every CUDA from 11.4 to 12.9: NVIDIA appends to these enums and never renumbers them), and checked against a copy of
// CUDA 11's cublasLt.h. matmul.gpu.test.ts checks them on the GPU host, where a wrong one would make a product come
// out wrong or be refused.

/**
 * libcublasLt: CUDA 13's, else 12's; CUDA_PIPE_CUBLASLT names the file exactly. Checked as it loads against every
 * function bound below, with the CUDA release whose form of it is bound: cuBLASLt came with CUDA 10.1, the compute
 * type of cublasLtMatmulDescCreate with 11.0, the status's words with 11.4.
 */
export const CUBLASLT_LIBRARY: CudaLibrarySpec = {
  name: 'libcublasLt',
  title: 'cuBLASLt (libcublasLt)',
  install: "the CUDA toolkit's cuBLAS (libcublasLt.so.13 comes with libcublas)",
  override: 'CUDA_PIPE_CUBLASLT',
  sonames: ['libcublasLt.so.13', 'libcublasLt.so.12', 'libcublasLt.so'],
  marker: 'cublasLtCreate',
  requires: [
    row('10.1', 'cublasLtCreate'),
    row('10.1', 'cublasLtDestroy'),
    row('10.1', 'cublasLtGetVersion'),
    row('10.1', 'cublasLtMatmulDescDestroy'),
    row('10.1', 'cublasLtMatmulDescSetAttribute'),
    row('10.1', 'cublasLtMatrixLayoutCreate'),
    row('10.1', 'cublasLtMatrixLayoutDestroy'),
    row('10.1', 'cublasLtMatmulPreferenceCreate'),
    row('10.1', 'cublasLtMatmulPreferenceDestroy'),
    row('10.1', 'cublasLtMatmulPreferenceSetAttribute'),
    row('10.1', 'cublasLtMatmulAlgoGetHeuristic'),
    row('10.1', 'cublasLtMatmul'),
    row('11.0', 'cublasLtMatmulDescCreate'),
    row('11.4', 'cublasLtGetStatusString'),
  ],
};

/** libcublasLt's functions as this stage binds them, by name. */
export const CUBLASLT_PROTOTYPES = {
  create: 'int cublasLtCreate(_Out_ void **handle)',
  destroy: 'int cublasLtDestroy(void *handle)',
  version: 'size_t cublasLtGetVersion(void)',
  statusString: 'const char *cublasLtGetStatusString(int status)',
  descCreate: 'int cublasLtMatmulDescCreate(_Out_ void **desc, int computeType, int scaleType)',
  descDestroy: 'int cublasLtMatmulDescDestroy(void *desc)',
  descSet: 'int cublasLtMatmulDescSetAttribute(void *desc, int attr, void *buf, size_t bytes)',
  layoutCreate:
    'int cublasLtMatrixLayoutCreate(_Out_ void **layout, int type, uint64_t rows, uint64_t cols, int64_t ld)',
  layoutDestroy: 'int cublasLtMatrixLayoutDestroy(void *layout)',
  prefCreate: 'int cublasLtMatmulPreferenceCreate(_Out_ void **pref)',
  prefDestroy: 'int cublasLtMatmulPreferenceDestroy(void *pref)',
  prefSet: 'int cublasLtMatmulPreferenceSetAttribute(void *pref, int attr, void *buf, size_t bytes)',
  heuristic:
    'int cublasLtMatmulAlgoGetHeuristic(void *handle, void *desc, void *a, void *b, void *c, void *d, void *pref, ' +
    'int requested, void *results, _Out_ int *returned)',
  matmul:
    'int cublasLtMatmul(void *handle, void *desc, void *alpha, void *A, void *Adesc, void *B, void *Bdesc, void *beta, ' +
    'void *C, void *Cdesc, void *D, void *Ddesc, void *algo, void *workspace, size_t workspaceBytes, void *stream)',
} as const;

/** cudaDataType_t (library_types.h): CUDA_R_32F 0, CUDA_R_16F 2, CUDA_R_16BF 14, CUDA_R_8F_E4M3 28. */
export const DATA_TYPE = { R_32F: 0, R_16F: 2, R_16BF: 14, R_8F_E4M3: 28 } as const;
/** cublasComputeType_t (cublas_api.h): CUBLAS_COMPUTE_32F 68, every dtype's accumulator, as PyTorch's. */
export const COMPUTE_32F = 68;
/** cublasOperation_t (cublas_api.h): CUBLAS_OP_N 0, CUBLAS_OP_T 1. */
export const OPERATION = { N: 0, T: 1 } as const;
/** cublasLtMatmulDescAttributes_t (cublasLt.h). */
export const MATMUL_DESC = { TRANSA: 3, TRANSB: 4, EPILOGUE: 7, BIAS_POINTER: 8, BIAS_DATA_TYPE: 26 } as const;
/**
 * cublasLtEpilogue_t (cublasLt.h): DEFAULT 1, RELU 2, BIAS 4, RELU_BIAS 6 (RELU | BIAS), GELU 32, GELU_BIAS 36
 * (GELU | BIAS).
 */
export const EPILOGUE: Readonly<Record<Epilogue, number>> = {
  none: 1,
  relu: 2,
  bias: 4,
  'bias-relu': 6,
  gelu: 32,
  'bias-gelu': 36,
};
/**
 * cublasLtMatmulPreferenceAttributes_t (cublasLt.h): MAX_WORKSPACE_BYTES 1 (a uint64_t), and MIN_ALIGNMENT_A_BYTES to
 * MIN_ALIGNMENT_D_BYTES 5 to 8 (uint32_t each, 256 unless set: the heuristic assumes 256-byte aligned operands).
 */
export const PREFERENCE = {
  MAX_WORKSPACE_BYTES: 1,
  MIN_ALIGNMENT_A_BYTES: 5,
  MIN_ALIGNMENT_B_BYTES: 6,
  MIN_ALIGNMENT_C_BYTES: 7,
  MIN_ALIGNMENT_D_BYTES: 8,
} as const;
/**
 * cublasLtMatmulHeuristicResult_t (cublasLt.h): cublasLtMatmulAlgo_t algo (uint64_t data[8], 64 bytes), size_t
 * workspaceSize at 64, cublasStatus_t state at 72, float wavesCount at 76, int reserved[4]: 96 bytes.
 */
export const HEURISTIC_RESULT = { bytes: 96, algoBytes: 64, workspaceSize: 64, state: 72, wavesCount: 76 } as const;

/** The cuBLASLt types of each dtype: A's and B's, and C's (D's) for each output type. */
export function matmulTypes(
  dtype: MatmulDtype,
  output: OutputType,
): { readonly input: number; readonly output: number } {
  const out = output === 'bfloat16' ? DATA_TYPE.R_16BF : DATA_TYPE.R_16F;
  return { input: dtype === 'fp8' ? DATA_TYPE.R_8F_E4M3 : out, output: out };
}

/**
 * libcublasLt's functions as this stage calls them: handles are BigInt, out-parameters one-element arrays, a
 * cublasStatus_t comes back. A test passes a fake that records its calls.
 */
export interface CublasLtBinding {
  /** The file it was loaded from. */
  readonly path: string;
  create(handle: BigUint64Array): number;
  destroy(handle: bigint): number;
  /** CUBLASLT_VERSION: major × 10000 + minor × 100 + patch. */
  version(): number;
  statusString(status: number): string;
  matmulDescCreate(desc: BigUint64Array, computeType: number, scaleType: number): number;
  matmulDescDestroy(desc: bigint): number;
  matmulDescSetAttribute(desc: bigint, attribute: number, value: HostPtr, bytes: number): number;
  matrixLayoutCreate(layout: BigUint64Array, type: number, rows: number, cols: number, ld: number): number;
  matrixLayoutDestroy(layout: bigint): number;
  preferenceCreate(preference: BigUint64Array): number;
  preferenceDestroy(preference: bigint): number;
  preferenceSetAttribute(preference: bigint, attribute: number, value: HostPtr, bytes: number): number;
  /** Fills `results` (`requested` heuristic results) and `returned[0]`, best first. */
  algoGetHeuristic(
    handle: bigint,
    desc: bigint,
    a: bigint,
    b: bigint,
    c: bigint,
    d: bigint,
    preference: bigint,
    requested: number,
    results: HostPtr,
    returned: number[],
  ): number;
  matmul(
    handle: bigint,
    desc: bigint,
    alpha: HostPtr,
    a: DevicePtr,
    aLayout: bigint,
    b: DevicePtr,
    bLayout: bigint,
    beta: HostPtr,
    c: DevicePtr,
    cLayout: bigint,
    d: DevicePtr,
    dLayout: bigint,
    algo: HostPtr,
    workspace: DevicePtr,
    workspaceBytes: number,
    stream: StreamHandle,
  ): number;
}

const STATUS_HINT: ReadonlyMap<number, string> = new Map([
  [
    1,
    'cuBLASLt could not initialise: libcublasLt must come from the same CUDA major version as libcudart, and the driver must see a GPU (nvidia-smi).',
  ],
  [
    3,
    'cuBLASLt could not allocate memory: lower the sizes or the number of streams, or free device memory held by other processes.',
  ],
  [
    7,
    'An argument is out of range, or the operands are not aligned as the algorithm needs: 16-byte aligned rows (k and n multiples of 8 for 16-bit types, of 16 for fp8).',
  ],
  [8, 'This GPU lacks what the data type needs: bf16 needs compute capability 8.0, fp8 8.9 or newer.'],
  [
    15,
    'cuBLASLt has no algorithm for this combination of types, epilogue, transposes and alignments; fp8 needs transB and k a multiple of 16.',
  ],
]);

/**
 * A cuBLASLt call that returned something other than CUBLAS_STATUS_SUCCESS (a cublasStatus_t, as cuBLAS's), with
 * cuBLASLt's hints.
 */
export class CublasLtError extends CublasError {
  constructor(api: string, status: number, statusName: string, description: string, context?: string) {
    super(api, status, statusName, description, context, STATUS_HINT);
  }
}

/** The failure of `api` with `status`, in the library's words where it can give them. */
export function cublasLtFailure(
  binding: Pick<CublasLtBinding, 'statusString'>,
  status: number,
  api: string,
  context?: string,
): CublasLtError {
  return new CublasLtError(api, status, statusName(status), binding.statusString(status), context);
}

/** libcublasLt, bound: each function from its C prototype, as koffi reads it. */
export function loadCublasLt(env: NodeJS.ProcessEnv = process.env): CublasLtBinding {
  const { path, fn } = openBlasLibrary(
    CUBLASLT_LIBRARY,
    CUBLASLT_PROTOTYPES,
    (...args) => new CublasLtError(...args),
    env,
  );
  return {
    path,
    create: (handle) => fn.create(handle) as number,
    destroy: (handle) => fn.destroy(handle) as number,
    version: () => Number(fn.version()),
    statusString: (status) => fn.statusString(status) as string,
    matmulDescCreate: (desc, computeType, scaleType) => fn.descCreate(desc, computeType, scaleType) as number,
    matmulDescDestroy: (desc) => fn.descDestroy(desc) as number,
    matmulDescSetAttribute: (desc, attribute, value, bytes) => fn.descSet(desc, attribute, value, bytes) as number,
    matrixLayoutCreate: (layout, type, rows, cols, ld) => fn.layoutCreate(layout, type, rows, cols, ld) as number,
    matrixLayoutDestroy: (layout) => fn.layoutDestroy(layout) as number,
    preferenceCreate: (preference) => fn.prefCreate(preference) as number,
    preferenceDestroy: (preference) => fn.prefDestroy(preference) as number,
    preferenceSetAttribute: (preference, attribute, value, bytes) =>
      fn.prefSet(preference, attribute, value, bytes) as number,
    algoGetHeuristic: (handle, desc, a, b, c, d, preference, requested, results, returned) =>
      fn.heuristic(handle, desc, a, b, c, d, preference, requested, results, returned) as number,
    // The hot loop's call: the arguments go straight through, so a call costs koffi's conversion of 16 of them.
    matmul: fn.matmul as CublasLtBinding['matmul'],
  };
}

/** libcublasLt, loaded once per process, the first time a run has a matmul op. */
export const openCublasLt = loadOnce(loadCublasLt);
