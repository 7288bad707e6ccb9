import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CublasError } from '../blas/status.js';
import { prototypeName } from '../blas/library.js';
import {
  CUBLAS_LIBRARY,
  CUBLAS_OP,
  CUBLAS_PROTOTYPES,
  type CublasHandle,
  GEMM_TYPES,
  type CublasGemmCall,
  loadCublas,
} from './cublas.js';
import { LibraryOverrideError, loadFirst } from '../../cuda/load.js';
import { libraryCandidates, resolveLibraryFile } from '../../cuda/locate.js';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import { EnvironmentError } from '../../errors.js';

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const libm =
  readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .map((line) => line.slice(line.indexOf('/')))
    .find((file) => /\/libm\.so\.6$/.test(file)) ?? '/lib/x86_64-linux-gnu/libm.so.6';

function loadError(env: NodeJS.ProcessEnv): EnvironmentError {
  try {
    loadCublas(env);
  } catch (error) {
    assert.ok(error instanceof EnvironmentError, `expected an EnvironmentError, got ${String(error)}`);
    assert.equal(error.exitCode, 3);
    return error;
  }
  assert.fail('libcublas should not load');
}

describe('where libcublas is looked for', () => {
  it('tries CUDA_PIPE_CUBLAS, then CUDA_PATH and CUDA_HOME, then the loader, then /usr/local/cuda, CUDA 13 first', () => {
    const paths = libraryCandidates(CUBLAS_LIBRARY, {
      CUDA_PIPE_CUBLAS: '/x/libcublas.so',
      CUDA_PATH: '/opt/cuda',
      CUDA_HOME: '/opt/home',
    }).map((c) => `${c.origin}: ${c.path}`);
    assert.deepEqual(paths.slice(0, 3), [
      'CUDA_PIPE_CUBLAS: /x/libcublas.so',
      'CUDA_PATH: /opt/cuda/lib64/libcublas.so.13',
      'CUDA_PATH: /opt/cuda/lib64/libcublas.so.12',
    ]);
    const firstHome = paths.indexOf('CUDA_HOME: /opt/home/lib64/libcublas.so.13');
    const firstLoader = paths.indexOf('dynamic loader search: libcublas.so.13');
    const firstDefault = paths.indexOf('default location: /usr/local/cuda/lib64/libcublas.so.13');
    assert.ok(firstHome > 2 && firstLoader > firstHome && firstDefault > firstLoader, paths.join('\n'));
  });

  it('a search that finds nothing is exit 3 naming every place it looked and the variables that steer it', () => {
    const candidates = [
      { path: '/nowhere/lib64/libcublas.so.13', origin: 'CUDA_PATH' },
      { path: 'libcublas-does-not-exist.so.99', origin: 'dynamic loader search' },
      { path: libm, origin: 'default location' },
    ];
    assert.throws(
      () => loadFirst(CUBLAS_LIBRARY, candidates),
      (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.equal(error.exitCode, 3);
        assert.match(error.message, /^Could not load cuBLAS \(libcublas\)\. Tried:\n/);
        assert.match(error.message, /\n {2}\/nowhere\/lib64\/libcublas\.so\.13 \(CUDA_PATH\): /);
        assert.match(error.message, /\n {2}libcublas-does-not-exist\.so\.99 \(dynamic loader search\): /);
        assert.match(
          error.message,
          new RegExp(
            `\\n {2}${escape(libm)} \\(default location\\): loads, but has no cublasCreate_v2 \\(not libcublas\\)`,
          ),
        );
        assert.match(error.hint ?? '', /^Install cuBLAS .*CUDA_PATH.*CUDA_PIPE_CUBLAS/);
        return true;
      },
    );
  });

  const present = resolveLibraryFile(CUBLAS_LIBRARY, {}, existsSync, []);
  it('on a machine without libcublas, the real search names CUDA_PATH, the loader and /usr/local/cuda', {
    skip: present ? `libcublas is here (${present})` : false,
  }, () => {
    const error = loadError({ CUDA_PATH: '/nowhere/cuda' });
    for (const place of [
      '/nowhere/cuda/lib64/libcublas.so.13 (CUDA_PATH)',
      'libcublas.so.13 (dynamic loader search)',
      '/usr/local/cuda/lib64/libcublas.so.13 (default location)',
    ])
      assert.ok(error.message.includes(`\n  ${place}: `), `${place} in:\n${error.message}`);
  });

  it('CUDA_PIPE_CUBLAS set to a file that is missing or is another library is refused, never passed over', () => {
    const missing = loadError({ CUDA_PIPE_CUBLAS: '/nowhere/libcublas.so.13' });
    assert.ok(missing instanceof LibraryOverrideError);
    assert.equal(missing.message, 'CUDA_PIPE_CUBLAS=/nowhere/libcublas.so.13: no such file there.');
    assert.match(
      missing.hint ?? '',
      /Point CUDA_PIPE_CUBLAS at the libcublas file itself \(for example \/usr\/local\/cuda\/lib64\/libcublas\.so\.13\)/,
    );
    assert.equal(
      loadError({ CUDA_PIPE_CUBLAS: libm }).message,
      `CUDA_PIPE_CUBLAS=${libm}: a shared library without cublasCreate_v2, so not libcublas.`,
    );
  });
});

