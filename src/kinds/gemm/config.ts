import { z } from 'zod';
import type { StepBuffer, StepConfig } from '../api/index.js';
import { GEMM_DTYPES, GEMM_OPERAND_TYPE, type GemmOperand, type GemmSpec } from './spec.js';

// A gemm entry of the config's `kernels:` list, checked against the buffers it names.

/** cuBLAS takes m, n, k and the leading dimensions as a C int. */
export const CUBLAS_INT_MAX = 2 ** 31 - 1;

const positive = (what: string) =>
  z.number().int(`${what} is a whole number`).min(1, `${what} is 1 or more`).max(CUBLAS_INT_MAX, `${what} is at most 2^31 - 1 (${CUBLAS_INT_MAX}), the largest int cuBLAS takes`);

const GemmEntrySchema = z
  .object({
    name: z.string().optional().describe('label used in output (default: gemm)'),
    gemm: z
      .object({
        a: z.string().describe("A[m×k], row-major: a chunked buffer whose itemSize is k (m = the chunk's items), or a resident one"),
        b: z
          .string()
          .describe(
            "B[k×n] row-major (with transB, Bᵀ[n×k]): a resident buffer, read whole in every chunk, or a chunked one whose chunk holds its own B (a layer's weights streamed in)",
          ),
        c: z.string().describe('C[m×n] row-major: a chunked buffer whose itemSize is n, or a resident one'),
        m: positive('m').optional().describe("rows of A and C where both are resident (the chunk is then a B, such as a layer's weights); default: the chunk's item count"),
        n: positive('n'),
        k: positive('k'),
        dtype: z.enum(GEMM_DTYPES).describe('fp32, tf32 (float32 data on the tensor cores), fp16 or bf16: the type of A and B; C holds it too, or float32'),
        transB: z.boolean().default(false).describe('B is stored as Bᵀ, n rows of k'),
        alpha: z.number().default(1),
        beta: z.number().default(0),
      })
      .strict()
      .describe("a cuBLAS GEMM per chunk: C = alpha·A·B + beta·C, row-major, m = the chunk's item count"),
  })
  .strict();

type GemmEntry = z.output<typeof GemmEntrySchema>;

const CHUNKED = new Set(['in', 'out', 'inout', 'scratch']);

/** The entry against the config's buffers: each operand exists, has dtype's type, and items of the right length. */
function resolve(entry: GemmEntry, buffers: readonly StepBuffer[]): { spec: GemmSpec } | { error: string; path: (string | number)[] } {
  const g = entry.gemm;
  const want = GEMM_OPERAND_TYPE[g.dtype];
  const operands: Partial<Record<'a' | 'b' | 'c', GemmOperand>> = {};
  let cFloat32 = false;
  for (const [field, items] of [
    ['a', g.k],
    ['b', null],
    ['c', g.n],
  ] as const) {
    const name = g[field];
    const buffer = buffers.find((b) => b.name === name);
    const path = ['gemm', field];
    if (!buffer) return { error: `gemm.${field} names no buffer "${name}" (buffers: ${buffers.map((b) => b.name).join(', ')})`, path };
    const floatC = field === 'c' && buffer.type === 'float32' && want !== 'float32';
    if (buffer.type !== want && !floatC) {
      const allowed = field === 'c' && want !== 'float32' ? `${want} or float32` : want;
      return { error: `gemm.${field}: buffer "${name}" holds ${buffer.type}, but dtype ${g.dtype} needs ${allowed}`, path };
    }
    if (floatC) cFloat32 = true;
    const chunked = CHUNKED.has(buffer.role);
    if (chunked && items !== null && buffer.itemSize !== items) {
      const dim = field === 'a' ? 'k' : 'n';
      return {
        error: `gemm.${field}: buffer "${name}" has itemSize ${buffer.itemSize}, but a row of ${field.toUpperCase()} is ${dim} = ${items} elements; give "${name}" itemSize: ${items}`,
        path,
      };
    }
    operands[field] = { buffer: name, itemSize: chunked ? buffer.itemSize : null, elementBytes: buffer.elementBytes };
  }
  const { a, b, c } = operands as Record<'a' | 'b' | 'c', GemmOperand>;
  if (g.m !== undefined) {
    const chunked = a.itemSize !== null ? 'a' : c.itemSize !== null ? 'c' : null;
    if (chunked) {
      return { error: `gemm.m: m is the row count of a resident A and C, but "${g[chunked]}" is chunked: its rows are the chunk's items; remove m`, path: ['gemm', 'm'] };
    }
  }
  // cuBLAS reads and writes where the call says, with no bounds of its own: an operand short of its product's
  // elements is an out-of-bounds access on the device, and a C that is A or B is overwritten while it is read.
  for (const field of ['a', 'b'] as const) {
    if (g.c === g[field])
      return {
        error: `gemm.c: C names "${g.c}", which is also ${field.toUpperCase()}: cuBLAS would overwrite ${field.toUpperCase()} while reading it; give C a buffer of its own`,
        path: ['gemm', 'c'],
      };
  }
  const short = shortOperand(g, { a, b, c }, buffers);
  if (short) return { error: short.error, path: ['gemm', short.field] };
  return { spec: { a, b, c, m: g.m ?? null, n: g.n, k: g.k, dtype: g.dtype, transB: g.transB, alpha: g.alpha, beta: g.beta, cFloat32 } };
}

