import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { cacheKey, compileKernelSource } from '../../src/kernels/compile.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

const source = 'extern "C" __global__ void add_one(float *x, unsigned long long n) { unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }';

describe('the kernel cache key', () => {
  const base = { sourcePath: '/k.cu', source, options: [], arch: 'sm_90' };
  it('changes with the source, the options, the architecture and the NVRTC build, and with nothing else', () => {
    const key = cacheKey(base, 'nvrtc-a');
    assert.equal(cacheKey({ ...base, sourcePath: '/elsewhere.cu' }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey({ ...base, source: source + ' ' }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey({ ...base, options: ['--use_fast_math'] }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey({ ...base, arch: 'sm_80' }, 'nvrtc-a'), key);
    assert.notEqual(cacheKey(base, 'nvrtc-b'), key);
  });
});

describe('compiling kernels through the cache', { skip: nvrtcSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-cache-'));
  const env = { ...process.env, CUDA_PIPE_CACHE_DIR: dir };
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles with NVRTC on a miss and serves the same CUBIN from disk on a hit', () => {
    const request = { sourcePath: '/k/add_one.cu', source, options: [], arch: 'sm_90' };
    const first = compileKernelSource(request, env);
    assert.equal(first.cached, false);
    assert.match(first.nvrtcVersion, /^\d+\.\d+$/);
    assert.deepEqual(readdirSync(dir).sort().map((f) => f.split('.').pop()), ['cubin', 'json']);
    const second = compileKernelSource(request, env);
    assert.equal(second.cached, true);
    assert.deepEqual(second.cubin, first.cubin);
    assert.equal(second.nvrtcVersion, first.nvrtcVersion);
    assert.equal(compileKernelSource({ ...request, arch: 'sm_80' }, env).cached, false);
  });

  it('turns a compile error into a usage error carrying NVRTC\'s log with file and line', () => {
    const broken = { sourcePath: '/k/broken.cu', source: 'extern "C" __global__ void b(float *x) {\n  x[0] = nope;\n}', options: [], arch: 'sm_90' };
    assert.throws(() => compileKernelSource(broken, env), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.match(error.message, /could not compile \/k\/broken\.cu for sm_90:\n\/k\/broken\.cu\(2\): error: identifier "nope" is undefined/);
      return true;
    });
  });
});
