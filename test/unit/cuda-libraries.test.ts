import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openNvrtc } from '../../src/cuda/nvrtc.js';
import { openRuntime } from '../../src/cuda/runtime.js';
import { EnvironmentError } from '../../src/errors.js';
import { loadFirst } from '../../src/cuda/load.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

const noGpu = gpuSkipReason() !== null;

describe('libcudart through koffi', () => {
  it('loads the real CUDA runtime and reads its version', () => {
    const rt = openRuntime();
    assert.ok(rt.runtimeVersion() >= 12000, `runtime version ${rt.runtimeVersion()}`);
  });

  it('turns "no driver" into an environment error with a plain sentence', { skip: noGpu ? false : 'a GPU is present' }, () => {
    const rt = openRuntime();
    assert.throws(() => rt.deviceCount(), (error: unknown) => {
      assert.ok(error instanceof EnvironmentError);
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /^No CUDA (driver|device)/);
      assert.match(error.message, /cudaGetDeviceCount returned cudaError\w+, (35|100)/);
      assert.ok(error.hint && error.hint.length > 20);
      return true;
    });
  });

  it('names CUDA errors by the runtime\'s own tables', () => {
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
    assert.throws(() => loadFirst('cudart', candidates), (error: unknown) => {
      assert.ok(error instanceof EnvironmentError);
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /Could not load the CUDA runtime \(libcudart\)/);
      assert.match(error.message, /\/nowhere\/libcudart\.so\.13 \(CUDA_PIPE_CUDART\)/);
      assert.match(error.message, /libcudart-does-not-exist\.so\.99 \(dynamic loader search\)/);
      assert.match(error.hint ?? '', /CUDA_PATH.*CUDA_PIPE_CUDART/);
      return true;
    });
  });
});

describe('NVRTC through koffi', { skip: nvrtcSkipReason() ?? false }, () => {
  it('reports its version and the architectures it can compile for', () => {
    const nvrtc = openNvrtc();
    const { major } = nvrtc.version();
    assert.ok(major >= 11);
    assert.ok(nvrtc.supportedArchs().includes(90), 'sm_90 must be supported');
  });

  it('compiles a kernel to a CUBIN (an ELF image)', () => {
    const source = 'extern "C" __global__ void twice(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }';
    const outcome = openNvrtc().compile(source, 'twice.cu', ['--gpu-architecture=sm_90']);
    assert.ok(outcome.ok, outcome.log);
    assert.deepEqual([...outcome.cubin.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
    assert.ok(outcome.cubin.byteLength > 500);
  });

  it('returns the log of a broken kernel with its file and line', () => {
    const source = 'extern "C" __global__ void broken(float *x) {\n  x[0] = undefined_name;\n}\n';
    const outcome = openNvrtc().compile(source, '/src/kernels/broken.cu', ['--gpu-architecture=sm_90']);
    assert.equal(outcome.ok, false);
    assert.match(outcome.log, /\/src\/kernels\/broken\.cu\(2\): error: identifier "undefined_name" is undefined/);
  });
});