/**
 * The first operand whose buffer holds fewer elements than the product reads or writes there: a resident A or C
 * needs rows × k or rows × n (rows: m, or every item at once, as the serial mode runs), a resident B k × n, and a
 * chunked B's item a whole k × n (each chunk's B starts at its first item). Chunked A and C are checked by itemSize.
 */
function shortOperand(g: GemmEntry['gemm'], operands: Record<'a' | 'b' | 'c', GemmOperand>, buffers: readonly StepBuffer[]): { field: 'a' | 'b' | 'c'; error: string } | null {
  const items = Math.max(0, ...buffers.filter((b) => CHUNKED.has(b.role)).map((b) => Math.floor(b.elements / b.itemSize)));
  const rows = g.m ?? items;
  const rowsWord = g.m === undefined ? `${rows} rows (every item, as the serial mode runs them)` : `m = ${rows} rows`;
  const need: Record<'a' | 'b' | 'c', { elements: number; words: string }> = {
    a: { elements: rows * g.k, words: `${rowsWord} of k = ${g.k}` },
    b: { elements: g.k * g.n, words: `k × n = ${g.k} × ${g.n}` },
    c: { elements: rows * g.n, words: `${rowsWord} of n = ${g.n}` },
  };
  for (const field of ['a', 'b', 'c'] as const) {
    const operand = operands[field];
    const buffer = buffers.find((b) => b.name === operand.buffer);
    if (!buffer) continue;
    if (operand.itemSize === null && buffer.elements < need[field].elements) {
      return {
        field,
        error: `gemm.${field}: resident buffer "${operand.buffer}" holds ${buffer.elements} elements, but the product needs ${need[field].words}, ${need[field].elements} elements`,
      };
    }
    // Without m a chunked B is the chunk's items together, which the planner checks per chunk (chunkShortOfB).
    if (field === 'b' && g.m !== undefined && operand.itemSize !== null && operand.itemSize < need.b.elements) {
      return {
        field,
        error: `gemm.b: each chunk of "${operand.buffer}" starts a B of ${need.b.words} = ${need.b.elements} elements, but its items hold ${operand.itemSize}; give "${operand.buffer}" itemSize: ${need.b.elements}`,
      };
    }
  }
  return null;
}

/** Where a chunked B without m is read whole from a chunk's first item: what is short when its `count` items hold less than k × n. */
export function chunkShortOfB(spec: GemmSpec, count: number): string | null {
  if (spec.m !== null || spec.b.itemSize === null) return null;
  const holds = count * spec.b.itemSize;
  const need = spec.k * spec.n;
  return holds >= need
    ? null
    : `"${spec.b.buffer}" holds ${count} items of ${spec.b.itemSize} elements (${holds}), less than the B of k × n = ${spec.k} × ${spec.n} = ${need} elements it is read as`;
}

export const gemmConfig: StepConfig<GemmEntry> = {
  key: 'gemm',
  schema: GemmEntrySchema,
  label: (entry) => entry.name ?? 'gemm',
  resolve,
};
