import { deviceBytesOf } from '../config/items.js';
import type { ConfigBuffer } from '../config/types.js';
import { allocPageable, freePageable, hostBytes } from '../cuda/host.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import { DEFAULT_STREAM, type DevicePtr, type HostPtr, offsetPointer } from '../cuda/types.js';
import { fillPattern, windowSeed } from '../data/patterns.js';
import { HOST_WINDOW_BYTES } from '../data/compare.js';
import { DeviceFailure } from '../errors.js';
import { formatBytes } from '../format.js';
import type { Cleanup } from './cleanup.js';

export interface BufferBinding {
  readonly buffer: ConfigBuffer;
  readonly host: HostPtr;
  readonly device: DevicePtr;
  /** Initial contents of an inout buffer, window by window, which each rep's D2H overwrites on the host. */
  readonly pristine: Uint8Array[] | null;
}

/** Device memory the buffers took, as cudaMemGetInfo saw it before and after allocating them. */
export interface DeviceMemoryUse {
  readonly askedBytes: number;
  readonly measuredBytes: number;
  readonly freeBeforeBytes: number;
}

/**
 * A plan's buffers on one device: host memory of the kind each buffer asks for, device memory (whole buffers, or
 * the ring's slots under a budget; resident buffers always whole, copied to the device here, once), inputs filled
 * with their seeded pattern. Everything is released through the
 * Cleanup it was allocated with. Host memory is only ever seen through windows of at most HOST_WINDOW_BYTES: a
 * JS typed array cannot span more than 4 GiB.
 */
export class DeviceBuffers {
  private constructor(
    private readonly rt: CudaRuntime,
    readonly device: number,
    private readonly bindings: ReadonlyMap<string, BufferBinding>,
    readonly memory: DeviceMemoryUse,
    private readonly deviceElements: number,
    /** The buffers whose host memory is this device's own; the others' owner fills, restores and poisons it. */
    private readonly ownsHost: ReadonlySet<string>,
  ) {}

  /**
   * Checks the device has room first, so that a config too large for it fails with sizes, not cudaMalloc's code.
   * `sharing`: another device's buffers whose host memory (portable) this device's copies use too; only the device
   * side is allocated, and with `ownOutputs` the host side of the outputs too (a data-parallel rank stores results
   * of its own, which a reduce-scatter makes differ from the other ranks'). The device must be current.
   */
  static allocate(
    rt: CudaRuntime,
    device: number,
    buffers: readonly ConfigBuffer[],
    deviceElements: number,
    cleanup: Cleanup,
    sharing?: DeviceBuffers,
    options: { readonly ownOutputs?: boolean } = {},
  ): DeviceBuffers {
    // `deviceElements` counts items (elements where the config has no pipeline.items): each chunked buffer holds
    // that many of its own items, a resident buffer all of itself.
    const deviceBytes = buffers.reduce((sum, b) => sum + deviceBytesOf(b, deviceElements), 0);
    const { free, total } = rt.memory.info();
    if (deviceBytes > free) {
      throw new DeviceFailure(
        `The buffers need ${formatBytes(deviceBytes)} of device memory, but device ${device} has ${formatBytes(free)} free of ${formatBytes(total)}.`,
        {
          hint: 'Use smaller buffers (count or size in the config), or free memory held by other processes (nvidia-smi).',
        },
      );
    }
    // Host memory first: pinning it can move the device's free figure too, and only the device buffers are measured.
    // Scratch buffers live on the device only; host pointer 0 is never used because no copy names them.
    const owns = (buffer: ConfigBuffer) => !sharing || (options.ownOutputs === true && isOutput(buffer));
    const hosts = buffers.map((buffer) => {
      if (buffer.role === 'scratch') return 0n as HostPtr;
      return owns(buffer) ? allocHost(rt, buffer, cleanup) : (sharing?.binding(buffer.name).host as HostPtr);
    });
    const freeBefore = rt.memory.info().free;
    const devices = buffers.map((buffer) => {
      const bytes = deviceBytesOf(buffer, deviceElements);
      const devicePtr = rt.memory.malloc(bytes, `buffer "${buffer.name}", ${formatBytes(bytes)}`);
      cleanup.push(() => rt.memory.free(devicePtr));
      return devicePtr;
    });
    const after = rt.memory.info().free;
    const bindings = new Map<string, BufferBinding>();
    buffers.forEach((buffer, index) => {
      const host = hosts[index] as HostPtr;
      const devicePtr = devices[index] as DevicePtr;
      let pristine: Uint8Array[] | null = owns(buffer) ? null : (sharing?.binding(buffer.name).pristine ?? null);
      if (owns(buffer) && (buffer.role === 'in' || buffer.role === 'inout' || buffer.role === 'resident')) {
        const windows = hostWindows(host, 0, buffer.bytes);
        windows.forEach((view, i) =>
          fillPattern(view, buffer.type, windowSeed(buffer.init, i, HOST_WINDOW_BYTES / buffer.elementBytes)),
        );
        if (buffer.role === 'inout') pristine = windows.map((view) => new Uint8Array(view));
      }
      // Copied once, here, before any rep: no mode times it, and every chunk and stream reads it whole.
      if (buffer.role === 'resident') rt.memory.copy(devicePtr, host, buffer.bytes, 'h2d');
      if (buffer.seeded) seedScratch(rt, buffer, devicePtr, deviceBytesOf(buffer, deviceElements));
      bindings.set(buffer.name, { buffer, host, device: devicePtr, pristine });
    });
    const owned = new Set(buffers.filter(owns).map((b) => b.name));
    return new DeviceBuffers(
      rt,
      device,
      bindings,
      { askedBytes: deviceBytes, measuredBytes: freeBefore - after, freeBeforeBytes: freeBefore },
      deviceElements,
      owned,
    );
  }

