import { z } from 'zod';
import type { StepBuffer, StepConfig } from '../api/index.js';
import {
  A_FIELD,
  mError,
  type OperandField,
  operandOf,
  overwriteError,
  rowError,
  scalarFields,
  shortOperand,
  sizeFields,
} from '../blas/entry.js';
import { GEMM_DTYPES, GEMM_OPERAND_TYPE, type GemmOperand, type GemmSpec } from './spec.js';

// A gemm entry of the config's `kernels:` list, checked against the buffers it names (what it shares with a matmul
// entry is ../blas/entry.ts).

const GemmEntrySchema = z
  .object({
    name: z.string().optional().describe('label used in output (default: gemm)'),
    gemm: z
      .object({
        a: A_FIELD,
        b: z
          .string()
          .describe(
            "B[k×n] row-major (with transB, Bᵀ[n×k]): a resident buffer, read whole in every chunk, or a chunked one whose chunk holds its own B (a layer's weights streamed in)",
          ),
        c: z.string().describe('C[m×n] row-major: a chunked buffer whose itemSize is n, or a resident one'),
        ...sizeFields(', the largest int cuBLAS takes'),
        dtype: z
          .enum(GEMM_DTYPES)
          .describe(
            'fp32, tf32 (float32 data on the tensor cores), fp16 or bf16: the type of A and B; C holds it too, or float32',
          ),
        ...scalarFields(),
      })
      .strict()
      .describe("a cuBLAS GEMM per chunk: C = alpha·A·B + beta·C, row-major, m = the chunk's item count"),
  })
  .strict();

type GemmEntry = z.output<typeof GemmEntrySchema>;

/** The entry against the config's buffers: each operand exists, has dtype's type, and items of the right length. */
function resolve(
  entry: GemmEntry,
  buffers: readonly StepBuffer[],
): { spec: GemmSpec } | { error: string; path: (string | number)[] } {
  const g = entry.gemm;
  const want = GEMM_OPERAND_TYPE[g.dtype];
  const operands: Partial<Record<OperandField, GemmOperand>> = {};
  let cFloat32 = false;
  for (const field of ['a', 'b', 'c'] as const) {
    const name = g[field];
    const buffer = buffers.find((b) => b.name === name);
    const path = ['gemm', field];
    if (!buffer)
      return {
        error: `gemm.${field} names no buffer "${name}" (buffers: ${buffers.map((b) => b.name).join(', ')})`,
        path,
      };
    const floatC = field === 'c' && buffer.type === 'float32' && want !== 'float32';
    if (buffer.type !== want && !floatC) {
      const allowed = field === 'c' && want !== 'float32' ? `${want} or float32` : want;
      return {
        error: `gemm.${field}: buffer "${name}" holds ${buffer.type}, but dtype ${g.dtype} needs ${allowed}`,
        path,
      };
    }
    if (floatC) cFloat32 = true;
    const row = rowError('gemm', field, buffer, g);
    if (row) return { error: row, path };
    operands[field] = operandOf(buffer);
  }
  const { a, b, c } = operands as Record<OperandField, GemmOperand>;
  const m = mError(g, { a, b, c });
  if (m) return { error: `gemm.m: ${m}`, path: ['gemm', 'm'] };
  // cuBLAS reads and writes where the call says, with no bounds of its own: an operand short of its product's
  // elements is an out-of-bounds access on the device, and a C that is A or B is overwritten while it is read.
  const overwrite = overwriteError(g, 'cuBLAS');
  if (overwrite) return { error: `gemm.c: ${overwrite}`, path: ['gemm', 'c'] };
  const short = shortOperand('gemm', g, { a, b, c }, buffers, 'with-m');
  if (short) return { error: short.error, path: ['gemm', short.field] };
  return {
    spec: {
      a,
      b,
      c,
      m: g.m ?? null,
      n: g.n,
      k: g.k,
      dtype: g.dtype,
      transB: g.transB,
      alpha: g.alpha,
      beta: g.beta,
      cFloat32,
    },
  };
}

/**
 * Where a chunked B without m is read whole from a chunk's first item: what is short when its `count` items hold less
 * than k × n.
 */
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
