import koffi from 'koffi';
import { cudaFailure, CUDA_ERROR } from './error.js';
import { loadCudaLibrary, type NativeLibrary } from './load.js';
import {
  type CopyDirection,
  type DevicePtr,
  type EventHandle,
  type GraphExecHandle,
  type GraphHandle,
  type HostAllocKind,
  type HostPtr,
  type KernelArgValue,
  type KernelHandle,
  type LibraryHandle,
  type ScalarType,
  type StreamHandle,
} from './types.js';

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

const MEMCPY_KIND: Record<CopyDirection, number> = { h2d: 1, d2h: 2, d2d: 3 };
const HOST_ALLOC_FLAGS: Record<HostAllocKind, number> = { pinned: 0, 'write-combined': 4, mapped: 2 };
const STREAM_NON_BLOCKING = 1;
const EVENT_DISABLE_TIMING = 2;
const CAPTURE_MODE = { global: 0, 'thread-local': 1, relaxed: 2 } as const;
const KOFFI_SCALAR: Record<ScalarType, string> = {
  int8: 'int8', uint8: 'uint8', int16: 'int16', uint16: 'uint16', int32: 'int32', uint32: 'uint32',
  int64: 'int64', uint64: 'uint64', float32: 'float', float64: 'double',
};

// cudaLaunchConfig_t in CUDA 12 and 13: dim3 grid, dim3 block, size_t smem, stream, attrs pointer, numAttrs.
const LAUNCH_CONFIG = { size: 56, grid: 0, block: 12, sharedBytes: 24, stream: 32, attrs: 40, numAttrs: 48 } as const;
// cudaDeviceProp starts with char name[256] then cudaUUID_t uuid[16] in every layout since CUDA 10.
const DEVICE_PROP_BYTES = 4096;

/** A kernel launch whose config struct and argument block live in native memory, built once. */
export interface LaunchRecord {
  /** Issues the launch; returns the raw cudaError_t so the hot loop can check it without allocating. */
  readonly launch: () => number;
  readonly describe: string;
  free(): void;
}

export interface LaunchSpec {
  readonly kernel: KernelHandle;
  readonly grid: number;
  readonly block: number;
  readonly sharedBytes: number;
  readonly stream: StreamHandle;
  readonly args: readonly KernelArgValue[];
  readonly describe: string;
}

export interface HostFunctionRegistration {
  /** Releases the native trampoline; only call once the stream has passed the host function. */
  unregister(): void;
}

