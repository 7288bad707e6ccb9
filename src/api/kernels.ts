import { LibraryOverrideError, loadedLibraryPath } from '../cuda/load.js';
import { type Nvrtc, openNvrtc } from '../cuda/nvrtc.js';
import { openRuntime } from '../cuda/runtime.js';
import { type CudaPipeError, UsageError } from '../errors.js';
import type { KernelSource } from '../kernels/catalog.js';
import { type CompiledModule, type CompileRequest, compileKernelSource } from '../kernels/compile.js';
import { checkCompiledKernel, type ResolvedKernel } from '../kernels/resolve.js';

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
export async function checkKernelSources(
  sources: readonly KernelSource[],
  requestedArch: string | undefined,
): Promise<KernelCheck> {
  const nvrtc = openNvrtc();
  const version = nvrtc.version();
  const { arch, why } = checkArch(requestedArch, nvrtc.supportedArchs());
  const checks: SourceCheck[] = [];
  for (const source of sources) {
    const started = performance.now();
    const outcome = await nvrtc.compile(source.text, source.path, [`--gpu-architecture=${arch}`]);
    const ms = performance.now() - started;
    checks.push(
      outcome.ok
        ? { path: source.path, ok: true, cubinBytes: outcome.cubin.byteLength, ms, log: outcome.log }
        : { path: source.path, ok: false, cubinBytes: 0, ms, log: outcome.log },
    );
  }
  return {
    nvrtc: { version: `${version.major}.${version.minor}`, path: loadedLibraryPath('nvrtc') ?? nvrtc.libraryPath },
    arch,
    why,
    sources: checks,
  };
}

/** What `run --dry-run` learnt by compiling a config's kernels, or why it could not. */
export type ConfigKernelCheck =
  | {
      readonly checked: true;
      readonly arch: string;
      readonly why: string;
      readonly nvrtc: string;
      readonly sources: number;
      readonly cached: number;
    }
  | { readonly checked: false; readonly reason: string }
  | { readonly checked: 'nothing' };

/**
 * Compiles a config's kernels without a GPU, through the on-disk cache (so a later run on a GPU of that
 * architecture finds them there), for `--arch` or the newest architecture NVRTC supports. A compile error is the
 * cache's UsageError with NVRTC's log (file:line); a missing NVRTC is not an error here, only a check not made.
 */
export async function checkConfigKernels(
  kernels: readonly ResolvedKernel[],
  requestedArch: string | undefined,
  deps: {
    openNvrtc: () => Pick<Nvrtc, 'supportedArchs'>;
    compile: (request: CompileRequest) => Promise<CompiledModule>;
  } = { openNvrtc, compile: compileKernelSource },
): Promise<ConfigKernelCheck> {
  // A config whose every compute step is a library call (gemm.yaml) has no source for NVRTC, so nothing to check
  // and no reason to load NVRTC.
  if (kernels.length === 0) return { checked: 'nothing' };
  let supported: number[];
  try {
    supported = deps.openNvrtc().supportedArchs();
  } catch (error) {
    if ((error as CudaPipeError).exitCode !== 3 || error instanceof LibraryOverrideError) throw error;
    // The loader's message lists the paths it tried on the lines after "Tried:"; its first line alone ends there.
    const first = ((error as Error).message.split('\n')[0] ?? String(error)).replace(/\s*Tried:$/, '');
    return { checked: false, reason: first };
  }
  const { arch, why } =
    requestedArch !== undefined
      ? archFromFlag(requestedArch, supported)
      : { arch: `sm_${Math.max(...supported)}`, why: 'the newest NVRTC supports' };
  const units = new Map<string, ResolvedKernel[]>();
  for (const k of kernels) {
    const key = JSON.stringify([k.sourcePath, k.options]);
    units.set(key, [...(units.get(key) ?? []), k]);
  }
  let cached = 0;
  let nvrtc = '';
  for (const [k, ...more] of units.values()) {
    if (!k) continue;
    const compiled = await deps.compile({ sourcePath: k.sourcePath, source: k.sourceText, options: k.options, arch });
    for (const kernel of [k, ...more]) checkCompiledKernel(kernel, compiled.entries);
    if (compiled.cached) cached += 1;
    nvrtc = compiled.nvrtcVersion;
  }
  return { checked: true, arch, why, nvrtc, sources: units.size, cached };
}

function archFromFlag(requested: string, supported: number[]): { arch: string; why: string } {
  const number = Number(/^sm_(\d+)$/.exec(requested)?.[1]);
  if (!supported.includes(number)) {
    throw new UsageError(`--arch ${requested}: this NVRTC compiles for ${supported.map((a) => `sm_${a}`).join(', ')}.`);
  }
  return { arch: requested, why: '--arch' };
}

function checkArch(requested: string | undefined, supported: number[]): { arch: string; why: string } {
  if (requested !== undefined) return archFromFlag(requested, supported);
  try {
    const rt = openRuntime();
    if (rt.deviceCount() > 0) {
      rt.setDevice(0);
      return {
        arch: `sm_${rt.attribute('computeCapabilityMajor', 0)}${rt.attribute('computeCapabilityMinor', 0)}`,
        why: 'device 0',
      };
    }
  } catch (error) {
    if ((error as CudaPipeError).exitCode !== 3 || error instanceof LibraryOverrideError) throw error;
  }
  return { arch: `sm_${Math.max(...supported)}`, why: 'no GPU here, so the newest NVRTC supports' };
}
