import koffi from 'koffi';
import { DEVICE_PROP_BYTES, declare, DeviceAttribute, type DeviceAttributeName } from './bindings.js';
import { Calls } from './calls.js';
import { CudaGraphs } from './graphs.js';
import { CudaHostFunctions } from './host-functions.js';
import { CudaLaunch } from './launch.js';
import { loadCudaLibrary, type NativeLibrary } from './load.js';
import { CudaMemory } from './memory.js';
import { CudaPeer } from './peer.js';
import { CudaStreams } from './streams.js';

export type { DeviceAttributeName } from './bindings.js';

/**
 * The CUDA runtime, typed: device queries here, and one object per concern (memory, streams and events, launches,
 * graphs, host functions). Every wrapper checks its result and throws `CudaError` (or an environment error for
 * "no driver"-like codes). The `*Thunk` builders return closures over native handles for the timed loop: they
 * return the raw code so that checking costs a comparison, not an allocation.
 */
export class CudaRuntime {
  private readonly calls: Calls;
  readonly memory: CudaMemory;
  readonly streams: CudaStreams;
  readonly launch: CudaLaunch;
  readonly graphs: CudaGraphs;
  readonly hostFunctions: CudaHostFunctions;
  readonly peer: CudaPeer;

  constructor(
    readonly libraryPath: string,
    lib: NativeLibrary,
  ) {
    this.calls = new Calls(declare(lib));
    this.memory = new CudaMemory(this.calls);
    this.streams = new CudaStreams(this.calls);
    this.launch = new CudaLaunch(this.calls);
    this.graphs = new CudaGraphs(this.calls);
    this.hostFunctions = new CudaHostFunctions(this.calls);
    this.peer = new CudaPeer(this.calls, (device) => this.setDevice(device));
  }

  check(code: number, api: string, context?: string): void {
    this.calls.check(code, api, context);
  }

  failure(code: number, api: string, context?: string): Error {
    return this.calls.failure(code, api, context);
  }

  errorName(code: number): string {
    return this.calls.errorName(code);
  }

  errorString(code: number): string {
    return this.calls.errorString(code);
  }

  runtimeVersion(): number {
    return this.calls.intOut((o) => this.calls.fn.runtimeGetVersion(o), 'cudaRuntimeGetVersion');
  }

  /** 0 when no driver is installed. */
  driverVersion(): number {
    return this.calls.intOut((o) => this.calls.fn.driverGetVersion(o), 'cudaDriverGetVersion');
  }

  deviceCount(): number {
    return this.calls.intOut((o) => this.calls.fn.getDeviceCount(o), 'cudaGetDeviceCount');
  }

  setDevice(device: number): void {
    this.calls.check(this.calls.fn.setDevice(device), 'cudaSetDevice', `device ${device}`);
  }

  /** cudaSetDevice for the hot loop: the raw code, no check. */
  setDeviceThunk(device: number): () => number {
    const setDevice = this.calls.fn.setDevice;
    return () => setDevice(device) as number;
  }

  attribute(name: DeviceAttributeName, device: number): number {
    return this.calls.intOut(
      (o) => this.calls.fn.deviceGetAttribute(o, DeviceAttribute[name], device),
      'cudaDeviceGetAttribute',
      name,
    );
  }

  /** Name and UUID (as nvidia-smi prints it, `GPU-xxxxxxxx-...`). */
  nameAndUuid(device: number): { name: string; uuid: string } {
    const prop = koffi.alloc('uint8', DEVICE_PROP_BYTES);
    try {
      this.calls.check(this.calls.fn.getDeviceProperties(prop, device), 'cudaGetDeviceProperties', `device ${device}`);
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
    this.calls.check(this.calls.fn.deviceGetPCIBusId(buffer, buffer.length, device), 'cudaDeviceGetPCIBusId');
    const nul = buffer.indexOf(0);
    return Buffer.from(buffer.subarray(0, nul < 0 ? buffer.length : nul)).toString('ascii');
  }

  /** `least` is the numerically largest (lowest) priority; lower numbers are higher priority. */
  streamPriorityRange(): { least: number; greatest: number } {
    const least = [0];
    const greatest = [0];
    this.calls.check(this.calls.fn.deviceGetStreamPriorityRange(least, greatest), 'cudaDeviceGetStreamPriorityRange');
    return { least: least[0] ?? 0, greatest: greatest[0] ?? 0 };
  }

  deviceSynchronize(context?: string): void {
    this.calls.check(this.calls.fn.deviceSynchronize(), 'cudaDeviceSynchronize', context);
  }
}

let cached: CudaRuntime | undefined;

/** Whether libcudart is loaded in this process: CUDA_DEVICE_MAX_CONNECTIONS set after that may not count. */
export const runtimeLoaded = (): boolean => cached !== undefined;

/** Loads libcudart once per process (see locate.ts for where it looks). */
export function openRuntime(env: NodeJS.ProcessEnv = process.env): CudaRuntime {
  if (!cached) {
    const { lib, path } = loadCudaLibrary('cudart', env);
    cached = new CudaRuntime(path, lib);
  }
  return cached;
}
