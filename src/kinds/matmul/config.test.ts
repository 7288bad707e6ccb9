import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StepBuffer } from '../api/index.js';
import { matmulConfig } from './config.js';
import type { MatmulSpec } from './spec.js';

// The inference pipeline's buffers, as config/load.ts hands them to a step: 8,192 items.
const buffer = (name: string, type: string, role: string, itemSize: number, elements: number): StepBuffer => ({
  name,
  type,
  role,
  elementBytes: type === 'float32' ? 4 : type === 'uint8' ? 1 : 2,
  itemSize,
  elements,
});
const BUFFERS: readonly StepBuffer[] = [
  buffer('x', 'bfloat16', 'in', 4096, 8192 * 4096),
  buffer('w1', 'bfloat16', 'resident', 1, 4096 * 4096),
  buffer('b1', 'bfloat16', 'resident', 1, 4096),
  buffer('b32', 'float32', 'resident', 1, 4096),
  buffer('h', 'bfloat16', 'scratch', 4096, 8192 * 4096),
  buffer('x8', 'uint8', 'in', 4096, 8192 * 4096),
  buffer('w8', 'uint8', 'resident', 1, 4096 * 4096),
  buffer('hh', 'float16', 'scratch', 4096, 8192 * 4096),
];

const LAYER = { a: 'x', b: 'w1', c: 'h', n: 4096, k: 4096, dtype: 'bf16', transB: true };

/** The entry through the kind's schema and resolution, as config/load.ts runs them. */
function resolve(
  matmul: Record<string, unknown>,
  buffers = BUFFERS,
): { spec: MatmulSpec } | { error: string; path: readonly (string | number)[] } {
  const parsed = matmulConfig.schema.safeParse({ name: 'layer1', matmul });
  assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
  // The kind's own resolution, whose spec the core carries as unknown.
  return matmulConfig.resolve(parsed.data, buffers) as
    | { spec: MatmulSpec }
    | { error: string; path: readonly (string | number)[] };
}

function refused(
  matmul: Record<string, unknown>,
  buffers = BUFFERS,
): { error: string; path: readonly (string | number)[] } {
  const resolved = resolve(matmul, buffers);
  assert.ok('error' in resolved, `should be refused: ${JSON.stringify(resolved)}`);
  return resolved;
}

