import { z } from 'zod';
import type { StepBuffer, StepConfig } from '../api/index.js';
import { EPILOGUES, MATMUL_DTYPES, MATMUL_INPUT_TYPE, MATMUL_OUTPUT_TYPES, type MatmulOperand, type MatmulSpec, type OutputType, takesBias } from './spec.js';

// A matmul entry of the config's `kernels:` list, checked against the buffers it names.

/**
 * cuBLASLt's layouts take rows and columns as uint64; m, n and k are kept to a C int as gemm's are, so that an entry
 * moves between the two kinds unchanged.
 */
const INT_MAX = 2 ** 31 - 1;

const positive = (what: string) => z.number().int(`${what} is a whole number`).min(1, `${what} is 1 or more`).max(INT_MAX, `${what} is at most 2^31 - 1 (${INT_MAX})`);

const MatmulEntrySchema = z
  .object({
    name: z.string().optional().describe('label used in output (default: matmul)'),
    matmul: z
      .object({
        a: z.string().describe("A[m×k], row-major: a chunked buffer whose itemSize is k (m = the chunk's items), or a resident one"),
        b: z.string().describe('B[k×n] row-major (with transB, Bᵀ[n×k], as a Linear layer stores its weights): a resident buffer, or a chunked one whose chunk holds its own B'),
        c: z.string().describe('C[m×n] row-major, which D overwrites: a chunked buffer whose itemSize is n, or a resident one'),
        bias: z.string().optional().describe("a resident vector of n elements of C's type, for the bias, bias-relu and bias-gelu epilogues"),
        epilogue: z.enum(EPILOGUES).default('none').describe('what cuBLASLt applies to each element before it stores D: relu, gelu, the bias, or the bias then relu or gelu'),
        m: positive('m').optional().describe("rows of A and C where both are resident (the chunk is then a B, such as a layer's weights); default: the chunk's item count"),
        n: positive('n'),
        k: positive('k'),
        dtype: z
          .enum(MATMUL_DTYPES)
          .describe('bf16 or fp16: A, B and C of that type; fp8: A and B e4m3 bytes in uint8 buffers, C bfloat16 or float16 (compute capability 8.9 or newer, and transB)'),
        transB: z.boolean().default(false).describe('B is stored as Bᵀ, n rows of k'),
        alpha: z.number().default(1),
        beta: z.number().default(0),
      })
      .strict()
      .describe("a cuBLASLt matmul per chunk: D = epilogue(alpha·A·B + beta·C + bias) over C, row-major, m = the chunk's item count"),
  })
  .strict();

type MatmulEntry = z.output<typeof MatmulEntrySchema>;
type Matmul = MatmulEntry['matmul'];
type Field = 'a' | 'b' | 'c';

const CHUNKED = new Set(['in', 'out', 'inout', 'scratch']);

type Resolution<T> = { value: T } | { error: string; path: (string | number)[] };
const fail = (field: string, error: string) => ({ error, path: ['matmul', field] });

/** The entry against the config's buffers: each operand exists, has dtype's type, and items of the right length. */
function resolve(entry: MatmulEntry, buffers: readonly StepBuffer[]): { spec: MatmulSpec } | { error: string; path: (string | number)[] } {
  const g = entry.matmul;
  const operands: Partial<Record<Field, MatmulOperand>> = {};
  for (const field of ['a', 'b', 'c'] as const) {
    const operand = resolveOperand(g, field, buffers);
    if ('error' in operand) return operand;
    operands[field] = operand.value;
  }
  const { a, b, c } = operands as Record<Field, MatmulOperand>;
  const output = buffers.find((x) => x.name === c.buffer)?.type as OutputType;
  const problem = resolveShape(g, { a, b, c }, buffers);
  if (problem) return problem;
  const bias = resolveBias(g, output, buffers);
  if ('error' in bias) return bias;
  return { spec: { a, b, c, bias: bias.value, m: g.m ?? null, n: g.n, k: g.k, dtype: g.dtype, output, epilogue: g.epilogue, transB: g.transB, alpha: g.alpha, beta: g.beta } };
}

/** One operand: its buffer exists, holds the dtype's type, and a chunked one's items are a row (k for A, n for C). */
function resolveOperand(g: Matmul, field: Field, buffers: readonly StepBuffer[]): Resolution<MatmulOperand> {
  const name = g[field];
  const buffer = buffers.find((x) => x.name === name);
  if (!buffer) return fail(field, `matmul.${field} names no buffer "${name}" (buffers: ${buffers.map((x) => x.name).join(', ')})`);
  const allowed: readonly string[] = field === 'c' ? MATMUL_OUTPUT_TYPES[g.dtype] : [MATMUL_INPUT_TYPE[g.dtype]];
  if (!allowed.includes(buffer.type)) {
    const raw = g.dtype === 'fp8' && field !== 'c' ? " (fp8's e4m3 values as raw bytes)" : '';
    return fail(field, `matmul.${field}: buffer "${name}" holds ${buffer.type}, but dtype ${g.dtype} needs ${allowed.join(' or ')}${raw}`);
  }
  const chunked = CHUNKED.has(buffer.role);
  const row = field === 'a' ? g.k : field === 'c' ? g.n : null;
  if (chunked && row !== null && buffer.itemSize !== row) {
    const dim = field === 'a' ? 'k' : 'n';
    return fail(
      field,
      `matmul.${field}: buffer "${name}" has itemSize ${buffer.itemSize}, but a row of ${field.toUpperCase()} is ${dim} = ${row} elements; give "${name}" itemSize: ${row}`,
    );
  }
  return { value: { buffer: name, itemSize: chunked ? buffer.itemSize : null, elementBytes: buffer.elementBytes } };
}

