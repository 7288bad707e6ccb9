import koffi from 'koffi';
import type { CopyDirection, HostAllocKind, ScalarType } from './types.js';
import type { NativeLibrary } from './load.js';

// The libcudart functions cuda-pipe calls, declared once per process, and the constants their arguments use.

export const DeviceAttribute = {
  clockRateKHz: 13,
  gpuOverlap: 15,
  multiProcessorCount: 16,
  integrated: 18,
  canMapHostMemory: 19,
  concurrentKernels: 31,
  pciBusId: 33,
  pciDeviceId: 34,
  memoryClockRateKHz: 36,
  memoryBusWidth: 37,
  l2CacheSize: 38,
  maxThreadsPerMultiProcessor: 39,
  asyncEngineCount: 40,
  unifiedAddressing: 41,
  pciDomainId: 50,
  computeCapabilityMajor: 75,
  computeCapabilityMinor: 76,
} as const;
export type DeviceAttributeName = keyof typeof DeviceAttribute;

export const MEMCPY_KIND: Record<CopyDirection, number> = { h2d: 1, d2h: 2, d2d: 3 };
// Every allocation is portable (cudaHostAllocPortable, 1): a run that spans devices shares one set of host buffers, and
// each device must see them as page-locked for its copies to be DMA at full rate.
export const HOST_ALLOC_FLAGS: Record<HostAllocKind, number> = { pinned: 1, 'write-combined': 5, mapped: 3 };
/** cudaHostRegisterPortable, for the same reason. */
export const HOST_REGISTER_PORTABLE = 1;
/** cudaDeviceP2PAttr: performance rank (lower is faster), access supported, native atomics. */
export const P2P_ATTRIBUTE = { performanceRank: 1, accessSupported: 2, nativeAtomics: 3 } as const;
/** cudaErrorPeerAccessAlreadyEnabled: enabling twice is not a failure. */
export const PEER_ACCESS_ALREADY_ENABLED = 704;
export const STREAM_NON_BLOCKING = 1;
export const EVENT_DISABLE_TIMING = 2;
/** cudaEventRecordExternal: inside a stream capture, record the event as a graph node instead of only ordering. */
export const EVENT_RECORD_EXTERNAL = 1;
export const CAPTURE_MODE = { global: 0, 'thread-local': 1, relaxed: 2 } as const;
export const KOFFI_SCALAR: Record<ScalarType, string> = {
  int8: 'int8',
  uint8: 'uint8',
  int16: 'int16',
  uint16: 'uint16',
  int32: 'int32',
  uint32: 'uint32',
  int64: 'int64',
  uint64: 'uint64',
  float32: 'float',
  float64: 'double',
};

// cudaLaunchConfig_t in CUDA 12 and 13: dim3 grid, dim3 block, size_t smem, stream, attrs pointer, numAttrs.
export const LAUNCH_CONFIG = {
  size: 56,
  grid: 0,
  block: 12,
  sharedBytes: 24,
  stream: 32,
  attrs: 40,
  numAttrs: 48,
} as const;
// cudaDeviceProp starts with char name[256] then cudaUUID_t uuid[16] in every layout since CUDA 10.
export const DEVICE_PROP_BYTES = 4096;