describe('a matmul entry of kernels:', () => {
  it('resolves to its operands, with the epilogue, transB, alpha and beta defaulted, and m left to the chunk', () => {
    const resolved = resolve({ a: 'x', b: 'w1', c: 'h', n: 4096, k: 4096, dtype: 'bf16' });
    assert.ok('spec' in resolved);
    const expected: MatmulSpec = {
      a: { buffer: 'x', itemSize: 4096, elementBytes: 2 },
      b: { buffer: 'w1', itemSize: null, elementBytes: 2 },
      c: { buffer: 'h', itemSize: 4096, elementBytes: 2 },
      bias: null,
      m: null,
      n: 4096,
      k: 4096,
      dtype: 'bf16',
      output: 'bfloat16',
      epilogue: 'none',
      transB: false,
      alpha: 1,
      beta: 0,
    };
    assert.deepEqual(resolved.spec, expected);
    assert.equal(matmulConfig.key, 'matmul');
    assert.equal(
      matmulConfig.label(matmulConfig.schema.parse({ matmul: { a: 'x', b: 'w1', c: 'h', n: 1, k: 1, dtype: 'bf16' } })),
      'matmul',
      'the label without a name',
    );
  });

  it('resolves a bias epilogue with its bias vector, and fp8 inputs in uint8 buffers with a float16 output', () => {
    const biased = resolve({ ...LAYER, bias: 'b1', epilogue: 'bias-gelu' });
    assert.ok('spec' in biased);
    assert.deepEqual([biased.spec.bias, biased.spec.epilogue], [{ buffer: 'b1', elementBytes: 2 }, 'bias-gelu']);
    const fp8 = resolve({ a: 'x8', b: 'w8', c: 'hh', n: 4096, k: 4096, dtype: 'fp8', transB: true });
    assert.ok('spec' in fp8);
    assert.deepEqual([fp8.spec.a.elementBytes, fp8.spec.output], [1, 'float16']);
  });

  it('refuses unknown fields, an unknown epilogue or dtype, and sizes out of range, at the schema', () => {
    const fields = (matmul: Record<string, unknown>) => {
      const parsed = matmulConfig.schema.safeParse({ matmul });
      assert.ok(!parsed.success);
      return parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.code}`);
    };
    assert.deepEqual(fields({ ...LAYER, tranB: true }), ['matmul: unrecognized_keys']);
    assert.deepEqual(fields({ ...LAYER, epilogue: 'swish' }), ['matmul.epilogue: invalid_value']);
    assert.deepEqual(fields({ ...LAYER, dtype: 'fp32' }), ['matmul.dtype: invalid_value']);
    assert.deepEqual(fields({ ...LAYER, k: 0 }), ['matmul.k: too_small']);
    assert.deepEqual(fields({ ...LAYER, n: 2 ** 31 }), ['matmul.n: too_big']);
  });

  it('refuses an operand that names no buffer, naming the field and the buffers there are', () => {
    const { error, path } = refused({ ...LAYER, b: 'weights' });
    assert.match(error, /^matmul\.b names no buffer "weights" \(buffers: x, w1, b1, b32, h, x8, w8, hh\)$/);
    assert.deepEqual(path, ['matmul', 'b']);
  });

  it("refuses operands of another type than the dtype's, and says fp8's inputs are raw bytes", () => {
    assert.deepEqual(refused({ ...LAYER, c: 'hh' }), {
      error: 'matmul.c: buffer "hh" holds float16, but dtype bf16 needs bfloat16',
      path: ['matmul', 'c'],
    });
    assert.deepEqual(refused({ ...LAYER, dtype: 'fp8' }), {
      error: `matmul.a: buffer "x" holds bfloat16, but dtype fp8 needs uint8 (fp8's e4m3 values as raw bytes)`,
      path: ['matmul', 'a'],
    });
    assert.match(
      refused({ a: 'x8', b: 'w8', c: 'b32', n: 4096, k: 4096, dtype: 'fp8', transB: true }).error,
      /matmul\.c: buffer "b32" holds float32, but dtype fp8 needs bfloat16 or float16/,
    );
  });

  it('refuses A or C whose items are not k or n elements long, naming the itemSize to give', () => {
    assert.deepEqual(refused({ ...LAYER, k: 1024 }), {
      error: 'matmul.a: buffer "x" has itemSize 4096, but a row of A is k = 1024 elements; give "x" itemSize: 1024',
      path: ['matmul', 'a'],
    });
    assert.equal(
      refused({ ...LAYER, n: 1000 }).error,
      'matmul.c: buffer "h" has itemSize 4096, but a row of C is n = 1000 elements; give "h" itemSize: 1000',
    );
  });

  it('refuses a bias epilogue without a bias, and a bias without one', () => {
    assert.deepEqual(refused({ ...LAYER, epilogue: 'bias-relu' }), {
      error: 'epilogue bias-relu adds a bias: give matmul.bias, a resident buffer of n = 4096 bfloat16 values',
      path: ['matmul', 'bias'],
    });
    assert.deepEqual(refused({ ...LAYER, epilogue: 'relu', bias: 'b1' }), {
      error:
        'bias "b1" is given, but epilogue relu adds none: use epilogue bias, bias-relu or bias-gelu, or remove bias',
      path: ['matmul', 'bias'],
    });
  });

  it("refuses a bias that is missing, of another type than C's, chunked, or not n long", () => {
    const biased = { ...LAYER, epilogue: 'bias' };
    assert.match(refused({ ...biased, bias: 'bias' }).error, /^matmul\.bias names no buffer "bias"/);
    assert.equal(
      refused({ ...biased, bias: 'b32' }).error,
      `matmul.bias: buffer "b32" holds float32, but the epilogue adds a bias of C's type, bfloat16`,
    );
    const chunked = [...BUFFERS, buffer('bc', 'bfloat16', 'in', 1, 8192)];
    assert.equal(
      refused({ ...biased, bias: 'bc' }, chunked).error,
      'matmul.bias: buffer "bc" is chunked (role in), but every chunk adds the same bias: give it role: resident',
    );
    const long = [...BUFFERS, buffer('b2', 'bfloat16', 'resident', 1, 4097)];
    assert.deepEqual(refused({ ...biased, bias: 'b2' }, long), {
      error:
        'matmul.bias: buffer "b2" holds 4097 elements, but the bias is one per column of C, n = 4096; give it count: 4096',
      path: ['matmul', 'bias'],
    });
  });

  it('refuses a C that is also A or B, which cuBLASLt would overwrite while reading it', () => {
    const square = [...BUFFERS, buffer('w', 'bfloat16', 'resident', 1, 8192 * 4096)];
    assert.deepEqual(refused({ ...LAYER, a: 'x', b: 'w', c: 'x' }, square), {
      error: 'C names "x", which is also A: cuBLASLt would overwrite A while reading it; give C a buffer of its own',
      path: ['matmul', 'c'],
    });
    assert.match(refused({ ...LAYER, a: 'x', b: 'w', c: 'w' }, square).error, /C names "w", which is also B/);
  });

  it('refuses fp8 without transB, the only layout its kernels take', () => {
    assert.deepEqual(refused({ a: 'x8', b: 'w8', c: 'hh', n: 4096, k: 4096, dtype: 'fp8' }), {
      error:
        'dtype fp8 needs transB: true: cuBLASLt multiplies fp8 only with B stored as Bᵀ (n rows of k), as a Linear layer stores its weights',
      path: ['matmul', 'transB'],
    });
  });

  it('refuses resident operands short of the product, and m with chunked rows', () => {
    const shortB = [...BUFFERS.filter((b) => b.name !== 'w1'), buffer('w1', 'bfloat16', 'resident', 1, 4096 * 4095)];
    assert.deepEqual(refused(LAYER, shortB), {
      error:
        'matmul.b: resident buffer "w1" holds 16773120 elements, but the product needs k × n = 4096 × 4096, 16777216 elements',
      path: ['matmul', 'b'],
    });
    const residentA = [...BUFFERS, buffer('ra', 'bfloat16', 'resident', 1, 4096 * 4096)];
    assert.equal(
      refused({ ...LAYER, a: 'ra' }, residentA).error,
      'matmul.a: resident buffer "ra" holds 16777216 elements, but the product needs 8192 rows (every item, as the serial mode runs them) of k = 4096, 33554432 elements',
    );
    assert.deepEqual(refused({ ...LAYER, m: 64 }), {
      error: `m is the row count of a resident A and C, but "x" is chunked: its rows are the chunk's items; remove m`,
      path: ['matmul', 'm'],
    });
  });

  it('refuses a chunked B whose items are shorter than a whole k × n', () => {
    const streamed = [...BUFFERS, buffer('ws', 'bfloat16', 'in', 4096, 8192 * 4096)];
    assert.equal(
      refused({ ...LAYER, b: 'ws' }, streamed).error,
      'matmul.b: each chunk of "ws" starts a B of k × n = 4096 × 4096 = 16777216 elements, but its items hold 4096; give "ws" itemSize: 16777216',
    );
  });
});
