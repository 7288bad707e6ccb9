import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CudaLibraryKind } from '../../src/cuda/locate.js';
import { REQUIRED_SYMBOLS } from '../../src/cuda/symbols.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';
import { openNvrtc } from '../../src/cuda/nvrtc.js';
import { openRuntime } from '../../src/cuda/runtime.js';
import { EnvironmentError } from '../../src/errors.js';
import { LibraryOverrideError, loadCudaLibrary, loadFirst } from '../../src/cuda/load.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

const noGpu = gpuSkipReason() !== null;

describe('libcudart through koffi', () => {
  it('loads the real CUDA runtime and reads its version', () => {
    const rt = openRuntime();
    assert.ok(rt.runtimeVersion() >= 12000, `runtime version ${rt.runtimeVersion()}`);
  });

  it('turns "no driver" into an environment error with a plain sentence', {
    skip: noGpu ? false : 'a GPU is present',
  }, () => {
    const rt = openRuntime();
    assert.throws(
      () => rt.deviceCount(),
      (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.equal(error.exitCode, 3);
        assert.match(error.message, /^No CUDA (driver|device)/);
        assert.match(error.message, /cudaGetDeviceCount returned cudaError\w+, (35|100)/);
        assert.ok(error.hint && error.hint.length > 20);
        return true;
      },
    );
  });

  it("names CUDA errors by the runtime's own tables", () => {
    const rt = openRuntime();
    assert.equal(rt.errorName(2), 'cudaErrorMemoryAllocation');
    assert.equal(rt.errorName(700), 'cudaErrorIllegalAddress');
    assert.match(rt.errorString(700), /illegal memory access/);
  });

  it('lists every place it looked, and the variable that overrides, when nothing loads', () => {
    const candidates = [
      { path: '/nowhere/libcudart.so.13', origin: 'CUDA_PIPE_CUDART' },
      { path: 'libcudart-does-not-exist.so.99', origin: 'dynamic loader search' },
    ];
    assert.throws(
      () => loadFirst('cudart', candidates),
      (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.equal(error.exitCode, 3);
        assert.match(error.message, /Could not load the CUDA runtime \(libcudart\)/);
        assert.match(error.message, /\/nowhere\/libcudart\.so\.13 \(CUDA_PIPE_CUDART\)/);
        assert.match(error.message, /libcudart-does-not-exist\.so\.99 \(dynamic loader search\)/);
        assert.match(error.hint ?? '', /CUDA_PATH.*CUDA_PIPE_CUDART/);
        return true;
      },
    );
  });
});