/** What the operands' shapes and places make impossible: m with chunked rows, fp8 without transB, C over A or B, short resident operands. */
function resolveShape(g: Matmul, operands: Record<Field, MatmulOperand>, buffers: readonly StepBuffer[]): { error: string; path: (string | number)[] } | null {
  const { a, c } = operands;
  if (g.m !== undefined) {
    const chunked = a.itemSize !== null ? 'a' : c.itemSize !== null ? 'c' : null;
    if (chunked) return fail('m', `m is the row count of a resident A and C, but "${g[chunked]}" is chunked: its rows are the chunk's items; remove m`);
  }
  // Hopper's and Ada's fp8 kernels take only the "TN" layout: cuBLASLt's A transposed, which is our B stored as Bᵀ.
  if (g.dtype === 'fp8' && !g.transB)
    return fail('transB', 'dtype fp8 needs transB: true: cuBLASLt multiplies fp8 only with B stored as Bᵀ (n rows of k), as a Linear layer stores its weights');
  // cuBLASLt reads and writes where the call says, with no bounds of its own: a D that is A or B is overwritten while
  // it is read, and an operand short of its product's elements is an out-of-bounds access on the device.
  for (const field of ['a', 'b'] as const) {
    const upper = field.toUpperCase();
    if (g.c === g[field]) return fail('c', `C names "${g.c}", which is also ${upper}: cuBLASLt would overwrite ${upper} while reading it; give C a buffer of its own`);
  }
  const short = shortOperand(g, operands, buffers);
  return short ? fail(short.field, short.error) : null;
}

/**
 * The first operand whose buffer holds fewer elements than the product reads or writes there: a resident A or C
 * needs rows × k or rows × n (rows: m, or every item at once, as the serial mode runs), a resident B k × n, and a
 * chunked B's item a whole k × n where m is given (each item is then its own B).
 */
function shortOperand(g: Matmul, operands: Record<Field, MatmulOperand>, buffers: readonly StepBuffer[]): { field: Field; error: string } | null {
  const items = Math.max(0, ...buffers.filter((x) => CHUNKED.has(x.role)).map((x) => Math.floor(x.elements / x.itemSize)));
  const rows = g.m ?? items;
  const rowsWord = g.m === undefined ? `${rows} rows (every item, as the serial mode runs them)` : `m = ${rows} rows`;
  const need: Record<Field, { elements: number; words: string }> = {
    a: { elements: rows * g.k, words: `${rowsWord} of k = ${g.k}` },
    b: { elements: g.k * g.n, words: `k × n = ${g.k} × ${g.n}` },
    c: { elements: rows * g.n, words: `${rowsWord} of n = ${g.n}` },
  };
  for (const field of ['a', 'b', 'c'] as const) {
    const operand = operands[field];
    const held = buffers.find((x) => x.name === operand.buffer)?.elements ?? 0;
    if (operand.itemSize === null && held < need[field].elements) {
      return {
        field,
        error: `matmul.${field}: resident buffer "${operand.buffer}" holds ${held} elements, but the product needs ${need[field].words}, ${need[field].elements} elements`,
      };
    }
    if (field === 'b' && operand.itemSize !== null && operand.itemSize < need.b.elements) {
      return {
        field,
        error: `matmul.b: each chunk of "${operand.buffer}" starts a B of ${need.b.words} = ${need.b.elements} elements, but its items hold ${operand.itemSize}; give "${operand.buffer}" itemSize: ${need.b.elements}`,
      };
    }
  }
  return null;
}

/** The bias: given exactly when the epilogue adds one, a resident buffer of n elements of C's type. */
function resolveBias(g: Matmul, output: OutputType, buffers: readonly StepBuffer[]): Resolution<MatmulSpec['bias']> {
  if (g.bias === undefined)
    return takesBias(g.epilogue) ? fail('bias', `epilogue ${g.epilogue} adds a bias: give matmul.bias, a resident buffer of n = ${g.n} ${output} values`) : { value: null };
  if (!takesBias(g.epilogue)) {
    return fail('bias', `bias "${g.bias}" is given, but epilogue ${g.epilogue} adds none: use epilogue bias, bias-relu or bias-gelu, or remove bias`);
  }
  const buffer = buffers.find((x) => x.name === g.bias);
  if (!buffer) return fail('bias', `matmul.bias names no buffer "${g.bias}" (buffers: ${buffers.map((x) => x.name).join(', ')})`);
  // cuBLASLt's epilogue reads a bias of D's type when A and B are 16-bit (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE's default), and this stage passes that type under fp8 too.
  if (buffer.type !== output) return fail('bias', `matmul.bias: buffer "${g.bias}" holds ${buffer.type}, but the epilogue adds a bias of C's type, ${output}`);
  if (CHUNKED.has(buffer.role)) return fail('bias', `matmul.bias: buffer "${g.bias}" is chunked (role ${buffer.role}), but every chunk adds the same bias: give it role: resident`);
  if (buffer.elements !== g.n)
    return fail('bias', `matmul.bias: buffer "${g.bias}" holds ${buffer.elements} elements, but the bias is one per column of C, n = ${g.n}; give it count: ${g.n}`);
  return { value: { buffer: g.bias, elementBytes: buffer.elementBytes } };
}

export const matmulConfig: StepConfig<MatmulEntry> = {
  key: 'matmul',
  schema: MatmulEntrySchema,
  label: (entry) => entry.name ?? 'matmul',
  resolve,
};
