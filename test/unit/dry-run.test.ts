import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkConfigKernels } from '../../src/api/kernels.js';
import { kernelsLine } from '../../src/cli/run.js';
import { parseConfigText } from '../../src/config/load.js';
import { LibraryOverrideError } from '../../src/cuda/load.js';
import type { Nvrtc } from '../../src/cuda/nvrtc.js';
import { EnvironmentError } from '../../src/errors.js';
import type { CompiledModule, CompileRequest } from '../../src/kernels/compile.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-dry-run-'));
const cache = { CUDA_PIPE_CACHE_DIR: join(dir, 'cache') };

function config(name: string, kernelSource: string): string {
  writeFileSync(join(dir, `${name}.cu`), kernelSource);
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    `buffers:
  x: { type: float32, count: 1024, role: in }
  y: { type: float32, count: 1024, role: out }
kernels:
  - { source: ${name}.cu, entry: twice, args: [{ buffer: x }, { buffer: y }, { chunk: elements }] }
pipeline: { chunks: 4, streams: 2 }
`,
  );
  return path;
}
const GOOD =
  'extern "C" __global__ void twice(const float *x, float *y, unsigned long long n)\n{ unsigned long long i = threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }\n';
const BROKEN =
  'extern "C" __global__ void twice(const float *x, float *y, unsigned long long n)\n{\n  y[0] = undefined_name;\n}\n';

describe("run --dry-run compiles the config's kernels", { skip: nvrtcSkipReason() ?? false }, () => {
  it("exits 2 on a compile error, with NVRTC's log naming the file and line", () => {
    const path = config('broken', BROKEN);
    const { code, stdout, stderr } = runCli(['run', path, '--dry-run'], cache);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(stderr, /^cuda-pipe: NVRTC [\d.]+ could not compile \S+broken\.cu for sm_\d+:\n/);
    assert.match(
      stderr,
      new RegExp(
        `${join(dir, 'broken.cu').replace(/[.]/g, '\\.')}\\(3\\): error: identifier "undefined_name" is undefined`,
      ),
    );
  });

  it('compiles for the newest architecture NVRTC supports, or --arch, through the cache', () => {
    const path = config('good', GOOD);
    const first = runCli(['run', path, '--dry-run', '--arch', 'sm_80'], cache);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^ {2}1 kernel source compiled for sm_80 \(--arch\) with NVRTC [\d.]+$/m);
    const again = runCli(['run', path, '--dry-run'], cache);
    assert.match(
      again.stdout,
      /^ {2}1 kernel source compiled for sm_\d+ \(the newest NVRTC supports\) with NVRTC [\d.]+$/m,
    );
    assert.match(again.stdout, /^mode serial: /m, 'and the plan');
    const cached = runCli(['run', path, '--dry-run', '--arch', 'sm_80'], cache);
    assert.match(cached.stdout, /compiled for sm_80 \(--arch\) with NVRTC [\d.]+, 1 from the cache$/m);
  });
});