describe('NVRTC through koffi', { skip: nvrtcSkipReason() ?? false }, () => {
  it('reports its version and the architectures it can compile for', () => {
    const nvrtc = openNvrtc();
    const { major } = nvrtc.version();
    assert.ok(major >= 11);
    assert.ok(nvrtc.supportedArchs().includes(90), 'sm_90 must be supported');
  });

  it('compiles a kernel to a CUBIN (an ELF image)', async () => {
    const source =
      'extern "C" __global__ void twice(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }';
    const outcome = await openNvrtc().compile(source, 'twice.cu', ['--gpu-architecture=sm_90']);
    assert.ok(outcome.ok, outcome.log);
    assert.deepEqual([...outcome.cubin.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
    assert.ok(outcome.cubin.byteLength > 500);
  });

  it('returns the log of a broken kernel with its file and line', async () => {
    const source = 'extern "C" __global__ void broken(float *x) {\n  x[0] = undefined_name;\n}\n';
    const outcome = await openNvrtc().compile(source, '/src/kernels/broken.cu', ['--gpu-architecture=sm_90']);
    assert.equal(outcome.ok, false);
    assert.match(outcome.log, /\/src\/kernels\/broken\.cu\(2\): error: identifier "undefined_name" is undefined/);
  });
});

/**
 * A shared library built here that exports every function cuda-pipe binds for `kind` except `omit`: the marker is
 * there, so it passes for the library, and only the full check finds what it lacks.
 */
function fakeLibrary(kind: CudaLibraryKind, omit: readonly string[]): string {
  const names = REQUIRED_SYMBOLS[kind].map((r) => r.names[0] as string).filter((name) => !omit.includes(name));
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-fake-'));
  const source = join(dir, 'fake.c');
  writeFileSync(source, names.map((name) => `int ${name}(void) { return 0; }\n`).join(''));
  const library = join(dir, kind === 'cudart' ? 'libcudart.so.12' : 'libnvrtc.so.12');
  execFileSync('cc', ['-shared', '-fPIC', '-o', library, source]);
  return library;
}

const noCompiler = spawnSync('cc', ['--version']).status === 0 ? false : 'no C compiler (cc) to build a fake library';

describe('a library with its marker function but not every function cuda-pipe binds', { skip: noCompiler }, () => {
  it('every function the bindings declare is in the table of required functions', () => {
    const bound = ['src/cuda/bindings.ts', 'src/cuda/nvrtc.ts'].flatMap((file) =>
      [...readFileSync(join(packageRoot(), file), 'utf8').matchAll(/lib\.func\('[^']*?\b(\w+)\(/g)].map(
        (m) => m[1] as string,
      ),
    );
    const required = new Set(
      Object.values(REQUIRED_SYMBOLS)
        .flat()
        .flatMap((r) => r.names),
    );
    assert.ok(bound.length > 50, `found ${bound.length} bindings`);
    assert.deepEqual(
      bound.filter((name) => !required.has(name)),
      [],
    );
  });

  it('an override is refused at load time, naming the file, the function and the CUDA that has it', () => {
    const library = fakeLibrary('cudart', ['cudaGetErrorName']);
    assert.throws(
      () => loadCudaLibrary('cudart', { CUDA_PIPE_CUDART: library }),
      (error: unknown) => {
        assert.ok(error instanceof LibraryOverrideError);
        assert.equal(error.exitCode, 3);
        assert.equal(
          error.message,
          `CUDA_PIPE_CUDART=${library}: a libcudart that lacks cudaGetErrorName (CUDA 6.5 and newer); ` +
            'cuda-pipe needs libcudart from CUDA 12.0 or newer.',
        );
        return true;
      },
    );
  });

  it('an older runtime found by the search is skipped with the reason, so a newer one further down can load', () => {
    const older = fakeLibrary('cudart', [
      'cudaLibraryLoadData',
      'cudaLibraryUnload',
      'cudaLibraryGetKernel',
      'cudaLaunchKernelExC',
    ]);
    assert.throws(
      () => loadFirst('cudart', [{ path: older, origin: 'CUDA_PATH' }]),
      (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.match(
          error.message,
          new RegExp(
            `${older.replace(/[.]/g, '\\.')} \\(CUDA_PATH\\): loads, but lacks cudaLaunchKernelExC \\(CUDA 11\\.8 and newer\\), ` +
              'cudaLibraryLoadData \\(CUDA 12\\.0 and newer\\), cudaLibraryUnload \\(CUDA 12\\.0 and newer\\) and 1 more function; cuda-pipe needs libcudart from CUDA 12\\.0 or newer',
          ),
        );
        return true;
      },
    );
  });

  it('the CLI exits 3 with one paragraph for a libcudart or a libnvrtc missing a function, not 70', () => {
    const runtime = runCli(['probe'], { CUDA_PIPE_CUDART: fakeLibrary('cudart', ['cudaGetErrorName']) });
    assert.equal(runtime.code, 3);
    assert.match(
      runtime.stderr,
      /^cuda-pipe: CUDA_PIPE_CUDART=\S+libcudart\.so\.12: a libcudart that lacks cudaGetErrorName \(CUDA 6\.5 and newer\)/,
    );
    assert.doesNotMatch(runtime.stderr, /internal error|Cannot find function|\n\s+at /);
    const nvrtc = runCli(['kernels', '--check'], {
      CUDA_PIPE_NVRTC: fakeLibrary('nvrtc', ['nvrtcGetSupportedArchs', 'nvrtcGetPTX']),
    });
    assert.equal(nvrtc.code, 3);
    assert.match(
      nvrtc.stderr,
      /CUDA_PIPE_NVRTC=\S+libnvrtc\.so\.12: a libnvrtc that lacks nvrtcGetPTX \(CUDA 7\.0 and newer\), nvrtcGetSupportedArchs \(CUDA 11\.2 and newer\); cuda-pipe needs libnvrtc from CUDA 11\.2 or newer\./,
    );
    assert.doesNotMatch(nvrtc.stderr, /internal error|Cannot find function|\n\s+at /);
  });
});
