import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { listKernelSources } from '../../src/kernels/catalog.js';
import { compileKernel } from '../../src/kernels/compile.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { cpuTimed } from '../helpers/cpu-time.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';
import { parseKernelSignatures } from '../../src/kernels/signature.js';

describe('extern "C" __global__ signatures', () => {
  it('classifies pointers with their element type and scalars with their width', () => {
    const [sig] = parseKernelSignatures(
      'extern "C" __global__ void k(const float* __restrict__ in, double *out, unsigned long long n, int iters, size_t m, unsigned char c) {}',
    );
    assert.equal(sig?.name, 'k');
    assert.deepEqual(
      sig?.params.map((p) =>
        p.kind === 'pointer' ? `${p.name}:ptr:${p.pointee}:${p.isConst}` : `${p.name}:${p.type}`,
      ),
      ['in:ptr:float32:true', 'out:ptr:float64:false', 'n:uint64', 'iters:int32', 'm:uint64', 'c:uint8'],
    );
  });

  it('finds kernels with launch bounds and skips commented-out and non-extern ones', () => {
    const source = [
      '// extern "C" __global__ void commented(int a) {}',
      '/* extern "C" __global__ void blocked(int a) {} */',
      '__global__ void mangled(int a) {}',
      'extern "C" __global__ void __launch_bounds__(256) bounded(float *x,',
      '                                                      int n) {}',
      'extern "C" __device__ void helper(int a) {}',
    ].join('\n');
    const sigs = parseKernelSignatures(source);
    assert.deepEqual(
      sigs.map((s) => [s.name, s.line, s.params.length]),
      [['bounded', 4, 2]],
    );
  });

  it('parses every shipped kernel into at least one signature', () => {
    const sources = listKernelSources();
    assert.ok(sources.length >= 5);
    for (const source of sources) assert.ok(source.signatures.length >= 1, `${source.path} has no kernels`);
    const names = sources.flatMap((s) => s.signatures.map((sig) => sig.name));
    for (const expected of ['fma_loop', 'saxpy', 'scale', 'row_stencil']) assert.ok(names.includes(expected), expected);
  });
});

function config(args: string, entry = 'scale', source = 'scale.cu') {
  const text =
    `buffers:\n  x: { type: float32, count: 100, role: in }\n  y: { type: float32, count: 100, role: out }\n  d: { type: float64, count: 100, role: out }\n` +
    `kernels:\n  - { source: ${source}, entry: ${entry}, args: ${args} }\n`;
  return parseConfigText(text, join('/tmp', 'cfg.yaml'));
}

function rejection(args: string, entry?: string, source?: string): UsageError {
  const { config: c, locate } = config(args, entry, source);
  try {
    resolveKernels(c, locate);
  } catch (error) {
    assert.ok(error instanceof UsageError);
    return error;
  }
  assert.fail('expected the kernel arguments to be rejected');
}

