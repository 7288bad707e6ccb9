import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { listKernelSources } from '../../src/kernels/catalog.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { parseKernelSignatures } from '../../src/kernels/signature.js';

describe('extern "C" __global__ signatures', () => {
  it('classifies pointers with their element type and scalars with their width', () => {
    const [sig] = parseKernelSignatures('extern "C" __global__ void k(const float* __restrict__ in, double *out, unsigned long long n, int iters, size_t m, unsigned char c) {}');
    assert.equal(sig?.name, 'k');
    assert.deepEqual(sig?.params.map((p) => (p.kind === 'pointer' ? `${p.name}:ptr:${p.pointee}:${p.isConst}` : `${p.name}:${p.type}`)),
      ['in:ptr:float32:true', 'out:ptr:float64:false', 'n:uint64', 'iters:int32', 'm:uint64', 'c:uint8']);
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
    assert.deepEqual(sigs.map((s) => [s.name, s.line, s.params.length]), [['bounded', 4, 2]]);
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
  const text = `buffers:\n  x: { type: float32, count: 100, role: in }\n  y: { type: float32, count: 100, role: out }\n  d: { type: float64, count: 100, role: out }\n` +
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
    assert.match(rejection('[{ buffer: x }, { buffer: y }]').message, /kernel "scale" \(scale\(const float\* __restrict__ in, .*\) takes 4 arguments, the config gives 2/);
  });

  it('rejects a scalar given for a pointer, naming kernel and argument', () => {
    const error = rejection('[{ buffer: x }, { float32: 1 }, { chunk: elements }, { float32: 2 }]');
    assert.match(error.message, /argument 2 \(float\* __restrict__ out\) is a pointer, but the config passes a float32 scalar/);
  });

  it('rejects a buffer whose element type differs from the pointer\'s', () => {
    assert.match(rejection('[{ buffer: x }, { buffer: d }, { chunk: elements }, { float32: 2 }]').message, /points to float32, but buffer "d" holds float64/);
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
