import { HOST_ALLOC_FLAGS, HOST_REGISTER_PORTABLE, MEMCPY_KIND } from './bindings.js';
import type { Calls } from './calls.js';
import type { CopyDirection, DevicePtr, HostAllocKind, HostPtr, StreamHandle } from './types.js';

/** Device and page-locked host memory, and copies between them. */
export class CudaMemory {
  constructor(private readonly calls: Calls) {}

  hostAlloc(bytes: number, kind: HostAllocKind): HostPtr {
    return this.calls.pointerOut(
      (o) => this.calls.fn.hostAlloc(o, bytes, HOST_ALLOC_FLAGS[kind]),
      'cudaHostAlloc',
      `${bytes} bytes`,
    ) as HostPtr;
  }

  /** The device's address of mapped host memory (cudaHostAlloc with 'mapped'). */
  devicePointerOf(pointer: HostPtr): DevicePtr {
    return this.calls.pointerOut(
      (o) => this.calls.fn.hostGetDevicePointer(o, pointer, 0),
      'cudaHostGetDevicePointer',
    ) as DevicePtr;
  }

  freeHost(pointer: HostPtr): void {
    this.calls.check(this.calls.fn.freeHost(pointer), 'cudaFreeHost');
  }

  hostRegister(pointer: HostPtr, bytes: number): void {
    this.calls.check(
      this.calls.fn.hostRegister(pointer, bytes, HOST_REGISTER_PORTABLE),
      'cudaHostRegister',
      `${bytes} bytes`,
    );
  }

  hostUnregister(pointer: HostPtr): void {
    this.calls.check(this.calls.fn.hostUnregister(pointer), 'cudaHostUnregister');
  }

  malloc(bytes: number, context?: string): DevicePtr {
    return this.calls.pointerOut(
      (o) => this.calls.fn.malloc(o, bytes),
      'cudaMalloc',
      context ?? `${bytes} bytes`,
    ) as DevicePtr;
  }

  free(pointer: DevicePtr): void {
    this.calls.check(this.calls.fn.free(pointer), 'cudaFree');
  }

  /** Free and total device memory of the current device, bytes. */
  info(): { free: number; total: number } {
    const free = [0];
    const total = [0];
    this.calls.check(this.calls.fn.memGetInfo(free, total), 'cudaMemGetInfo');
    return { free: Number(free[0]), total: Number(total[0]) };
  }

  /** Synchronous copy; for set-up and read-back only, never in a timed loop. */
  copy(dst: DevicePtr | HostPtr, src: DevicePtr | HostPtr, bytes: number, direction: CopyDirection): void {
    this.calls.check(this.calls.fn.memcpy(dst, src, bytes, MEMCPY_KIND[direction]), 'cudaMemcpy');
  }

  memset(pointer: DevicePtr, byte: number, bytes: number, stream: StreamHandle): void {
    this.calls.check(this.calls.fn.memsetAsync(pointer, byte, bytes, stream), 'cudaMemsetAsync');
  }

  /** An async copy bound to its pointers once; the closure returns the raw cudaError_t for the hot loop. */
  copyThunk(
    dst: DevicePtr | HostPtr,
    src: DevicePtr | HostPtr,
    bytes: number,
    direction: CopyDirection,
    stream: StreamHandle,
  ): () => number {
    const memcpyAsync = this.calls.fn.memcpyAsync;
    const kind = MEMCPY_KIND[direction];
    return () => memcpyAsync(dst, src, bytes, kind, stream) as number;
  }

  memsetThunk(pointer: DevicePtr, byte: number, bytes: number, stream: StreamHandle): () => number {
    const memsetAsync = this.calls.fn.memsetAsync;
    return () => memsetAsync(pointer, byte, bytes, stream) as number;
  }
}