describe('kernel arguments checked against the signature before anything runs', () => {
  it('accepts matching arguments and takes the chunk count type from the parameter', () => {
    const { config: c, locate } = config('[{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }]');
    const [kernel] = resolveKernels(c, locate);
    assert.deepEqual(kernel?.args[2], { kind: 'chunk-elements', type: 'uint64' });
    assert.match(kernel?.sourcePath ?? '', /kernels\/scale\.cu$/);
  });

  it('rejects a wrong argument count, showing the signature', () => {
    assert.match(
      rejection('[{ buffer: x }, { buffer: y }]').message,
      /kernel "scale" \(scale\(const float\* __restrict__ in, .*\) takes 4 arguments, the config gives 2/,
    );
  });

  it('rejects a scalar given for a pointer, naming kernel and argument', () => {
    const error = rejection('[{ buffer: x }, { float32: 1 }, { chunk: elements }, { float32: 2 }]');
    assert.match(
      error.message,
      /argument 2 \(float\* __restrict__ out\) is a pointer, but the config passes a float32 scalar/,
    );
  });

  it("rejects a buffer whose element type differs from the pointer's", () => {
    assert.match(
      rejection('[{ buffer: x }, { buffer: d }, { chunk: elements }, { float32: 2 }]').message,
      /points to float32, but buffer "d" holds float64/,
    );
  });

  it('rejects a scalar of the wrong type and shows how to write it', () => {
    const error = rejection('[{ buffer: x }, { buffer: y }, { chunk: elements }, { float64: 2 }]');
    assert.match(error.message, /is float32, but the config gives a float64/);
    assert.match(error.hint ?? '', /\{ float32: 2 \}/);
  });

  it('lists the kernels in the file when the entry is not there', () => {
    const error = rejection('[]', 'scal');
    assert.match(error.message, /no kernel "scal" in .*scale\.cu/);
    assert.match(error.hint ?? '', /scale, copy32/);
  });

  it('names a missing kernel source and lists the built-in ones', () => {
    const error = rejection('[]', 'k', 'missing.cu');
    assert.match(error.message, /kernel source "missing\.cu" not found/);
    assert.match(error.hint ?? '', /fma_loop\.cu/);
  });
});

/** Each parameter as "name:pointer:pointee:depth" or "name:type", for compact assertions. */
const shapes = (source: string, options: readonly string[] = []) =>
  parseKernelSignatures(source, options).map(
    (s) =>
      `${s.name}(${s.params.map((p) => (p.kind === 'pointer' ? `${p.name}:${p.pointee}${'*'.repeat(p.depth)}` : `${p.name}:${p.type}`)).join(', ')})`,
  );

describe('kernel sources read by a C tokenizer', () => {
  it('reads kernels inside an extern "C" { } block, declared or defined, and skips a C++ one', () => {
    const source = [
      'extern "C" {',
      '__global__ void a(float *x, int n);',
      '__global__ void __launch_bounds__(128) b(const float *in, float *out) { if (in) { out[0] = in[0]; } }',
      '__device__ float helper(float v) { return v; }',
      '}',
      'extern "C++" { __global__ void cpp(float *x) {} }',
      'namespace ns { extern "C" __global__ void c(double *d) {} }',
    ].join('\n');
    assert.deepEqual(shapes(source), ['a(x:float32*, n:int32)', 'b(in:float32*, out:float32*)', 'c(d:float64*)']);
  });

  it('reads array parameters as the pointers they are, and skips default arguments', () => {
    assert.deepEqual(
      shapes(
        'extern "C" __global__ void k(const float in[], float out[64], unsigned long long n = (1ull << 20), int f = max(1, 2)) {}',
      ),
      ['k(in:float32*, out:float32*, n:uint64, f:int32)'],
    );
  });

  it('a "/*" or "//" inside a string or a character does not hide the kernels after it', () => {
    const source =
      'static const char *open = "/*"; static const char c = \'"\';\n// a "quote\nextern "C" __global__ void k(float *x) { const char *s = "*/ } {"; }\nextern "C" __global__ void after(int n) {}';
    assert.deepEqual(shapes(source), ['k(x:float32*)', 'after(n:int32)']);
  });

  it('counts pointer depth, so float** is not a float32 buffer', () => {
    assert.deepEqual(shapes('extern "C" __global__ void k(float **rows, float * const *cols, float (*fn)(float)) {}'), [
      'k(rows:float32**, cols:float32**, fn:null)',
    ]);
  });

  it('follows typedefs and using-declarations to the type they name', () => {
    assert.deepEqual(
      shapes(
        'typedef float real;\nusing index_t = unsigned long long;\nextern "C" __global__ void k(real *x, index_t n) {}',
      ),
      ['k(x:float32*, n:uint64)'],
    );
  });

  it('keeps the line of each kernel across line splices and comments', () => {
    const source = '#define A \\\n  1\n/* two\n lines */\nextern "C" __global__ void k(float *x,\n  int n) {}';
    assert.equal(parseKernelSignatures(source)[0]?.line, 5);
  });

  it('takes the #ifdef / #else branch the -D options select, as the compiler does', () => {
    const source =
      '#ifdef USE_DOUBLE\nextern "C" __global__ void k(double *x) {}\n#else\nextern "C" __global__ void k(float *x) {}\n#endif';
    assert.deepEqual(shapes(source), ['k(x:float32*)']);
    assert.deepEqual(shapes(source, ['-DUSE_DOUBLE']), ['k(x:float64*)']);
    assert.deepEqual(shapes(source, ['--define-macro=USE_DOUBLE=1', '-UUSE_DOUBLE']), ['k(x:float32*)']);
    assert.deepEqual(
      shapes(
        '#define WIDE 1\n#if WIDE && !defined(NARROW)\nextern "C" __global__ void k(unsigned long long n) {}\n#elif 1\nextern "C" __global__ void k(int n) {}\n#endif',
      ),
      ['k(n:uint64)'],
    );
  });

  it('a kernel declared differently under a condition it cannot decide is refused, naming both declarations', () => {
    const source =
      '#if __CUDA_ARCH__ >= 800\nextern "C" __global__ void k(double *x)\n#else\nextern "C" __global__ void k(float *x)\n#endif\n{ }';
    const [signature] = parseKernelSignatures(source);
    assert.match(
      signature?.ambiguity ?? '',
      /declared with different parameters under conditions cuda-pipe cannot decide without the compiler \(line 2 under #if __CUDA_ARCH__ >= 800 \(line 1\): k\(double \*x\); line 4 under #else \(line 3\) of #if __CUDA_ARCH__ >= 800: k\(float \*x\)\)/,
    );
    const same =
      '#if __CUDA_ARCH__ >= 800\nextern "C" __global__ void k(float *x) {}\n#else\nextern "C" __global__ void k(float *y) {}\n#endif';
    assert.equal(parseKernelSignatures(same)[0]?.ambiguity, null);
    const inside =
      'extern "C" __global__ void k(\n#if __CUDA_ARCH__ >= 800\n double *x\n#else\n float *x\n#endif\n) {}';
    assert.match(
      parseKernelSignatures(inside)[0]?.ambiguity ?? '',
      /its parameter list changes with #if __CUDA_ARCH__ >= 800 \(line 2\)/,
    );
  });
});

describe('config kernels whose source is hostile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-kernels-'));
  let n = 0;
  function resolveSource(source: string, args: string, options = '[]') {
    const path = join(dir, `k${n++}.cu`);
    writeFileSync(path, source);
    const text =
      `buffers:\n  x: { type: float32, count: 100, role: in }\n  y: { type: float32, count: 100, role: out }\n` +
      `kernels:\n  - { source: ${path}, entry: k, options: ${options}, args: ${args} }\n`;
    const { config: c, locate } = parseConfigText(text, join(dir, 'cfg.yaml'));
    return resolveKernels(c, locate);
  }
  const refusal = (source: string, args: string, options?: string): UsageError => {
    try {
      resolveSource(source, args, options);
    } catch (error) {
      assert.ok(error instanceof UsageError, String(error));
      return error;
    }
    assert.fail('expected a refusal');
  };

  it('refuses a float32 buffer for a float** parameter', () => {
    const error = refusal(
      'extern "C" __global__ void k(float **x, unsigned long long n) {}',
      '[{ buffer: x }, { chunk: elements }]',
    );
    assert.match(
      error.message,
      /argument 1 \(float \*\*x\) is a pointer to pointers, but a buffer is passed as a pointer to its elements/,
    );
  });

  it("refuses a kernel whose declaration the compiler's branch decides, and says which kernels the options hide", () => {
    const ambiguous =
      '#if __CUDA_ARCH__ >= 800\nextern "C" __global__ void k(double *x) {}\n#else\nextern "C" __global__ void k(float *x) {}\n#endif';
    assert.match(
      refusal(ambiguous, '[{ buffer: x }]').message,
      /kernel "k" in \S+ cannot be checked: it is declared with different parameters/,
    );
    const hidden = '#ifdef WITH_K\nextern "C" __global__ void k(float *x) {}\n#endif';
    const error = refusal(hidden, '[{ buffer: x }]');
    assert.match(
      error.message,
      /no kernel "k" in \S+ as the compiler sees it: it is declared at line 2 under #ifdef WITH_K \(line 1\), which these options rule out/,
    );
    assert.equal(resolveSource(hidden, '[{ buffer: x }]', '[-DWITH_K]')[0]?.entry, 'k');
  });

  describe('checked against the PTX NVRTC emits', { skip: nvrtcSkipReason() ?? false }, () => {
    const env = { ...process.env, CUDA_PIPE_CACHE_DIR: join(dir, 'cache') };

    it('passes a kernel whose source and PTX agree, on a compile and on a cache hit', async () => {
      const [kernel] = resolveSource(
        'extern "C" { __global__ void k(const float in[], float *out, unsigned long long n = 1) { out[0] = in[0] + n; } }',
        '[{ buffer: x }, { buffer: y }, { chunk: elements }]',
      );
      assert.ok(kernel);
      assert.deepEqual((await compileKernel(kernel, 'sm_90', env)).entries, { k: ['u64', 'u64', 'u64'] });
      assert.equal((await compileKernel(kernel, 'sm_90', env)).cached, true);
    });

    it("refuses a kernel whose parameters a macro changed behind the reader's back", async () => {
      const [kernel] = resolveSource(
        '#define float double\nextern "C" __global__ void k(float *x, float a) { x[0] = a; }',
        '[{ buffer: x }, { float32: 2 }]',
      );
      assert.ok(kernel);
      await assert.rejects(compileKernel(kernel, 'sm_90', env), (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.match(
          error.message,
          /parameter 2 \(float a\) reads as 4 bytes of float, but NVRTC compiled it as \.f64 \(8 bytes\)/,
        );
        return true;
      });
    });

    it('refuses a kernel the compiler did not emit with these options, or with another parameter count', async () => {
      const [kernel] = resolveSource(
        '#define EXTRA , int extra\nextern "C" __global__ void k(float *x EXTRA) {}',
        '[{ buffer: x }]',
      );
      assert.ok(kernel);
      await assert.rejects(
        compileKernel(kernel, 'sm_90', env),
        /the source reads as 1 parameters, but NVRTC compiled 2 \(u64, u32\)/,
      );
    });
  });
});