function declare(lib: NativeLibrary) {
  return {
    getErrorName: lib.func('const char *cudaGetErrorName(int error)'),
    getErrorString: lib.func('const char *cudaGetErrorString(int error)'),
    runtimeGetVersion: lib.func('int cudaRuntimeGetVersion(_Out_ int *version)'),
    driverGetVersion: lib.func('int cudaDriverGetVersion(_Out_ int *version)'),
    getDeviceCount: lib.func('int cudaGetDeviceCount(_Out_ int *count)'),
    setDevice: lib.func('int cudaSetDevice(int device)'),
    deviceGetAttribute: lib.func('int cudaDeviceGetAttribute(_Out_ int *value, int attr, int device)'),
    getDeviceProperties: declareFirst(lib, ['cudaGetDeviceProperties_v2', 'cudaGetDeviceProperties'], 'int', ['void *', 'int']),
    deviceGetPCIBusId: lib.func('int cudaDeviceGetPCIBusId(_Out_ uint8_t *pciBusId, int len, int device)'),
    deviceGetStreamPriorityRange: lib.func('int cudaDeviceGetStreamPriorityRange(_Out_ int *least, _Out_ int *greatest)'),
    deviceSynchronize: lib.func('int cudaDeviceSynchronize()'),
    memGetInfo: lib.func('int cudaMemGetInfo(_Out_ size_t *free, _Out_ size_t *total)'),
    streamCreateWithPriority: lib.func('int cudaStreamCreateWithPriority(_Out_ void **stream, unsigned int flags, int priority)'),
    streamDestroy: lib.func('int cudaStreamDestroy(void *stream)'),
    streamSynchronize: lib.func('int cudaStreamSynchronize(void *stream)'),
    streamQuery: lib.func('int cudaStreamQuery(void *stream)'),
    streamWaitEvent: lib.func('int cudaStreamWaitEvent(void *stream, void *event, unsigned int flags)'),
    eventCreateWithFlags: lib.func('int cudaEventCreateWithFlags(_Out_ void **event, unsigned int flags)'),
    eventDestroy: lib.func('int cudaEventDestroy(void *event)'),
    eventRecord: lib.func('int cudaEventRecord(void *event, void *stream)'),
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

type Bindings = ReturnType<typeof declare>;

const HostFn = koffi.proto('void cudaPipeHostFn(void *userData)');

/**
 * The CUDA runtime, typed. Every wrapper checks its result and throws `CudaError` (or an environment error for
 * "no driver"-like codes). The `*Thunk` builders return closures over native handles for the timed loop: they
 * return the raw code so that checking costs a comparison, not an allocation.
 */
export class CudaRuntime {
  private readonly fn: Bindings;
  private readonly out = new BigUint64Array(1);

  constructor(readonly libraryPath: string, lib: NativeLibrary) {
    this.fn = declare(lib);
  }

  check(code: number, api: string, context?: string): void {
    if (code !== 0) throw this.failure(code, api, context);
  }

  failure(code: number, api: string, context?: string): Error {
    return cudaFailure(api, code, this.errorName(code), this.errorString(code), context);
  }

  errorName(code: number): string {
    return this.fn.getErrorName(code) as string;
  }

  errorString(code: number): string {
    return this.fn.getErrorString(code) as string;
  }

  runtimeVersion(): number {
    return this.intOut((o) => this.fn.runtimeGetVersion(o), 'cudaRuntimeGetVersion');
  }

  /** 0 when no driver is installed. */
  driverVersion(): number {
    return this.intOut((o) => this.fn.driverGetVersion(o), 'cudaDriverGetVersion');
  }

  deviceCount(): number {
    return this.intOut((o) => this.fn.getDeviceCount(o), 'cudaGetDeviceCount');
  }

  setDevice(device: number): void {
    this.check(this.fn.setDevice(device), 'cudaSetDevice', `device ${device}`);
  }

  attribute(name: DeviceAttributeName, device: number): number {
    return this.intOut((o) => this.fn.deviceGetAttribute(o, DeviceAttribute[name], device), 'cudaDeviceGetAttribute', name);
  }

  /** Name and UUID (as nvidia-smi prints it, `GPU-xxxxxxxx-...`). */
  nameAndUuid(device: number): { name: string; uuid: string } {
    const prop = koffi.alloc('uint8', DEVICE_PROP_BYTES);
    try {
      this.check(this.fn.getDeviceProperties(prop, device), 'cudaGetDeviceProperties', `device ${device}`);
      const bytes = new Uint8Array(koffi.view(prop, 272).slice(0));
      const nul = bytes.indexOf(0);
      const name = Buffer.from(bytes.subarray(0, nul < 0 ? 256 : Math.min(nul, 256))).toString('utf8');
      const hex = Buffer.from(bytes.subarray(256, 272)).toString('hex');
      const uuid = `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      return { name, uuid };
    } finally {
      koffi.free(prop);
    }
  }

  pciBusId(device: number): string {
    const buffer = new Uint8Array(32);
    this.check(this.fn.deviceGetPCIBusId(buffer, buffer.length, device), 'cudaDeviceGetPCIBusId');
    const nul = buffer.indexOf(0);
    return Buffer.from(buffer.subarray(0, nul < 0 ? buffer.length : nul)).toString('ascii');
  }

  /** `least` is the numerically largest (lowest) priority; lower numbers are higher priority. */
  streamPriorityRange(): { least: number; greatest: number } {
    const least = [0];
    const greatest = [0];
    this.check(this.fn.deviceGetStreamPriorityRange(least, greatest), 'cudaDeviceGetStreamPriorityRange');
    return { least: least[0] ?? 0, greatest: greatest[0] ?? 0 };
  }

  deviceSynchronize(context?: string): void {
    this.check(this.fn.deviceSynchronize(), 'cudaDeviceSynchronize', context);
  }

  memInfo(): { free: number; total: number } {
    const free = [0];
    const total = [0];
    this.check(this.fn.memGetInfo(free, total), 'cudaMemGetInfo');
    return { free: Number(free[0]), total: Number(total[0]) };
  }

  createStream(options: { nonBlocking: boolean; priority?: number }): StreamHandle {
    const flags = options.nonBlocking ? STREAM_NON_BLOCKING : 0;
    return this.pointerOut(
      (o) => this.fn.streamCreateWithPriority(o, flags, options.priority ?? 0),
      'cudaStreamCreateWithPriority',
    ) as StreamHandle;
  }

  destroyStream(stream: StreamHandle): void {
    this.check(this.fn.streamDestroy(stream), 'cudaStreamDestroy');
  }

  streamSynchronize(stream: StreamHandle, context?: string): void {
    this.check(this.fn.streamSynchronize(stream), 'cudaStreamSynchronize', context);
  }

  /** The raw result of cudaStreamSynchronize, for callers that attribute a failure themselves. */
  streamSynchronizeCode(stream: StreamHandle): number {
    return this.fn.streamSynchronize(stream) as number;
  }

  /** True once all work on the stream has finished; never blocks. */
  streamIdle(stream: StreamHandle): boolean {
    const code = this.fn.streamQuery(stream) as number;
    if (code === CUDA_ERROR.notReady) return false;
    this.check(code, 'cudaStreamQuery');
    return true;
  }

  streamWaitEvent(stream: StreamHandle, event: EventHandle): void {
    this.check(this.fn.streamWaitEvent(stream, event, 0), 'cudaStreamWaitEvent');
  }

  createEvent(options: { timing: boolean }): EventHandle {
    const flags = options.timing ? 0 : EVENT_DISABLE_TIMING;
    return this.pointerOut((o) => this.fn.eventCreateWithFlags(o, flags), 'cudaEventCreateWithFlags') as EventHandle;
  }

  destroyEvent(event: EventHandle): void {
    this.check(this.fn.eventDestroy(event), 'cudaEventDestroy');
  }

  recordEvent(event: EventHandle, stream: StreamHandle): void {
    this.check(this.fn.eventRecord(event, stream), 'cudaEventRecord');
  }

  eventSynchronize(event: EventHandle, context?: string): void {
    this.check(this.fn.eventSynchronize(event), 'cudaEventSynchronize', context);
  }

  eventDone(event: EventHandle): boolean {
    const code = this.fn.eventQuery(event) as number;
    if (code === CUDA_ERROR.notReady) return false;
    this.check(code, 'cudaEventQuery');
    return true;
  }

  elapsedMs(start: EventHandle, end: EventHandle): number {
    const ms = new Float32Array(1);
    this.check(this.fn.eventElapsedTime(ms, start, end), 'cudaEventElapsedTime');
    return ms[0] ?? Number.NaN;
  }

  hostAlloc(bytes: number, kind: HostAllocKind): HostPtr {
    return this.pointerOut((o) => this.fn.hostAlloc(o, bytes, HOST_ALLOC_FLAGS[kind]), 'cudaHostAlloc', `${bytes} bytes`) as HostPtr;
  }

  /** The device's address of mapped host memory (cudaHostAlloc with 'mapped'). */
  devicePointerOf(pointer: HostPtr): DevicePtr {
    return this.pointerOut((o) => this.fn.hostGetDevicePointer(o, pointer, 0), 'cudaHostGetDevicePointer') as DevicePtr;
  }

  freeHost(pointer: HostPtr): void {
    this.check(this.fn.freeHost(pointer), 'cudaFreeHost');
  }

  hostRegister(pointer: HostPtr, bytes: number): void {
    this.check(this.fn.hostRegister(pointer, bytes, 0), 'cudaHostRegister', `${bytes} bytes`);
  }

  hostUnregister(pointer: HostPtr): void {
    this.check(this.fn.hostUnregister(pointer), 'cudaHostUnregister');
  }

  malloc(bytes: number, context?: string): DevicePtr {
    return this.pointerOut((o) => this.fn.malloc(o, bytes), 'cudaMalloc', context ?? `${bytes} bytes`) as DevicePtr;
  }

  free(pointer: DevicePtr): void {
    this.check(this.fn.free(pointer), 'cudaFree');
  }

  /** Synchronous copy; for set-up and read-back only, never in a timed loop. */
  copy(dst: DevicePtr | HostPtr, src: DevicePtr | HostPtr, bytes: number, direction: CopyDirection): void {
    this.check(this.fn.memcpy(dst, src, bytes, MEMCPY_KIND[direction]), 'cudaMemcpy');
  }

  memset(pointer: DevicePtr, byte: number, bytes: number, stream: StreamHandle): void {
    this.check(this.fn.memsetAsync(pointer, byte, bytes, stream), 'cudaMemsetAsync');
  }

  copyThunk(dst: DevicePtr | HostPtr, src: DevicePtr | HostPtr, bytes: number, direction: CopyDirection, stream: StreamHandle): () => number {
    const memcpyAsync = this.fn.memcpyAsync;
    const kind = MEMCPY_KIND[direction];
    return () => memcpyAsync(dst, src, bytes, kind, stream) as number;
  }

  memsetThunk(pointer: DevicePtr, byte: number, bytes: number, stream: StreamHandle): () => number {
    const memsetAsync = this.fn.memsetAsync;
    return () => memsetAsync(pointer, byte, bytes, stream) as number;
  }

  recordThunk(event: EventHandle, stream: StreamHandle): () => number {
    const eventRecord = this.fn.eventRecord;
    return () => eventRecord(event, stream) as number;
  }

  waitThunk(stream: StreamHandle, event: EventHandle): () => number {
    const streamWaitEvent = this.fn.streamWaitEvent;
    return () => streamWaitEvent(stream, event, 0) as number;
  }

  /** Loads a CUBIN. The image is copied into native memory that lives as long as the library. */
  loadLibrary(image: Uint8Array): { library: LibraryHandle; unload(): void } {
    const native = koffi.alloc('uint8', image.byteLength);
    new Uint8Array(koffi.view(native, image.byteLength)).set(image);
    try {
      const library = this.pointerOut(
        (o) => this.fn.libraryLoadData(o, native, null, null, 0, null, null, 0),
        'cudaLibraryLoadData',
      ) as LibraryHandle;
      return {
        library,
        unload: () => {
          try {
            this.check(this.fn.libraryUnload(library), 'cudaLibraryUnload');
          } finally {
            koffi.free(native);
          }
        },
      };
    } catch (error) {
      koffi.free(native);
      throw error;
    }
  }

  getKernel(library: LibraryHandle, name: string): KernelHandle {
    return this.pointerOut((o) => this.fn.libraryGetKernel(o, library, name), 'cudaLibraryGetKernel', name) as KernelHandle;
  }

  /** Builds the `cudaLaunchConfig_t` and the `void **` argument block once, in native memory. */
  launchRecord(spec: LaunchSpec): LaunchRecord {
    const argCount = spec.args.length;
    // Slot i of the pointer table points at value slot i; every value gets 8 bytes, enough for any scalar.
    const block = koffi.alloc('uint8', Math.max(1, argCount * 16));
    const config = koffi.alloc('uint8', LAUNCH_CONFIG.size);
    const blockAddress = koffi.address(block);
    spec.args.forEach((arg, index) => {
      const valueOffset = argCount * 8 + index * 8;
      koffi.encode(block, index * 8, 'uint64', blockAddress + BigInt(valueOffset));
      if (arg.kind === 'pointer') koffi.encode(block, valueOffset, 'uint64', arg.value);
      else koffi.encode(block, valueOffset, KOFFI_SCALAR[arg.type], arg.value);
    });
    koffi.encode(config, LAUNCH_CONFIG.grid, 'uint32', spec.grid);
    koffi.encode(config, LAUNCH_CONFIG.grid + 4, 'uint32', 1);
    koffi.encode(config, LAUNCH_CONFIG.grid + 8, 'uint32', 1);
    koffi.encode(config, LAUNCH_CONFIG.block, 'uint32', spec.block);
    koffi.encode(config, LAUNCH_CONFIG.block + 4, 'uint32', 1);
    koffi.encode(config, LAUNCH_CONFIG.block + 8, 'uint32', 1);
    koffi.encode(config, LAUNCH_CONFIG.sharedBytes, 'uint64', spec.sharedBytes);
    koffi.encode(config, LAUNCH_CONFIG.stream, 'uint64', spec.stream);
    koffi.encode(config, LAUNCH_CONFIG.attrs, 'uint64', 0n);
    koffi.encode(config, LAUNCH_CONFIG.numAttrs, 'uint32', 0);
    const launchKernelExC = this.fn.launchKernelExC;
    const configAddress = koffi.address(config);
    const kernel = spec.kernel;
    let freed = false;
    return {
      launch: () => launchKernelExC(configAddress, kernel, blockAddress) as number,
      describe: spec.describe,
      free: () => {
        if (freed) return;
        freed = true;
        koffi.free(block);
        koffi.free(config);
      },
    };
  }

  beginCapture(stream: StreamHandle, mode: keyof typeof CAPTURE_MODE = 'global'): void {
    this.check(this.fn.streamBeginCapture(stream, CAPTURE_MODE[mode]), 'cudaStreamBeginCapture');
  }

  endCapture(stream: StreamHandle): GraphHandle {
    return this.pointerOut((o) => this.fn.streamEndCapture(stream, o), 'cudaStreamEndCapture') as GraphHandle;
  }

  instantiateGraph(graph: GraphHandle): GraphExecHandle {
    return this.pointerOut((o) => this.fn.graphInstantiate(o, graph, 0), 'cudaGraphInstantiate') as GraphExecHandle;
  }

  graphLaunchThunk(exec: GraphExecHandle, stream: StreamHandle): () => number {
    const graphLaunch = this.fn.graphLaunch;
    return () => graphLaunch(exec, stream) as number;
  }

  destroyGraphExec(exec: GraphExecHandle): void {
    this.check(this.fn.graphExecDestroy(exec), 'cudaGraphExecDestroy');
  }

  destroyGraph(graph: GraphHandle): void {
    this.check(this.fn.graphDestroy(graph), 'cudaGraphDestroy');
  }

  /**
   * Enqueues `callback` on the stream. It runs on the JS thread when the event loop turns, and CUDA's thread waits
   * for it: never block on this stream synchronously (cudaStreamSynchronize) while it is pending; poll instead.
   */
  launchHostFunc(stream: StreamHandle, callback: () => void): HostFunctionRegistration {
    const trampoline = koffi.register(() => callback(), koffi.pointer(HostFn));
    try {
      this.check(this.fn.launchHostFunc(stream, trampoline, null), 'cudaLaunchHostFunc');
    } catch (error) {
      koffi.unregister(trampoline);
      throw error;
    }
    return { unregister: () => koffi.unregister(trampoline) };
  }

  private intOut(call: (out: number[]) => unknown, api: string, context?: string): number {
    const out = [0];
    this.check(call(out) as number, api, context);
    return out[0] ?? 0;
  }

  private pointerOut(call: (out: BigUint64Array) => unknown, api: string, context?: string): bigint {
    this.out[0] = 0n;
    this.check(call(this.out) as number, api, context);
    return this.out[0] ?? 0n;
  }
}

let cached: CudaRuntime | undefined;

/** Loads libcudart once per process (see locate.ts for where it looks). */
export function openRuntime(env: NodeJS.ProcessEnv = process.env): CudaRuntime {
  if (!cached) {
    const { lib, path } = loadCudaLibrary('cudart', env);
    cached = new CudaRuntime(path, lib);
  }
  return cached;
}