export function declare(lib: NativeLibrary) {
  return {
    getErrorName: lib.func('const char *cudaGetErrorName(int error)'),
    getErrorString: lib.func('const char *cudaGetErrorString(int error)'),
    runtimeGetVersion: lib.func('int cudaRuntimeGetVersion(_Out_ int *version)'),
    driverGetVersion: lib.func('int cudaDriverGetVersion(_Out_ int *version)'),
    getDeviceCount: lib.func('int cudaGetDeviceCount(_Out_ int *count)'),
    setDevice: lib.func('int cudaSetDevice(int device)'),
    deviceCanAccessPeer: lib.func('int cudaDeviceCanAccessPeer(_Out_ int *canAccess, int device, int peerDevice)'),
    deviceEnablePeerAccess: lib.func('int cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)'),
    deviceGetP2PAttribute: lib.func(
      'int cudaDeviceGetP2PAttribute(_Out_ int *value, int attr, int srcDevice, int dstDevice)',
    ),
    memcpyPeerAsync: lib.func(
      'int cudaMemcpyPeerAsync(void *dst, int dstDevice, void *src, int srcDevice, size_t count, void *stream)',
    ),
    deviceGetAttribute: lib.func('int cudaDeviceGetAttribute(_Out_ int *value, int attr, int device)'),
    getDeviceProperties: declareFirst(lib, ['cudaGetDeviceProperties_v2', 'cudaGetDeviceProperties'], 'int', [
      'void *',
      'int',
    ]),
    deviceGetPCIBusId: lib.func('int cudaDeviceGetPCIBusId(_Out_ uint8_t *pciBusId, int len, int device)'),
    deviceGetStreamPriorityRange: lib.func(
      'int cudaDeviceGetStreamPriorityRange(_Out_ int *least, _Out_ int *greatest)',
    ),
    deviceSynchronize: lib.func('int cudaDeviceSynchronize()'),
    memGetInfo: lib.func('int cudaMemGetInfo(_Out_ size_t *free, _Out_ size_t *total)'),
    streamCreateWithPriority: lib.func(
      'int cudaStreamCreateWithPriority(_Out_ void **stream, unsigned int flags, int priority)',
    ),
    streamDestroy: lib.func('int cudaStreamDestroy(void *stream)'),
    streamSynchronize: lib.func('int cudaStreamSynchronize(void *stream)'),
    streamQuery: lib.func('int cudaStreamQuery(void *stream)'),
    streamWaitEvent: lib.func('int cudaStreamWaitEvent(void *stream, void *event, unsigned int flags)'),
    eventCreateWithFlags: lib.func('int cudaEventCreateWithFlags(_Out_ void **event, unsigned int flags)'),
    eventDestroy: lib.func('int cudaEventDestroy(void *event)'),
    eventRecord: lib.func('int cudaEventRecord(void *event, void *stream)'),
    eventRecordWithFlags: lib.func('int cudaEventRecordWithFlags(void *event, void *stream, unsigned int flags)'),
    eventSynchronize: lib.func('int cudaEventSynchronize(void *event)'),
    eventQuery: lib.func('int cudaEventQuery(void *event)'),
    eventElapsedTime: lib.func('int cudaEventElapsedTime(_Out_ float *ms, void *start, void *end)'),
    hostAlloc: lib.func('int cudaHostAlloc(_Out_ void **ptr, size_t size, unsigned int flags)'),
    freeHost: lib.func('int cudaFreeHost(void *ptr)'),
    hostGetDevicePointer: lib.func('int cudaHostGetDevicePointer(_Out_ void **device, void *host, unsigned int flags)'),
    hostRegister: lib.func('int cudaHostRegister(void *ptr, size_t size, unsigned int flags)'),
    hostUnregister: lib.func('int cudaHostUnregister(void *ptr)'),
    malloc: lib.func('int cudaMalloc(_Out_ void **ptr, size_t size)'),
    free: lib.func('int cudaFree(void *ptr)'),
    memcpy: lib.func('int cudaMemcpy(void *dst, void *src, size_t count, int kind)'),
    memcpyAsync: lib.func('int cudaMemcpyAsync(void *dst, void *src, size_t count, int kind, void *stream)'),
    memsetAsync: lib.func('int cudaMemsetAsync(void *ptr, int value, size_t count, void *stream)'),
    libraryLoadData: lib.func(
      'int cudaLibraryLoadData(_Out_ void **library, void *code, void *jitOptions, void *jitOptionValues, ' +
        'unsigned int numJitOptions, void *libraryOptions, void *libraryOptionValues, unsigned int numLibraryOptions)',
    ),
    libraryUnload: lib.func('int cudaLibraryUnload(void *library)'),
    libraryGetKernel: lib.func('int cudaLibraryGetKernel(_Out_ void **kernel, void *library, const char *name)'),
    launchKernelExC: lib.func('int cudaLaunchKernelExC(void *config, void *func, void *args)'),
    streamBeginCapture: lib.func('int cudaStreamBeginCapture(void *stream, int mode)'),
    streamEndCapture: lib.func('int cudaStreamEndCapture(void *stream, _Out_ void **graph)'),
    graphInstantiate: lib.func('int cudaGraphInstantiate(_Out_ void **exec, void *graph, unsigned long long flags)'),
    graphLaunch: lib.func('int cudaGraphLaunch(void *exec, void *stream)'),
    graphExecDestroy: lib.func('int cudaGraphExecDestroy(void *exec)'),
    graphDestroy: lib.func('int cudaGraphDestroy(void *graph)'),
    launchHostFunc: lib.func('int cudaLaunchHostFunc(void *stream, void *fn, void *userData)'),
  };
}

function declareFirst(lib: NativeLibrary, names: readonly string[], result: string, params: string[]) {
  let lastError: unknown;
  for (const name of names) {
    try {
      return lib.func(name, result, params);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

export type Bindings = ReturnType<typeof declare>;

/** The host function prototype cudaLaunchHostFunc calls: one argument, the user data pointer. */
export const HostFn = koffi.proto('void cudaPipeHostFn(void *userData)');