describe('kernel sources built to make the reader slow', () => {
  const quick = (source: string) => {
    const { value: signatures, ms } = cpuTimed(() => parseKernelSignatures(source));
    // Quadratic work at these sizes takes minutes of CPU; the bound is loose for a shared machine.
    assert.ok(ms < 5_000, `took ${ms.toFixed(0)} ms of CPU`);
    return signatures;
  };

  it('reads nested #if, nested extern "C" blocks, repeated declarations and typedef chains in linear time', () => {
    assert.deepEqual(
      quick(`${'#if 1\n'.repeat(50_000)}${';'.repeat(250_000)}\nextern "C" __global__ void k(int n) {}\n`).map(
        (s) => s.name,
      ),
      ['k'],
    );
    assert.equal(
      quick(`${'extern "C" { int a; '.repeat(25_000)}__global__ void k(float *x) {}${'}'.repeat(25_000)}`)[0]?.name,
      'k',
    );
    assert.equal(quick('extern "C" __global__ void k(float *x);\n'.repeat(20_000))[0]?.params.length, 1);
    const chain = Array.from({ length: 20 }, (_, i) => `typedef T${i} T${i} T${i} T${i} T${i + 1};`).join('\n');
    assert.equal(quick(`typedef float T0;\n${chain}\nextern "C" __global__ void k(T20 *x) {}`)[0]?.name, 'k');
    assert.equal(
      quick(`#if ${'('.repeat(50_000)}1${')'.repeat(50_000)}\nextern "C" __global__ void k(int n) {}\n#endif`).length,
      1,
    );
  });
});

describe('the kernels listing', () => {
  it('says which kernels cannot be used and which the options hide', async () => {
    const { runCli } = await import('../helpers/cli.js');
    const path = join(mkdtempSync(join(tmpdir(), 'cuda-pipe-list-')), 'branches.cu');
    writeFileSync(
      path,
      '#ifdef WIDE\nextern "C" __global__ void w(double *x) {}\n#endif\n#if __CUDA_ARCH__ >= 800\nextern "C" __global__ void k(double *x) {}\n#else\nextern "C" __global__ void k(float *x) {}\n#endif\n',
    );
    const { code, stdout } = runCli(['kernels', path]);
    assert.equal(code, 0);
    assert.match(
      stdout,
      /\n {2}k\(double \*x\) \(cannot be used: it is declared with different parameters under conditions cuda-pipe cannot decide without the compiler/,
    );
    assert.match(stdout, /\n {2}w: only under #ifdef WIDE \(line 1\), off without -D options\n/);
  });
});
