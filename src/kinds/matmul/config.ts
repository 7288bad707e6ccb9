import { z } from 'zod';
import type { StepBuffer, StepConfig } from '../api/index.js';
import {
  A_FIELD,
  CHUNKED_ROLES,
  mError,
  type OperandField,
  operandOf,
  overwriteError,
  rowError,
  scalarFields,
  shortOperand,
  sizeFields,
} from '../blas/entry.js';
import {
  EPILOGUES,
  MATMUL_DTYPES,
  MATMUL_INPUT_TYPE,
  MATMUL_OUTPUT_TYPES,
  type MatmulOperand,
  type MatmulSpec,
  type OutputType,
  takesBias,
} from './spec.js';

// A matmul entry of the config's `kernels:` list, checked against the buffers it names (what it shares with a gemm
// entry is ../blas/entry.ts). cuBLASLt's layouts take rows and columns as uint64; m, n and k are kept to a C int as
// gemm's are, so that an entry moves between the two kinds unchanged.

const MatmulEntrySchema = z
  .object({
    name: z.string().optional().describe('label used in output (default: matmul)'),
    matmul: z
      .object({
        a: A_FIELD,
        b: z
          .string()
          .describe(
            'B[k×n] row-major (with transB, Bᵀ[n×k], as a Linear layer stores its weights): a resident buffer, or a chunked one whose chunk holds its own B',
          ),
        c: z
          .string()
          .describe('C[m×n] row-major, which D overwrites: a chunked buffer whose itemSize is n, or a resident one'),
        bias: z
          .string()
          .optional()
          .describe("a resident vector of n elements of C's type, for the bias, bias-relu and bias-gelu epilogues"),
        epilogue: z
          .enum(EPILOGUES)
          .default('none')
          .describe(
            'what cuBLASLt applies to each element before it stores D: relu, gelu, the bias, or the bias then relu or gelu',
          ),
        ...sizeFields(),
        dtype: z
          .enum(MATMUL_DTYPES)
          .describe(
            'bf16 or fp16: A, B and C of that type; fp8: A and B e4m3 bytes in uint8 buffers, C bfloat16 or float16 (compute capability 8.9 or newer, and transB)',
          ),
        ...scalarFields(),
      })
      .strict()
      .describe(
        "a cuBLASLt matmul per chunk: D = epilogue(alpha·A·B + beta·C + bias) over C, row-major, m = the chunk's item count",
      ),
  })
  .strict();

type MatmulEntry = z.output<typeof MatmulEntrySchema>;
type Matmul = MatmulEntry['matmul'];

type Resolution<T> = { value: T } | { error: string; path: (string | number)[] };
const fail = (field: string, error: string) => ({ error, path: ['matmul', field] });

/** The entry against the config's buffers: each operand exists, has dtype's type, and items of the right length. */
function resolve(
  entry: MatmulEntry,
  buffers: readonly StepBuffer[],
): { spec: MatmulSpec } | { error: string; path: (string | number)[] } {
  const g = entry.matmul;
  const operands: Partial<Record<OperandField, MatmulOperand>> = {};
  for (const field of ['a', 'b', 'c'] as const) {
    const operand = resolveOperand(g, field, buffers);
    if ('error' in operand) return operand;
    operands[field] = operand.value;
  }
  const { a, b, c } = operands as Record<OperandField, MatmulOperand>;
  const output = buffers.find((x) => x.name === c.buffer)?.type as OutputType;
  const problem = resolveShape(g, { a, b, c }, buffers);
  if (problem) return problem;
  const bias = resolveBias(g, output, buffers);
  if ('error' in bias) return bias;
  return {
    spec: {
      a,
      b,
      c,
      bias: bias.value,
      m: g.m ?? null,
      n: g.n,
      k: g.k,
      dtype: g.dtype,
      output,
      epilogue: g.epilogue,
      transB: g.transB,
      alpha: g.alpha,
      beta: g.beta,
    },
  };
}

