import { LibraryOverrideError, loadedLibraryPath } from '../cuda/load.js';
import { openNvrtc } from '../cuda/nvrtc.js';
import { openRuntime } from '../cuda/runtime.js';
import { type CudaPipeError, UsageError } from '../errors.js';
import { listKernelSources, readKernelSource } from '../kernels/catalog.js';
import { formatSignature } from '../kernels/signature.js';
import { formatBytes, formatMs } from '../report/format.js';

export interface KernelsOptions {
  check?: boolean;
  arch?: string;
}

/** Lists (and with --check compiles) the given sources, or the built-in kernels/ when none is given. */
export async function kernelsCommand(paths: readonly string[], options: KernelsOptions): Promise<0 | 2> {
  const sources = paths.length ? paths.map((path) => readKernelSource(path)) : listKernelSources();
  for (const source of sources) {
    process.stdout.write(`${source.path}\n`);
    for (const signature of source.signatures) process.stdout.write(`  ${formatSignature(signature)}\n`);
    if (!source.signatures.length) process.stdout.write('  (no extern "C" __global__ kernels)\n');
  }
  if (!options.check) return 0;
  const nvrtc = openNvrtc();
  const version = nvrtc.version();
  const { arch, why } = checkArch(options.arch, nvrtc.supportedArchs());
  process.stdout.write(`\nCompiling with NVRTC ${version.major}.${version.minor} (${loadedLibraryPath('nvrtc') ?? nvrtc.libraryPath}) for ${arch} (${why}), bypassing the cache:\n`);
  let failures = 0;
  for (const source of sources) {
    const started = performance.now();
    // --check is about NVRTC accepting the sources, so it always compiles rather than trusting the cache.
    const outcome = nvrtc.compile(source.text, source.path, [`--gpu-architecture=${arch}`]);
    const ms = performance.now() - started;
    if (outcome.ok) {
      process.stdout.write(`  ok      ${source.path}: CUBIN ${formatBytes(outcome.cubin.byteLength)} in ${formatMs(ms)}\n`);
    } else {
      failures += 1;
      process.stdout.write(`  FAILED  ${source.path}:\n${outcome.log.replace(/^/gm, '    ')}\n`);
    }
  }
  process.stdout.write(`${sources.length - failures} of ${sources.length} sources compiled.\n`);
  return failures ? 2 : 0;
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
