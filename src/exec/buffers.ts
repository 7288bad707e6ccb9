import type { ConfigBuffer } from '../config/load.js';
import { allocPageable, freePageable, hostBytes } from '../cuda/host.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import { DEFAULT_STREAM, type DevicePtr, type HostPtr } from '../cuda/types.js';
import { fillPattern } from '../data/patterns.js';
import { DeviceFailure } from '../errors.js';
import { formatBytes } from '../format.js';
import type { Cleanup } from './cleanup.js';

export interface BufferBinding {
  readonly buffer: ConfigBuffer;
  readonly host: HostPtr;
  readonly device: DevicePtr;
  /** Initial contents of an inout buffer, which each rep's D2H overwrites on the host. */
  readonly pristine: Uint8Array | null;
}

/**
 * A plan's buffers on one device: host memory of the kind each buffer asks for, device memory, inputs filled with
 * their seeded pattern. Everything is released through the Cleanup it was allocated with.
 */
export class DeviceBuffers {
  private constructor(
    private readonly rt: CudaRuntime,
    readonly device: number,
    private readonly bindings: ReadonlyMap<string, BufferBinding>,
  ) {}

  /** Checks the device has room first, so that a config too large for it fails with sizes, not cudaMalloc's code. */
  static allocate(rt: CudaRuntime, device: number, buffers: readonly ConfigBuffer[], cleanup: Cleanup): DeviceBuffers {
    const deviceBytes = buffers.reduce((sum, b) => sum + b.bytes, 0);
    const { free, total } = rt.memory.info();
    if (deviceBytes > free) {
      throw new DeviceFailure(
        `The buffers need ${formatBytes(deviceBytes)} of device memory, but device ${device} has ${formatBytes(free)} free of ${formatBytes(total)}.`,
        { hint: 'Use smaller buffers (count or size in the config), or free memory held by other processes (nvidia-smi).' },
      );
    }
    const bindings = new Map<string, BufferBinding>();
    for (const buffer of buffers) {
      // Scratch buffers live on the device only; host pointer 0 is never used because no copy names them.
      const host = buffer.role === 'scratch' ? (0n as HostPtr) : allocHost(rt, buffer, cleanup);
      const devicePtr = rt.memory.malloc(buffer.bytes, `buffer "${buffer.name}", ${formatBytes(buffer.bytes)}`);
      cleanup.push(() => rt.memory.free(devicePtr));
      let pristine: Uint8Array | null = null;
      if (buffer.role === 'in' || buffer.role === 'inout') {
        const view = hostBytes(host, buffer.bytes);
        fillPattern(view, buffer.type, buffer.init);
        if (buffer.role === 'inout') pristine = new Uint8Array(view);
      }
      bindings.set(buffer.name, { buffer, host, device: devicePtr, pristine });
    }
    return new DeviceBuffers(rt, device, bindings);
  }

  binding(name: string): BufferBinding {
    const binding = this.bindings.get(name);
    if (!binding) throw new Error(`unknown buffer ${name}`);
    return binding;
  }

  /** Host bytes of a buffer; valid until the buffers are released. */
  hostView(name: string): Uint8Array {
    const binding = this.binding(name);
    return hostBytes(binding.host, binding.buffer.bytes);
  }

  restoreInputs(): void {
    for (const binding of this.bindings.values()) {
      if (binding.pristine) this.hostView(binding.buffer.name).set(binding.pristine);
    }
  }

  /** Fills every out buffer with `byte`, on the host and on the device, so unwritten elements show. */
  poisonOutputs(byte: number): void {
    for (const binding of this.bindings.values()) {
      if (binding.buffer.role !== 'out') continue;
      this.hostView(binding.buffer.name).fill(byte);
      this.rt.memory.memset(binding.device, byte, binding.buffer.bytes, DEFAULT_STREAM);
    }
    this.rt.deviceSynchronize('poisoning outputs');
  }

  outputs(): ConfigBuffer[] {
    return [...this.bindings.values()].map((b) => b.buffer).filter((b) => b.role === 'out' || b.role === 'inout');
  }
}

function allocHost(rt: CudaRuntime, buffer: ConfigBuffer, cleanup: Cleanup): HostPtr {
  const bytes = buffer.bytes;
  switch (buffer.hostMemory) {
    case 'pinned':
    case 'write-combined': {
      const host = rt.memory.hostAlloc(bytes, buffer.hostMemory);
      cleanup.push(() => rt.memory.freeHost(host));
      return host;
    }
    case 'pageable': {
      const host = allocPageable(bytes);
      cleanup.push(() => freePageable(host));
      return host;
    }
    case 'registered': {
      const host = allocPageable(bytes);
      cleanup.push(() => freePageable(host));
      rt.memory.hostRegister(host, bytes);
      cleanup.push(() => rt.memory.hostUnregister(host));
      return host;
    }
  }
}
