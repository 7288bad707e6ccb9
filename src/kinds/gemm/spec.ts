import { productCount, productRows } from '../blas/column-major.js';
import type { BlasOperand } from '../blas/entry.js';

// A cuBLAS GEMM as a compute step: per chunk, C[m×n] = alpha·A[m×k]·B[k×n] + beta·C in row-major terms, m the chunk's
// item count. cuBLAS is column-major, so the call computes Cᵀ = Bᵀ·Aᵀ (`blas/column-major.ts`), which is C row-major
// without a copy or a transpose kernel.

/** The element types a GEMM stage offers; `tf32` is fp32 data multiplied on the tensor cores with TF32 inputs. */
export const GEMM_DTYPES = ['fp32', 'tf32', 'fp16', 'bf16'] as const;
export type GemmDtype = (typeof GEMM_DTYPES)[number];

/** The element type A and B must hold for each dtype; C holds it too, or float32. */
export const GEMM_OPERAND_TYPE: Readonly<Record<GemmDtype, string>> = {
  fp32: 'float32',
  tf32: 'float32',
  fp16: 'float16',
  bf16: 'bfloat16',
};

/**
 * An operand as a step reads it: a chunked buffer at the chunk's first item (`itemSize` elements an item), or a
 * resident one whole.
 */
export type GemmOperand = BlasOperand;

/** A gemm step as its config entry resolved it. */
export interface GemmSpec {
  readonly a: GemmOperand;
  readonly b: GemmOperand;
  readonly c: GemmOperand;
  /** Rows of A and C where both are resident (a layer's activations); null: the chunk's item count. */
  readonly m: number | null;
  readonly n: number;
  readonly k: number;
  readonly dtype: GemmDtype;
  readonly transB: boolean;
  readonly alpha: number;
  readonly beta: number;
  /** C in float32 while A and B hold 16-bit values. */
  readonly cFloat32: boolean;
}

export type GemmOp = {
  readonly kind: 'gemm';
  readonly stream: string;
  readonly gemm: string;
  readonly chunk: number | null;
  /** The chunk's first item and item count (m). */
  readonly first: number;
  readonly count: number;
  /** Item index in the device buffers where this chunk lives. */
  readonly deviceFirst: number;
  readonly spec: GemmSpec;
};

/** 2·m·n·k per product: what a TFLOP/s figure divides by. */
export const gemmFlops = (op: Pick<GemmOp, 'count' | 'spec'>): number =>
  2 * productRows(op) * op.spec.n * op.spec.k * productCount(op);

/** The bytes a GEMM reads: A and B, and C where beta is not zero. */
export function gemmBytesRead(op: Pick<GemmOp, 'count' | 'spec'>): number {
  const { a, b, c, n, k, beta } = op.spec;
  const m = productRows(op);
  return (
    productCount(op) * (m * k * a.elementBytes + k * n * b.elementBytes + (beta === 0 ? 0 : m * n * c.elementBytes))
  );
}
