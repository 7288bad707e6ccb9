import koffi from 'koffi';
import { KOFFI_SCALAR, LAUNCH_CONFIG } from './bindings.js';
import type { Calls } from './calls.js';
import type { KernelArgValue, KernelHandle, LibraryHandle, StreamHandle } from './types.js';

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

/** Loading compiled code and launching kernels from it. */
export class CudaLaunch {
  constructor(private readonly calls: Calls) {}

  /** Loads a CUBIN. The image is copied into native memory that lives as long as the library. */
  loadLibrary(image: Uint8Array): { library: LibraryHandle; unload(): void } {
    const native = koffi.alloc('uint8', image.byteLength);
    new Uint8Array(koffi.view(native, image.byteLength)).set(image);
    try {
      const library = this.calls.pointerOut(
        (o) => this.calls.fn.libraryLoadData(o, native, null, null, 0, null, null, 0),
        'cudaLibraryLoadData',
      ) as LibraryHandle;
      return {
        library,
        unload: () => {
          try {
            this.calls.check(this.calls.fn.libraryUnload(library), 'cudaLibraryUnload');
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
    return this.calls.pointerOut(
      (o) => this.calls.fn.libraryGetKernel(o, library, name),
      'cudaLibraryGetKernel',
      name,
    ) as KernelHandle;
  }

  /** Builds the `cudaLaunchConfig_t` and the `void **` argument block once, in native memory. */
  record(spec: LaunchSpec): LaunchRecord {
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
    const launchKernelExC = this.calls.fn.launchKernelExC;
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
}