describe('the cuBLAS types of each GEMM dtype', () => {
  it('maps fp32, tf32, fp16 and bf16 to cudaDataType and cublasComputeType_t, all accumulating in fp32', () => {
    // CUDA_R_32F 0, CUDA_R_16F 2, CUDA_R_16BF 14; CUBLAS_COMPUTE_32F 68, CUBLAS_COMPUTE_32F_FAST_TF32 77.
    assert.deepEqual(GEMM_TYPES, {
      fp32: { dataType: 0, computeType: 68, elementBytes: 4 },
      tf32: { dataType: 0, computeType: 77, elementBytes: 4 },
      fp16: { dataType: 2, computeType: 68, elementBytes: 2 },
      bf16: { dataType: 14, computeType: 68, elementBytes: 2 },
    });
    assert.deepEqual(CUBLAS_OP, { N: 0, T: 1 });
  });
});

// A stand-in libcublas built here. Its functions check the arguments cuda-pipe should pass (the handle it hands out,
// the stream, the workspace, every GEMM argument in order and the scalars behind the pointers) and answer
// CUBLAS_STATUS_INVALID_VALUE (7) on any difference, so the wrapper's wiring is tested without a GPU.
const FAKE_HEADER = '#include <stdint.h>\n#define HANDLE ((void *)0x1234)\n';
const FAKE_FUNCTIONS: Readonly<Record<string, string>> = {
  cublasCreate_v2: 'int cublasCreate_v2(void **handle) { *handle = HANDLE; return 0; }',
  cublasDestroy_v2: 'int cublasDestroy_v2(void *handle) { return handle == HANDLE ? 0 : 7; }',
  cublasSetStream_v2:
    'int cublasSetStream_v2(void *handle, void *stream) { return handle == HANDLE && stream == (void *)0x5000 ? 0 : 7; }',
  cublasSetWorkspace_v2:
    'int cublasSetWorkspace_v2(void *handle, void *ws, uint64_t bytes) ' +
    '{ return handle == HANDLE && ws == (void *)0x6000 && bytes == 1048576 ? 0 : 7; }',
  cublasSetMathMode: 'int cublasSetMathMode(void *handle, int mode) { return handle == HANDLE && mode == 0 ? 0 : 7; }',
  cublasGetVersion_v2:
    'int cublasGetVersion_v2(void *handle, int *version) { *version = 130001; return handle == HANDLE ? 0 : 7; }',
  cublasGetStatusString:
    'const char *cublasGetStatusString(int status) { return status == 7 ? "an invalid value was used as an argument" : "other"; }',
  cublasGemmEx: `int cublasGemmEx(void *handle, int ta, int tb, int m, int n, int k, const float *alpha, void *A, int at, int lda,
      void *B, int bt, int ldb, const float *beta, void *C, int ct, int ldc, int compute, int algo) {
    int ok = handle == HANDLE && ta == 1 && tb == 0 && m == 96 && n == 80 && k == 64 && *alpha == 1.5f && A == (void *)0xA000
      && at == 14 && lda == 64 && B == (void *)0xB000 && bt == 14 && ldb == 64 && *beta == 0.5f && C == (void *)0xC000
      && ct == 14 && ldc == 96 && compute == 68 && algo == -1;
    return ok ? 0 : 7;
  }`,
};

/** Builds the fake libcublas without the functions in `omit`. */
function fakeCublas(omit: readonly string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-fake-cublas-'));
  const source = join(dir, 'fake.c');
  const kept = Object.entries(FAKE_FUNCTIONS)
    .filter(([name]) => !omit.includes(name))
    .map(([, code]) => code);
  writeFileSync(source, [FAKE_HEADER, ...kept].join('\n'));
  const library = join(dir, 'libcublas.so.13');
  execFileSync('cc', ['-shared', '-fPIC', '-o', library, source]);
  return library;
}

const noCompiler = spawnSync('cc', ['--version']).status === 0 ? false : 'no C compiler (cc) to build a fake libcublas';

