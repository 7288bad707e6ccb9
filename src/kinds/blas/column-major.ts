// The BLAS libraries (cuBLAS, cuBLASLt) are column-major and the stages' operands row-major: the one call both kinds
// make, and the rows and products of an op over a chunk, which gemm and matmul count alike.

/** A matrix as a column-major library states it: `rows` × `cols`, `ld` elements from one column to the next. */
export interface Layout {
  readonly rows: number;
  readonly cols: number;
  readonly ld: number;
}

/** The library's call (column-major) of a row-major product with m rows, its operands in the library's order. */
export interface ColumnMajorCall {
  readonly transA: 'N' | 'T';
  readonly transB: 'N' | 'T';
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Leading dimensions, as cublasGemmEx takes them: the layouts' `ld`. */
  readonly lda: number;
  readonly ldb: number;
  readonly ldc: number;
  /** As stored: the library's A is our B (k × n, or n × k under transB), its B our A, its C (and D) our C. */
  readonly layouts: { readonly a: Layout; readonly b: Layout; readonly c: Layout };
  /** The library's A is our B and its B our A: Cᵀ = Bᵀ·Aᵀ. */
  readonly operands: readonly ['b', 'a', 'c'];
}

/**
 * The call (opB, N, n × m × k) for row-major A[m×k], B[k×n] (or Bᵀ[n×k]), C[m×n]. A row-major matrix of r rows and c
 * columns is the column-major c × r one with ld c, so B is n × k with ld n (or, stored as Bᵀ, k × n with ld k,
 * transposed), A is k × m with ld k, and C is n × m with ld n.
 */
export function columnMajorCall(
  spec: { readonly n: number; readonly k: number; readonly transB: boolean },
  m: number,
): ColumnMajorCall {
  const { n, k, transB } = spec;
  const layouts = {
    a: transB ? { rows: k, cols: n, ld: k } : { rows: n, cols: k, ld: n },
    b: { rows: k, cols: m, ld: k },
    c: { rows: n, cols: m, ld: n },
  };
  return {
    transA: transB ? 'T' : 'N',
    transB: 'N',
    m: n,
    n: m,
    k,
    lda: layouts.a.ld,
    ldb: layouts.b.ld,
    ldc: layouts.c.ld,
    layouts,
    operands: ['b', 'a', 'c'],
  };
}

/** What an op's product count reads: its chunk's item count, and the rows its spec gives for resident A and C. */
type Product = { readonly count: number; readonly spec: { readonly m: number | null } };

/** The product's m: the rows given for resident A and C, else the chunk's item count. */
export const productRows = (op: Product): number => op.spec.m ?? op.count;

/**
 * Products an op makes: one over the chunk's rows; where m is given, one per item, each item its own B (a layer's
 * weights) against the resident A, so whole buffers (the serial baseline) make every layer's product.
 */
export const productCount = (op: Product): number => (op.spec.m === null ? 1 : op.count);
