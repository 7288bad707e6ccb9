import { productCount, productRows } from '../blas/column-major.js';
import type { BlasOperand } from '../blas/entry.js';

// A cuBLASLt matmul as a compute step: per chunk, D[m×n] = epilogue(alpha·A[m×k]·B[k×n] + beta·C + bias) in row-major
// terms, m the chunk's item count, D written over C. This is what PyTorch's `linear` runs: the bias and the
// activation happen in the GEMM's own epilogue instead of a kernel of their own that reads D back. cuBLASLt is
// column-major, so the call computes Dᵀ = Bᵀ·Aᵀ (`blas/column-major.ts`), which is D row-major without a copy; the
// bias, one
// value per row of cuBLASLt's D, is one per column of ours.

export const MATMUL_DTYPES = ['bf16', 'fp16', 'fp8'] as const;
export type MatmulDtype = (typeof MATMUL_DTYPES)[number];

export const EPILOGUES = ['none', 'relu', 'gelu', 'bias', 'bias-relu', 'bias-gelu'] as const;
export type Epilogue = (typeof EPILOGUES)[number];

/** Whether the epilogue adds a bias vector of n, broadcast over the rows. */
export const takesBias = (epilogue: Epilogue): boolean => epilogue.startsWith('bias');

/**
 * The buffer element type A and B hold for each dtype. The buffers have no fp8 type: fp8's e4m3 values are held as
 * raw bytes in uint8 buffers, as float16's are moved as raw 16-bit values.
 */
export const MATMUL_INPUT_TYPE: Readonly<Record<MatmulDtype, string>> = {
  bf16: 'bfloat16',
  fp16: 'float16',
  fp8: 'uint8',
};

/** The element types C (and D, and a bias) may hold: the inputs' for bf16 and fp16, either 16-bit type under fp8. */
export const MATMUL_OUTPUT_TYPES: Readonly<Record<MatmulDtype, readonly OutputType[]>> = {
  bf16: ['bfloat16'],
  fp16: ['float16'],
  fp8: ['bfloat16', 'float16'],
};

export type OutputType = 'bfloat16' | 'float16';

/**
 * An operand as a step reads it: a chunked buffer at the chunk's first item (`itemSize` elements an item), or a
 * resident one whole.
 */
export type MatmulOperand = BlasOperand;

/** A matmul step as its config entry resolved it. */
export interface MatmulSpec {
  readonly a: MatmulOperand;
  readonly b: MatmulOperand;
  readonly c: MatmulOperand;
  /** A resident vector of n elements of C's type, for an epilogue that adds a bias; null otherwise. */
  readonly bias: { readonly buffer: string; readonly elementBytes: number } | null;
  /** Rows of A and C where both are resident (a layer's activations); null: the chunk's item count. */
  readonly m: number | null;
  readonly n: number;
  readonly k: number;
  readonly dtype: MatmulDtype;
  /** C's (and D's, and the bias's) element type. */
  readonly output: OutputType;
  readonly epilogue: Epilogue;
  readonly transB: boolean;
  readonly alpha: number;
  readonly beta: number;
}

export type MatmulOp = {
  readonly kind: 'matmul';
  readonly stream: string;
  /** The step's label. */
  readonly matmul: string;
  readonly chunk: number | null;
  /** The chunk's first item and item count (m). */
  readonly first: number;
  readonly count: number;
  /** Item index in the device buffers where this chunk lives. */
  readonly deviceFirst: number;
  readonly spec: MatmulSpec;
};

/**
 * 2·m·n·k per product: what a TFLOP/s figure divides by (the epilogue's m·n adds and activations are not counted, as
 * PyTorch's profiler does not).
 */
export const matmulFlops = (op: Pick<MatmulOp, 'count' | 'spec'>): number =>
  2 * productRows(op) * op.spec.n * op.spec.k * productCount(op);

/** The bytes a matmul reads: A and B, C where beta is not zero, and the bias. */
export function matmulBytesRead(op: Pick<MatmulOp, 'count' | 'spec'>): number {
  const { a, b, c, bias, n, k, beta } = op.spec;
  const m = productRows(op);
  return (
    productCount(op) *
    (m * k * a.elementBytes +
      k * n * b.elementBytes +
      (beta === 0 ? 0 : m * n * c.elementBytes) +
      (bias ? n * bias.elementBytes : 0))
  );
}
