import { z } from 'zod';
import type { StepBuffer } from '../api/index.js';

// What a BLAS product's `kernels:` entry (gemm's, matmul's) shares: its row-major operands A, B and C and their
// checks against the buffers, its sizes and scalars. Each kind adds its own fields (dtype, a bias, an epilogue) and
// words its errors under its own key ("gemm.a: …").

/**
 * cuBLAS takes m, n, k and the leading dimensions as a C int; cuBLASLt's entries keep to it, so that an entry moves
 * between the kinds unchanged.
 */
export const BLAS_INT_MAX = 2 ** 31 - 1;

/** An operand as a product reads it. */
export interface BlasOperand {
  readonly buffer: string;
  /** Elements per item of a chunked buffer; null for a resident one, read at its base in every chunk. */
  readonly itemSize: number | null;
  readonly elementBytes: number;
}

export type OperandField = 'a' | 'b' | 'c';

/** The fields of an entry these checks read. */
export interface ProductEntry {
  readonly a: string;
  readonly b: string;
  readonly c: string;
  readonly m?: number | undefined;
  readonly n: number;
  readonly k: number;
}

/** The roles of a buffer cut into chunks; the others (resident) are read whole in every chunk. */
export const CHUNKED_ROLES: ReadonlySet<string> = new Set(['in', 'out', 'inout', 'scratch']);

/** A size the library takes as a C int; `why` ends the message of one too large. */
export const positiveInt = (what: string, why = '') =>
  z
    .number()
    .int(`${what} is a whole number`)
    .min(1, `${what} is 1 or more`)
    .max(BLAS_INT_MAX, `${what} is at most 2^31 - 1 (${BLAS_INT_MAX})${why}`);

export const A_FIELD = z
  .string()
  .describe("A[m×k], row-major: a chunked buffer whose itemSize is k (m = the chunk's items), or a resident one");

/** m, n and k, in that order. */
export const sizeFields = (why = '') => ({
  m: positiveInt('m', why)
    .optional()
    .describe(
      "rows of A and C where both are resident (the chunk is then a B, such as a layer's weights); default: the chunk's item count",
    ),
  n: positiveInt('n', why),
  k: positiveInt('k', why),
});

/** transB, alpha and beta, in that order. */
export const scalarFields = () => ({
  transB: z.boolean().default(false).describe('B is stored as Bᵀ, n rows of k'),
  alpha: z.number().default(1),
  beta: z.number().default(0),
});

/** A chunked A's or C's items must be one row of it: k elements for A, n for C. */
export function rowError(key: string, field: OperandField, buffer: StepBuffer, entry: ProductEntry): string | null {
  const row = field === 'a' ? entry.k : field === 'c' ? entry.n : null;
  if (!CHUNKED_ROLES.has(buffer.role) || row === null || buffer.itemSize === row) return null;
  const dim = field === 'a' ? 'k' : 'n';
  return `${key}.${field}: buffer "${buffer.name}" has itemSize ${buffer.itemSize}, but a row of ${field.toUpperCase()} is ${dim} = ${row} elements; give "${buffer.name}" itemSize: ${row}`;
}

/** The operand a resolved buffer is. */
export const operandOf = (buffer: StepBuffer): BlasOperand => ({
  buffer: buffer.name,
  itemSize: CHUNKED_ROLES.has(buffer.role) ? buffer.itemSize : null,
  elementBytes: buffer.elementBytes,
});

/** m given while A or C is chunked (whose rows are then the chunk's items): what to remove. */
export function mError(entry: ProductEntry, operands: Record<OperandField, BlasOperand>): string | null {
  if (entry.m === undefined) return null;
  const chunked = operands.a.itemSize !== null ? 'a' : operands.c.itemSize !== null ? 'c' : null;
  return chunked
    ? `m is the row count of a resident A and C, but "${entry[chunked]}" is chunked: its rows are the chunk's items; remove m`
    : null;
}

/** C naming A's or B's buffer, which `library` would overwrite while reading it (it has no bounds of its own). */
export function overwriteError(entry: ProductEntry, library: string): string | null {
  for (const field of ['a', 'b'] as const) {
    const upper = field.toUpperCase();
    if (entry.c === entry[field])
      return `C names "${entry.c}", which is also ${upper}: ${library} would overwrite ${upper} while reading it; give C a buffer of its own`;
  }
  return null;
}

/**
 * The first operand whose buffer holds fewer elements than the product reads or writes there: a resident A or C
 * needs rows × k or rows × n (rows: m, or every item at once, as the serial mode runs), a resident B k × n, and a
 * chunked B's item a whole k × n (each item its own B): always where `chunkedB` is 'always', only where m is given
 * where it is 'with-m' (gemm's planner checks a chunked B without m per chunk).
 */
export function shortOperand(
  key: string,
  entry: ProductEntry,
  operands: Record<OperandField, BlasOperand>,
  buffers: readonly StepBuffer[],
  chunkedB: 'always' | 'with-m',
): { field: OperandField; error: string } | null {
  const items = Math.max(
    0,
    ...buffers.filter((x) => CHUNKED_ROLES.has(x.role)).map((x) => Math.floor(x.elements / x.itemSize)),
  );
  const rows = entry.m ?? items;
  const rowsWord =
    entry.m === undefined ? `${rows} rows (every item, as the serial mode runs them)` : `m = ${rows} rows`;
  const need: Record<OperandField, { elements: number; words: string }> = {
    a: { elements: rows * entry.k, words: `${rowsWord} of k = ${entry.k}` },
    b: { elements: entry.k * entry.n, words: `k × n = ${entry.k} × ${entry.n}` },
    c: { elements: rows * entry.n, words: `${rowsWord} of n = ${entry.n}` },
  };
  for (const field of ['a', 'b', 'c'] as const) {
    const operand = operands[field];
    const held = buffers.find((x) => x.name === operand.buffer)?.elements ?? 0;
    if (operand.itemSize === null && held < need[field].elements) {
      return {
        field,
        error: `${key}.${field}: resident buffer "${operand.buffer}" holds ${held} elements, but the product needs ${need[field].words}, ${need[field].elements} elements`,
      };
    }
    const checksB = chunkedB === 'always' || entry.m !== undefined;
    if (field === 'b' && checksB && operand.itemSize !== null && operand.itemSize < need.b.elements) {
      return {
        field,
        error: `${key}.b: each chunk of "${operand.buffer}" starts a B of ${need.b.words} = ${need.b.elements} elements, but its items hold ${operand.itemSize}; give "${operand.buffer}" itemSize: ${need.b.elements}`,
      };
    }
  }
  return null;
}
