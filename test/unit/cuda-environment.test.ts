import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { noGpuExplanation, WORKS_WITHOUT_GPU } from '../../src/cuda/error.js';
import { LibraryOverrideError, loadCudaLibrary, loadFirst } from '../../src/cuda/load.js';
import { resolveLibraryFile } from '../../src/cuda/locate.js';
import { EnvironmentError } from '../../src/errors.js';
import { runCli } from '../helpers/cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-env-'));
const notElf = join(dir, 'libcudart.so.13');
writeFileSync(notElf, 'this is text, not an ELF shared library; '.repeat(40));

/** A real shared library that is neither libcudart nor libnvrtc: the libm this node process has mapped. */
const libm =
  readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .map((line) => line.slice(line.indexOf('/')))
    .find((file) => /\/libm\.so\.6$/.test(file)) ?? '/lib/x86_64-linux-gnu/libm.so.6';

function overrideError(kind: 'cudart' | 'nvrtc', path: string): LibraryOverrideError {
  const variable = kind === 'cudart' ? 'CUDA_PIPE_CUDART' : 'CUDA_PIPE_NVRTC';
  try {
    loadCudaLibrary(kind, { [variable]: path });
  } catch (error) {
    assert.ok(error instanceof LibraryOverrideError, `expected a LibraryOverrideError, got ${String(error)}`);
    assert.equal(error.exitCode, 3);
    return error;
  }
  assert.fail(`${variable}=${path} should not load`);
}

describe('CUDA_PIPE_CUDART and CUDA_PIPE_NVRTC', () => {
  it('a path that does not exist is an error naming the variable, not a silent fallback', () => {
    const error = overrideError('cudart', '/nowhere/libcudart.so.13');
    assert.equal(error.message, 'CUDA_PIPE_CUDART=/nowhere/libcudart.so.13: no such file there.');
    assert.match(error.hint ?? '', /Point CUDA_PIPE_CUDART at the libcudart file itself/);
  });

  it('a file that is not a shared library says so', () => {
    assert.match(
      overrideError('cudart', notElf).message,
      /^CUDA_PIPE_CUDART=\S+libcudart\.so\.13: not a shared library that can be loaded \(invalid ELF header\)\.$/,
    );
    assert.equal(overrideError('nvrtc', dir).message, `CUDA_PIPE_NVRTC=${dir}: is a folder, not a library file.`);
  });

  it('another shared library is named for the function it lacks', () => {
    assert.equal(
      overrideError('cudart', libm).message,
      `CUDA_PIPE_CUDART=${libm}: a shared library without cudaGetDeviceCount, so not libcudart.`,
    );
    assert.equal(
      overrideError('nvrtc', libm).message,
      `CUDA_PIPE_NVRTC=${libm}: a shared library without nvrtcVersion, so not libnvrtc.`,
    );
  });

  it('the kernel cache identifies NVRTC by the override even when it is missing, so a bad override is never hidden by a hit', () => {
    assert.equal(
      resolveLibraryFile('nvrtc', { CUDA_PIPE_NVRTC: '/nowhere/libnvrtc.so' }, () => false, []),
      '/nowhere/libnvrtc.so',
    );
  });

  it('the search skips a library that loads but is not libcudart, and says why', () => {
    assert.throws(
      () => loadFirst('cudart', [{ path: libm, origin: 'CUDA_PATH' }]),
      (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.match(
          error.message,
          new RegExp(
            `${libm.replace(/[.]/g, '\\.')} \\(CUDA_PATH\\): loads, but has no cudaGetDeviceCount \\(not libcudart\\)`,
          ),
        );
        return true;
      },
    );
  });

  it('the CLI exits 3 with one paragraph for a wrong CUDA_PIPE_CUDART', () => {
    const { code, stderr } = runCli(['probe'], { CUDA_PIPE_CUDART: libm });
    assert.equal(code, 3);
    assert.match(
      stderr,
      new RegExp(
        `^cuda-pipe: CUDA_PIPE_CUDART=${libm.replace(/[.]/g, '\\.')}: a shared library without cudaGetDeviceCount`,
      ),
    );
    assert.doesNotMatch(stderr, /internal error|\n\s+at /);
  });

  it('kernels --check exits 3 for a wrong CUDA_PIPE_NVRTC instead of falling back', () => {
    const { code, stderr } = runCli(['kernels', '--check'], { CUDA_PIPE_NVRTC: '/nowhere/libnvrtc.so.12' });
    assert.equal(code, 3);
    assert.match(stderr, /CUDA_PIPE_NVRTC=\/nowhere\/libnvrtc\.so\.12: no such file there\./);
  });
});

describe('the no-GPU explanation', () => {
  it('names the runtime, whether the driver library exists, and what works without a GPU', () => {
    const { message, hint } = noGpuExplanation(35, 'cudaGetDeviceCount', 'cudaErrorInsufficientDriver');
    assert.match(
      message,
      /^No CUDA driver: .*\(cudaGetDeviceCount returned cudaErrorInsufficientDriver, 35; CUDA runtime \S+; driver library libcuda\.so\.1: (found|not found)\)\.$/,
    );
    assert.ok(hint.endsWith(WORKS_WITHOUT_GPU));
    for (const command of ['run --dry-run', 'kernels --check', 'schema', 'report', 'compare'])
      assert.ok(WORKS_WITHOUT_GPU.includes(`\`${command}\``), command);
    assert.match(
      noGpuExplanation(100, 'cudaGetDeviceCount', 'cudaErrorNoDevice').message,
      /^No CUDA device: .*libcuda\.so\.1: (found|not found)/,
    );
  });

  it('probe says which libcudart it loaded and that libcuda.so.1 is missing', {
    skip: gpuSkipReason() === null ? 'a GPU is present' : false,
  }, () => {
    const { code, stderr } = runCli(['probe']);
    assert.equal(code, 3);
    assert.match(stderr, /CUDA runtime \/\S+libcudart\.so[.\d]*; driver library libcuda\.so\.1: (not found|found)\)/);
    assert.match(stderr, /Without a GPU these still work: `run --dry-run`/);
  });
});