/** One operand: its buffer exists, holds the dtype's type, and a chunked one's items are a row (k for A, n for C). */
function resolveOperand(g: Matmul, field: OperandField, buffers: readonly StepBuffer[]): Resolution<MatmulOperand> {
  const name = g[field];
  const buffer = buffers.find((x) => x.name === name);
  if (!buffer)
    return fail(field, `matmul.${field} names no buffer "${name}" (buffers: ${buffers.map((x) => x.name).join(', ')})`);
  const allowed: readonly string[] = field === 'c' ? MATMUL_OUTPUT_TYPES[g.dtype] : [MATMUL_INPUT_TYPE[g.dtype]];
  if (!allowed.includes(buffer.type)) {
    const raw = g.dtype === 'fp8' && field !== 'c' ? " (fp8's e4m3 values as raw bytes)" : '';
    return fail(
      field,
      `matmul.${field}: buffer "${name}" holds ${buffer.type}, but dtype ${g.dtype} needs ${allowed.join(' or ')}${raw}`,
    );
  }
  const row = rowError('matmul', field, buffer, g);
  return row ? fail(field, row) : { value: operandOf(buffer) };
}

/**
 * What the operands' shapes and places make impossible: m with chunked rows, fp8 without transB, C over A or B, short
 * resident operands.
 */
function resolveShape(
  g: Matmul,
  operands: Record<OperandField, MatmulOperand>,
  buffers: readonly StepBuffer[],
): { error: string; path: (string | number)[] } | null {
  const m = mError(g, operands);
  if (m) return fail('m', m);
  // Hopper's and Ada's fp8 kernels take only the "TN" layout: cuBLASLt's A transposed, which is our B stored as Bᵀ.
  if (g.dtype === 'fp8' && !g.transB)
    return fail(
      'transB',
      'dtype fp8 needs transB: true: cuBLASLt multiplies fp8 only with B stored as Bᵀ (n rows of k), as a Linear layer stores its weights',
    );
  // cuBLASLt reads and writes where the call says, with no bounds of its own: a D that is A or B is overwritten while
  // it is read, and an operand short of its product's elements is an out-of-bounds access on the device.
  const overwrite = overwriteError(g, 'cuBLASLt');
  if (overwrite) return fail('c', overwrite);
  const short = shortOperand('matmul', g, operands, buffers, 'always');
  return short ? fail(short.field, short.error) : null;
}

/** The bias: given exactly when the epilogue adds one, a resident buffer of n elements of C's type. */
function resolveBias(g: Matmul, output: OutputType, buffers: readonly StepBuffer[]): Resolution<MatmulSpec['bias']> {
  if (g.bias === undefined)
    return takesBias(g.epilogue)
      ? fail(
          'bias',
          `epilogue ${g.epilogue} adds a bias: give matmul.bias, a resident buffer of n = ${g.n} ${output} values`,
        )
      : { value: null };
  if (!takesBias(g.epilogue)) {
    return fail(
      'bias',
      `bias "${g.bias}" is given, but epilogue ${g.epilogue} adds none: use epilogue bias, bias-relu or bias-gelu, or remove bias`,
    );
  }
  const buffer = buffers.find((x) => x.name === g.bias);
  if (!buffer)
    return fail('bias', `matmul.bias names no buffer "${g.bias}" (buffers: ${buffers.map((x) => x.name).join(', ')})`);
  // cuBLASLt's epilogue reads a bias of D's type when A and B are 16-bit (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE's
  // default), and this stage passes that type under fp8 too.
  if (buffer.type !== output)
    return fail(
      'bias',
      `matmul.bias: buffer "${g.bias}" holds ${buffer.type}, but the epilogue adds a bias of C's type, ${output}`,
    );
  if (CHUNKED_ROLES.has(buffer.role))
    return fail(
      'bias',
      `matmul.bias: buffer "${g.bias}" is chunked (role ${buffer.role}), but every chunk adds the same bias: give it role: resident`,
    );
  if (buffer.elements !== g.n)
    return fail(
      'bias',
      `matmul.bias: buffer "${g.bias}" holds ${buffer.elements} elements, but the bias is one per column of C, n = ${g.n}; give it count: ${g.n}`,
    );
  return { value: { buffer: g.bias, elementBytes: buffer.elementBytes } };
}

export const matmulConfig: StepConfig<MatmulEntry> = {
  key: 'matmul',
  schema: MatmulEntrySchema,
  label: (entry) => entry.name ?? 'matmul',
  resolve,
};