describe('a libcublas lacking a function cuda-pipe binds', { skip: noCompiler }, () => {
  it('every function cublas.ts binds is in its table of required functions, and nothing else is', () => {
    const bound = Object.values(CUBLAS_PROTOTYPES).map(prototypeName).sort();
    assert.equal(bound.length, 8);
    assert.deepEqual(bound, CUBLAS_LIBRARY.requires.flatMap((r) => r.names).sort());
  });

  it('CUDA_PIPE_CUBLAS naming it is exit 3 naming the file, the function and the CUDA that has it', () => {
    const library = fakeCublas(['cublasGemmEx']);
    const error = loadError({ CUDA_PIPE_CUBLAS: library });
    assert.ok(error instanceof LibraryOverrideError);
    assert.equal(
      error.message,
      `CUDA_PIPE_CUBLAS=${library}: a libcublas that lacks cublasGemmEx (CUDA 8.0 and newer); ` +
        'cuda-pipe needs libcublas from CUDA 11.4 or newer.',
    );
  });

  it('the search skips it with the reason, so a complete one further down can load', () => {
    const older = fakeCublas(['cublasSetWorkspace_v2', 'cublasGetStatusString']);
    assert.throws(
      () => loadFirst(CUBLAS_LIBRARY, [{ path: older, origin: 'CUDA_HOME' }]),
      (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.match(
          error.message,
          new RegExp(
            `${escape(older)} \\(CUDA_HOME\\): loads, but lacks cublasSetWorkspace_v2 \\(CUDA 11\\.4 and newer\\), ` +
              'cublasGetStatusString \\(CUDA 11\\.4 and newer\\); cuda-pipe needs libcublas from CUDA 11\\.4 or newer',
          ),
        );
        return true;
      },
    );
    const complete = fakeCublas();
    assert.equal(
      loadFirst(CUBLAS_LIBRARY, [
        { path: older, origin: 'CUDA_HOME' },
        { path: complete, origin: 'default location' },
      ]).path,
      complete,
    );
  });
});

describe('the cuBLAS wrapper against a stand-in library', { skip: noCompiler }, () => {
  const spec: CublasGemmCall = {
    transA: 'T',
    transB: 'N',
    m: 96,
    n: 80,
    k: 64,
    lda: 64,
    ldb: 64,
    ldc: 96,
    alpha: 1.5,
    beta: 0.5,
    dtype: 'bf16',
  };
  const [a, b, c] = [0xa000n, 0xb000n, 0xc000n] as DevicePtr[];

  function withHandle(body: (cublas: ReturnType<typeof loadCublas>, handle: CublasHandle) => void): void {
    const cublas = loadCublas({ CUDA_PIPE_CUBLAS: fakeCublas() });
    const handle = cublas.create(0x5000n as StreamHandle, 0x6000n as DevicePtr, 1 << 20);
    body(cublas, handle);
    cublas.destroy(handle);
  }

  it('creates a handle on its stream and workspace, reads the version, and passes every GEMM argument in order', () => {
    withHandle((cublas, handle) => {
      assert.equal(handle, 0x1234n);
      assert.equal(cublas.version(handle), 130001);
      const record = cublas.record(handle, spec, a as DevicePtr, b as DevicePtr, c as DevicePtr);
      assert.equal(record.describe, 'bf16 96×80×64 (A T, B N), lda 64 ldb 64 ldc 96');
      assert.equal(record.launch(), 0);
      assert.equal(record.launch(), 0, 'the scalars stay valid for every call');
      record.free();
      record.free();
    });
  });

  it('a failed call is a device failure (exit 4) naming the call, the GEMM, the status and what to check', () => {
    withHandle((cublas, handle) => {
      assert.throws(
        () => cublas.gemm(handle, { ...spec, ldc: 128 }, a as DevicePtr, b as DevicePtr, c as DevicePtr),
        (error: unknown) => {
          assert.ok(error instanceof CublasError);
          assert.equal(error.exitCode, 4);
          assert.equal(
            error.message,
            'cublasGemmEx failed (bf16 96×80×64 (A T, B N), lda 64 ldb 64 ldc 128): ' +
              'CUBLAS_STATUS_INVALID_VALUE (7): an invalid value was used as an argument',
          );
          assert.match(error.hint ?? '', /lda at least the rows of A as stored/);
          return true;
        },
      );
    });
  });

  it('a refused workspace fails creating the handle, naming the call and the size', () => {
    const cublas = loadCublas({ CUDA_PIPE_CUBLAS: fakeCublas() });
    assert.throws(
      () => cublas.create(0x5000n as StreamHandle, 0x6000n as DevicePtr, 4096),
      /^CublasError: cublasSetWorkspace_v2 failed \(4096 bytes\): CUBLAS_STATUS_INVALID_VALUE \(7\)/,
    );
  });
});