describe("the dry run's compile check", () => {
  const { config: parsed, locate } = parseConfigText(
    `buffers:
  x: { type: float32, count: 64, role: in }
  y: { type: float32, count: 64, role: out }
kernels:
  - { name: a, source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }
  - { name: b, source: scale.cu, entry: scale, args: [{ buffer: y }, { buffer: y }, { chunk: elements }, { float32: 3 }] }
`,
    '/cfg/two.yaml',
  );
  const kernels = resolveKernels(parsed, locate);
  const nvrtc = { supportedArchs: () => [75, 80, 90] } as unknown as Nvrtc;

  it('without NVRTC says it could not check the kernels, and the plan still prints', async () => {
    const missing = () => {
      throw new EnvironmentError('libnvrtc could not be loaded; tried: libnvrtc.so.13, libnvrtc.so.12\nmore');
    };
    const check = await checkConfigKernels(kernels, undefined, {
      openNvrtc: missing,
      compile: () => {
        throw new Error('not reached');
      },
    });
    assert.deepEqual(check, {
      checked: false,
      reason: 'libnvrtc could not be loaded; tried: libnvrtc.so.13, libnvrtc.so.12',
    });
    assert.equal(
      kernelsLine(check),
      'kernels not compiled, so not checked: libnvrtc could not be loaded; tried: libnvrtc.so.13, libnvrtc.so.12 ' +
        '(`cuda-pipe kernels --check` compiles them where NVRTC is installed)',
    );
  });

  it('without NVRTC names the library it could not load, not the loader\'s dangling "Tried:"', async () => {
    const missing = () => {
      throw new EnvironmentError('Could not load NVRTC (libnvrtc). Tried:\n  libnvrtc.so.13: not found');
    };
    const check = await checkConfigKernels(kernels, undefined, {
      openNvrtc: missing,
      compile: () => assert.fail('not reached'),
    });
    assert.deepEqual(check, { checked: false, reason: 'Could not load NVRTC (libnvrtc).' });
  });

  it('a config of library calls only (gemm.yaml) says there is no kernel source, without loading NVRTC', async () => {
    const check = await checkConfigKernels([], undefined, {
      openNvrtc: () => assert.fail('NVRTC loaded for no source'),
      compile: () => assert.fail('not reached'),
    });
    assert.equal(kernelsLine(check), 'no kernel sources to compile: every compute step is a library call');
    const { code, stdout } = runCli(['run', join(packageRoot(), 'configs', 'gemm.yaml'), '--dry-run']);
    assert.equal(code, 0);
    assert.match(stdout, /^ {2}no kernel sources to compile: every compute step is a library call$/m);
    assert.doesNotMatch(stdout, /with NVRTC\s*$|Tried:\s*\(/m);
    // Its products write scratch buffers only: a mode is checked for faults, and no output is compared.
    assert.match(stdout, /^mode serial: .*; it will run once checked \(no output to compare\)$/m);
    assert.doesNotMatch(stdout, /outputs (will be )?verified/);
  });

  it('a wrong CUDA_PIPE_NVRTC is still an error, not a skipped check', async () => {
    const wrong = () => {
      throw new LibraryOverrideError('CUDA_PIPE_NVRTC=/x: no such file there.');
    };
    await assert.rejects(
      checkConfigKernels(kernels, undefined, {
        openNvrtc: wrong,
        compile: () => {
          throw new Error('not reached');
        },
      }),
      LibraryOverrideError,
    );
  });

  it('compiles each source once for the newest architecture, and refuses an --arch NVRTC lacks', async () => {
    const requests: CompileRequest[] = [];
    const compile = (request: CompileRequest) => {
      requests.push(request);
      return Promise.resolve({
        cached: true,
        nvrtcVersion: '12.8',
        entries: { scale: ['u64', 'u64', 'u64', 'f32'] },
      } as unknown as CompiledModule);
    };
    const check = await checkConfigKernels(kernels, undefined, { openNvrtc: () => nvrtc, compile });
    assert.deepEqual(check, {
      checked: true,
      arch: 'sm_90',
      why: 'the newest NVRTC supports',
      nvrtc: '12.8',
      sources: 1,
      cached: 1,
    });
    assert.deepEqual(
      requests.map((r) => r.arch),
      ['sm_90'],
    );
    await assert.rejects(
      checkConfigKernels(kernels, 'sm_100', { openNvrtc: () => nvrtc, compile }),
      /^UsageError: --arch sm_100: this NVRTC compiles for sm_75, sm_80, sm_90\.$/m,
    );
  });

  it('--ops and --arch outside a dry run are refused before any GPU work', () => {
    const { code, stderr } = runCli(['run', '--ops']);
    assert.equal(code, 2);
    assert.equal(
      stderr,
      'cuda-pipe: --ops only applies with --dry-run: a run compiles for its device and prints no plan.\n',
    );
  });
});
