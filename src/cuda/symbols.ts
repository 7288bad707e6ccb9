/**
 * Every function cuda-pipe binds from a CUDA library, with the CUDA release that first shipped it: a library that
 * lacks one is an older or incomplete CUDA, refused when it is loaded rather than when the call is first made. A row
 * of several names is satisfied by any of them (the first that exists is bound). The core's libraries' rows are here
 * (bindings.ts, nvrtc.ts); a kind that binds a CUDA library of its own declares its rows beside its binding (the
 * gemm kind's libcublas, the matmul kind's libcublasLt) and they are checked the same way (ffi.ts's openCudaLibrary).
 */
export interface RequiredSymbol {
  readonly names: readonly string[];
  /** The CUDA release that added the function, "12.0". */
  readonly since: string;
}

export const row = (since: string, ...names: string[]): RequiredSymbol => ({ names, since });

export const REQUIRED_SYMBOLS = {
  cudart: [
    row('1.0', 'cudaGetErrorString'),
    row('1.0', 'cudaGetDeviceCount'),
    row('1.0', 'cudaSetDevice'),
    row('1.0', 'cudaMalloc'),
    row('1.0', 'cudaFree'),
    row('1.0', 'cudaMemcpy'),
    row('1.0', 'cudaMemcpyAsync'),
    row('1.0', 'cudaFreeHost'),
    row('1.0', 'cudaStreamDestroy'),
    row('1.0', 'cudaStreamSynchronize'),
    row('1.0', 'cudaStreamQuery'),
    row('1.0', 'cudaEventDestroy'),
    row('1.0', 'cudaEventRecord'),
    row('1.0', 'cudaEventSynchronize'),
    row('1.0', 'cudaEventQuery'),
    row('1.0', 'cudaEventElapsedTime'),
    row('1.0', 'cudaMemGetInfo'),
    row('2.2', 'cudaRuntimeGetVersion'),
    row('2.2', 'cudaDriverGetVersion'),
    row('2.2', 'cudaHostAlloc'),
    row('2.2', 'cudaHostGetDevicePointer'),
    row('2.2', 'cudaEventCreateWithFlags'),
    row('3.2', 'cudaMemsetAsync'),
    row('3.2', 'cudaStreamWaitEvent'),
    row('4.0', 'cudaDeviceSynchronize'),
    row('4.0', 'cudaHostRegister'),
    row('4.0', 'cudaHostUnregister'),
    row('4.0', 'cudaDeviceCanAccessPeer'),
    row('4.0', 'cudaDeviceEnablePeerAccess'),
    row('4.0', 'cudaMemcpyPeerAsync'),
    row('4.1', 'cudaDeviceGetPCIBusId'),
    row('5.0', 'cudaDeviceGetAttribute'),
    row('5.5', 'cudaDeviceGetStreamPriorityRange'),
    row('5.5', 'cudaStreamCreateWithPriority'),
    row('6.5', 'cudaGetErrorName'),
    row('8.0', 'cudaDeviceGetP2PAttribute'),
    row('10.0', 'cudaLaunchHostFunc'),
    row('10.0', 'cudaStreamBeginCapture'),
    row('10.0', 'cudaStreamEndCapture'),
    row('10.0', 'cudaGraphInstantiate'),
    row('10.0', 'cudaGraphLaunch'),
    row('10.0', 'cudaGraphExecDestroy'),
    row('10.0', 'cudaGraphDestroy'),
    row('11.1', 'cudaEventRecordWithFlags'),
    row('11.8', 'cudaLaunchKernelExC'),
    row('12.0', 'cudaLibraryLoadData'),
    row('12.0', 'cudaLibraryUnload'),
    row('12.0', 'cudaLibraryGetKernel'),
    row('1.0', 'cudaGetDeviceProperties_v2', 'cudaGetDeviceProperties'),
  ],
  nvrtc: [
    row('7.0', 'nvrtcVersion'),
    row('7.0', 'nvrtcGetErrorString'),
    row('7.0', 'nvrtcCreateProgram'),
    row('7.0', 'nvrtcDestroyProgram'),
    row('7.0', 'nvrtcCompileProgram'),
    row('7.0', 'nvrtcGetProgramLogSize'),
    row('7.0', 'nvrtcGetProgramLog'),
    row('7.0', 'nvrtcGetPTXSize'),
    row('7.0', 'nvrtcGetPTX'),
    row('11.1', 'nvrtcGetCUBINSize'),
    row('11.1', 'nvrtcGetCUBIN'),
    row('11.2', 'nvrtcGetNumSupportedArchs'),
    row('11.2', 'nvrtcGetSupportedArchs'),
  ],
} as const satisfies Readonly<Record<string, readonly RequiredSymbol[]>>;

const versionNumber = (since: string): number => {
  const [major = 0, minor = 0] = since.split('.').map(Number);
  return major * 100 + minor;
};

/** The oldest CUDA whose library has every function of `rows`: "12.0" for libcudart's. */
export function minimumCuda(rows: readonly RequiredSymbol[]): string {
  return rows.reduce((newest, r) => (versionNumber(r.since) > versionNumber(newest) ? r.since : newest), '1.0');
}

/** The rows a library lacks, given a test of whether it exports a name. */
export function missingSymbols(rows: readonly RequiredSymbol[], exports: (name: string) => boolean): RequiredSymbol[] {
  return rows.filter((r) => !r.names.some(exports));
}

/**
 * "lacks cudaGetErrorName (CUDA 6.5 and newer) and 2 more functions; cuda-pipe needs libcudart from CUDA 12.0 or
 * newer", of the library `name` whose functions are `rows`.
 */
export function describeMissing(
  name: string,
  rows: readonly RequiredSymbol[],
  missing: readonly RequiredSymbol[],
): string {
  const [first] = missing;
  if (!first) return '';
  const named = (r: RequiredSymbol) => `${r.names.join(' or ')} (CUDA ${r.since} and newer)`;
  const shown = missing.slice(0, 3).map(named).join(', ');
  const more = missing.length > 3 ? ` and ${missing.length - 3} more function${missing.length === 4 ? '' : 's'}` : '';
  return `lacks ${shown}${more}; cuda-pipe needs ${name} from CUDA ${minimumCuda(rows)} or newer`;
}