  binding(name: string): BufferBinding {
    const binding = this.bindings.get(name);
    if (!binding) throw new Error(`unknown buffer ${name}`);
    return binding;
  }

  /** Host bytes [offset, offset + bytes) of a buffer in windows; valid until the buffers are released. */
  hostWindows(name: string, offset = 0, bytes?: number): Uint8Array[] {
    const binding = this.binding(name);
    return hostWindows(binding.host, offset, bytes ?? binding.buffer.bytes - offset);
  }

  restoreInputs(): void {
    for (const binding of this.bindings.values()) {
      if (!binding.pristine || !this.ownsHost.has(binding.buffer.name)) continue;
      const windows = this.hostWindows(binding.buffer.name);
      binding.pristine.forEach((saved, i) => windows[i]?.set(saved));
    }
  }

  /**
   * Fills every out buffer with `byte`, on the host (unless another device's buffers own it) and on the device, so
   * unwritten elements show. The device must be current.
   */
  poisonOutputs(byte: number): void {
    for (const binding of this.bindings.values()) {
      if (binding.buffer.role !== 'out') continue;
      if (this.ownsHost.has(binding.buffer.name))
        for (const view of this.hostWindows(binding.buffer.name)) view.fill(byte);
      this.rt.memory.memset(binding.device, byte, deviceBytesOf(binding.buffer, this.deviceElements), DEFAULT_STREAM);
    }
    // Safe to block: between reps nothing is in flight, so no host function waits for the JS thread.
    this.rt.deviceSynchronize('poisoning outputs');
  }

  outputs(): ConfigBuffer[] {
    return [...this.bindings.values()].map((b) => b.buffer).filter(isOutput);
  }

  /** Whether this device's outputs land in host memory of its own, not the primary's. */
  get ownsOutputs(): boolean {
    return this.outputs().some((b) => this.ownsHost.has(b.name));
  }
}

const isOutput = (buffer: Pick<ConfigBuffer, 'role'>): boolean => buffer.role === 'out' || buffer.role === 'inout';

/**
 * A seeded scratch buffer's device memory, filled with its pattern through one pinned staging window, once, before
 * any rep: a library stage's operands (a GEMM's A and B) then hold data like a native program's, not whatever the
 * allocator left there (zeros flatter bf16 GEMMs by several per cent).
 */
function seedScratch(rt: CudaRuntime, buffer: ConfigBuffer, device: DevicePtr, bytes: number): void {
  const staging = rt.memory.hostAlloc(Math.min(HOST_WINDOW_BYTES, bytes), 'pinned');
  try {
    for (let at = 0, window = 0; at < bytes; at += HOST_WINDOW_BYTES, window++) {
      const length = Math.min(HOST_WINDOW_BYTES, bytes - at);
      fillPattern(
        hostBytes(staging, length),
        buffer.type,
        windowSeed(buffer.init, window, HOST_WINDOW_BYTES / buffer.elementBytes),
      );
      rt.memory.copy(offsetPointer(device, at), staging, length, 'h2d');
    }
  } finally {
    rt.memory.freeHost(staging);
  }
}

/** Views of native memory no larger than HOST_WINDOW_BYTES each, covering [offset, offset + bytes). */
function hostWindows(host: HostPtr, offset: number, bytes: number): Uint8Array[] {
  const windows: Uint8Array[] = [];
  for (let at = 0; at < bytes; at += HOST_WINDOW_BYTES) {
    windows.push(hostBytes(offsetPointer(host, offset + at), Math.min(HOST_WINDOW_BYTES, bytes - at)));
  }
  return windows;
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
