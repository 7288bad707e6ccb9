import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LibraryOverrideError } from '../../cuda/ffi.js';
import { resolveLibraryFile } from '../../cuda/locate.js';
import { EnvironmentError } from '../../errors.js';
import { prototypeName } from '../blas/library.js';
import { CUBLASLT_LIBRARY, CUBLASLT_PROTOTYPES, loadCublasLt } from './cublaslt.js';

// libcublasLt is checked as it loads against the rows the matmul kind declares, as libcudart is against the core's.

/** A stand-in libcublasLt built here: every function the kind binds but `omit`, each answering 0. */
function fakeCublasLt(omit: readonly string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-fake-cublaslt-'));
  const source = join(dir, 'fake.c');
  const names = CUBLASLT_LIBRARY.requires.map((r) => r.names[0] as string).filter((name) => !omit.includes(name));
  const body = (name: string) =>
    name === 'cublasLtGetStatusString'
      ? 'const char *cublasLtGetStatusString(int s) { return "fake"; }'
      : `long ${name}(void) { return 0; }`;
  writeFileSync(source, names.map(body).join('\n'));
  const library = join(dir, 'libcublasLt.so.13');
  execFileSync('cc', ['-shared', '-fPIC', '-o', library, source]);
  return library;
}

const noCompiler =
  spawnSync('cc', ['--version']).status === 0 ? false : 'no C compiler (cc) to build a fake libcublasLt';

describe("libcublasLt checked against the matmul kind's rows", { timeout: 60_000 }, () => {
  it('every function cublaslt.ts binds is in its table of required functions, and nothing else is', () => {
    const bound = Object.values(CUBLASLT_PROTOTYPES).map(prototypeName).sort();
    assert.equal(bound.length, 14);
    assert.deepEqual(bound, CUBLASLT_LIBRARY.requires.flatMap((r) => r.names).sort());
  });

  it('CUDA_PIPE_CUBLASLT naming one that lacks a function is exit 3 naming the file, the function and the CUDA that has it', {
    skip: noCompiler,
  }, () => {
    const library = fakeCublasLt(['cublasLtGetStatusString']);
    assert.throws(
      () => loadCublasLt({ CUDA_PIPE_CUBLASLT: library }),
      (error: unknown) => {
        assert.ok(error instanceof LibraryOverrideError);
        assert.equal(error.exitCode, 3);
        assert.equal(
          error.message,
          `CUDA_PIPE_CUBLASLT=${library}: a libcublasLt that lacks cublasLtGetStatusString (CUDA 11.4 and newer); ` +
            'cuda-pipe needs libcublasLt from CUDA 11.4 or newer.',
        );
        return true;
      },
    );
  });

  it('loads a complete one, its functions bound by name', { skip: noCompiler }, () => {
    const library = fakeCublasLt();
    const binding = loadCublasLt({ CUDA_PIPE_CUBLASLT: library });
    assert.equal(binding.path, library);
    assert.equal(binding.statusString(7), 'fake');
    assert.equal(binding.create(new BigUint64Array(1)), 0);
  });

  const present = resolveLibraryFile(CUBLASLT_LIBRARY, {}, existsSync, []);
  it('a search that finds nothing is exit 3 naming the places and the variable that steers it', {
    skip: present ? `libcublasLt is here (${present})` : false,
  }, () => {
    assert.throws(
      () => loadCublasLt({ CUDA_PATH: '/nowhere/cuda', LD_LIBRARY_PATH: '' }),
      (error: unknown) => {
        if (!(error instanceof EnvironmentError) || error instanceof LibraryOverrideError) return false;
        assert.match(
          error.message,
          /^Could not load cuBLASLt \(libcublasLt\)\. Tried:\n {2}\/nowhere\/cuda\/lib64\/libcublasLt\.so\.13 \(CUDA_PATH\): /,
        );
        assert.match(error.hint ?? '', /CUDA_PIPE_CUBLASLT to the library file itself/);
        return true;
      },
    );
  });
});
