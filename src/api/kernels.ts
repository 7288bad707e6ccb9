import { LibraryOverrideError, loadedLibraryPath } from '../cuda/load.js';
import { openNvrtc } from '../cuda/nvrtc.js';
import { openRuntime } from '../cuda/runtime.js';
import { type CudaPipeError, UsageError } from '../errors.js';
import type { KernelSource } from '../kernels/catalog.js';

export interface SourceCheck {
  readonly path: string;
  readonly ok: boolean;
  readonly cubinBytes: number;
  readonly ms: number;
  readonly log: string;
}

export interface KernelCheck {
  readonly nvrtc: { readonly version: string; readonly path: string };
  readonly arch: string;
  /** Why that architecture: --arch, the device's, or the newest NVRTC supports. */
  readonly why: string;
  readonly sources: readonly SourceCheck[];
}

/** Compiles every source with NVRTC, bypassing the cache: the check is about NVRTC accepting them. */
export function checkKernelSources(sources: readonly KernelSource[], requestedArch: string | undefined): KernelCheck {
  const nvrtc = openNvrtc();
  const version = nvrtc.version();
  const { arch, why } = checkArch(requestedArch, nvrtc.supportedArchs());
  const checks = sources.map((source): SourceCheck => {
    const started = performance.now();
    const outcome = nvrtc.compile(source.text, source.path, [`--gpu-architecture=${arch}`]);
    const ms = performance.now() - started;
    return outcome.ok
      ? { path: source.path, ok: true, cubinBytes: outcome.cubin.byteLength, ms, log: outcome.log }
      : { path: source.path, ok: false, cubinBytes: 0, ms, log: outcome.log };
  });
  return { nvrtc: { version: `${version.major}.${version.minor}`, path: loadedLibraryPath('nvrtc') ?? nvrtc.libraryPath }, arch, why, sources: checks };
}

function checkArch(requested: string | undefined, supported: number[]): { arch: string; why: string } {
  if (requested) {
    const number = Number(/^sm_(\d+)$/.exec(requested)?.[1]);
    if (!supported.includes(number)) {
      throw new UsageError(`--arch ${requested}: this NVRTC compiles for ${supported.map((a) => `sm_${a}`).join(', ')}.`);
    }
    return { arch: requested, why: '--arch' };
  }
  try {
    const rt = openRuntime();
    if (rt.deviceCount() > 0) {
      rt.setDevice(0);
      return { arch: `sm_${rt.attribute('computeCapabilityMajor', 0)}${rt.attribute('computeCapabilityMinor', 0)}`, why: 'device 0' };
    }
  } catch (error) {
    if ((error as CudaPipeError).exitCode !== 3 || error instanceof LibraryOverrideError) throw error;
  }
  return { arch: `sm_${Math.max(...supported)}`, why: 'no GPU here, so the newest NVRTC supports' };
}
