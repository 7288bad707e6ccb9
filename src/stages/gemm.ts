import { z } from 'zod';
import { UsageError } from '../errors.js';
import { SMS } from './kernel.js';
import type { ComputeStep, StageKind, StepBuffer, StepConfig, Thunk } from './stage.js';

// A cuBLAS GEMM as a compute step: per chunk, C[m×n] = alpha·A[m×k]·B[k×n] + beta·C in row-major terms, m the chunk's
// item count. cuBLAS is column-major, so the call computes Cᵀ = Bᵀ·Aᵀ (`columnMajorCall`), which is C row-major
// without a copy or a transpose kernel.

export const GEMM_DTYPES = ['fp32', 'tf32', 'fp16', 'bf16'] as const;
export type GemmDtype = (typeof GEMM_DTYPES)[number];

/** The element type A and B must hold for each dtype; C holds it too, or float32. */
export const GEMM_OPERAND_TYPE: Readonly<Record<GemmDtype, string>> = { fp32: 'float32', tf32: 'float32', fp16: 'float16', bf16: 'bfloat16' };

/** An operand as a step reads it: a chunked buffer at the chunk's first item (`itemSize` elements an item), or a resident one whole. */
export interface GemmOperand {
  readonly buffer: string;
  /** Elements per item of a chunked buffer; null for a resident one, read at its base in every chunk. */
  readonly itemSize: number | null;
  readonly elementBytes: number;
}

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

/** A GEMM operand on the device: its buffer, and the element its chunk starts at. */
export interface GemmOperandAt {
  readonly buffer: string;
  readonly elementOffset: number;
}

/** The device call a gemm op is issued through, which exec/ implements on the stream's own cuBLAS handle. */
export interface GemmPrimitive {
  /**
   * A cuBLAS GEMM, column-major as cuBLAS takes it, its operands in cuBLAS's order (A, B, C), each a buffer and an
   * element offset into its device memory. `label` names the op in failures.
   */
  gemm(spec: {
    readonly label: string;
    readonly call: Omit<ColumnMajorCall, 'operands'> & {
      readonly alpha: number;
      readonly beta: number;
      readonly dtype: GemmDtype;
      readonly cFloat32: boolean;
    };
    readonly operands: readonly [GemmOperandAt, GemmOperandAt, GemmOperandAt];
  }): Thunk;
}

/** The cuBLAS call (column-major) of a row-major product with m rows, its operands in cuBLAS's order. */
export interface ColumnMajorCall {
  readonly transA: 'N' | 'T';
  readonly transB: 'N' | 'T';
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly lda: number;
  readonly ldb: number;
  readonly ldc: number;
  /** cuBLAS's A is our B and its B our A: Cᵀ = Bᵀ·Aᵀ. */
  readonly operands: readonly ['b', 'a', 'c'];
}

/** cublasGemmEx(opB, N, n, m, k, B, ldb = transB ? k : n, A, lda = k, C, ldc = n) for row-major A[m×k], B[k×n] (or Bᵀ[n×k]), C[m×n]. */
export function columnMajorCall(spec: Pick<GemmSpec, 'n' | 'k' | 'transB'>, m: number): ColumnMajorCall {
  return {
    transA: spec.transB ? 'T' : 'N',
    transB: 'N',
    m: spec.n,
    n: m,
    k: spec.k,
    lda: spec.transB ? spec.k : spec.n,
    ldb: spec.k,
    ldc: spec.n,
    operands: ['b', 'a', 'c'],
  };
}

/** The product's m: the rows given for resident A and C, else the chunk's item count. */
export const gemmRows = (op: Pick<GemmOp, 'count' | 'spec'>): number => op.spec.m ?? op.count;

/**
 * Products an op makes: one over the chunk's rows; where m is given, one per item, each item its own B (a layer's
 * weights) against the resident A, so whole buffers (the serial baseline) make every layer's product.
 */
export const gemmProducts = (op: Pick<GemmOp, 'count' | 'spec'>): number => (op.spec.m === null ? 1 : op.count);

/** 2·m·n·k per product: what a TFLOP/s figure divides by. */
export const gemmFlops = (op: Pick<GemmOp, 'count' | 'spec'>): number => 2 * gemmRows(op) * op.spec.n * op.spec.k * gemmProducts(op);

/** The bytes a GEMM reads: A and B, and C where beta is not zero. */
export function gemmBytesRead(op: Pick<GemmOp, 'count' | 'spec'>): number {
  const { a, b, c, n, k, beta } = op.spec;
  const m = gemmRows(op);
  return gemmProducts(op) * (m * k * a.elementBytes + k * n * b.elementBytes + (beta === 0 ? 0 : m * n * c.elementBytes));
}

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

const gemmConfig: StepConfig<GemmEntry> = {
  key: 'gemm',
  schema: GemmEntrySchema,
  label: (entry) => entry.name ?? 'gemm',
  resolve,
};

const what = (op: GemmOp) => {
  const { spec } = op;
  return `gemm ${op.gemm} (${spec.dtype} ${spec.a.buffer}·${spec.b.buffer}${spec.transB ? 'ᵀ' : ''} → ${spec.c.buffer}, n ${spec.n} k ${spec.k})`;
};

/** An operand's element offset in its device buffer: a chunked one at the chunk's first item, a resident one at 0. */
const offsetOf = (operand: GemmOperand, deviceFirst: number) => (operand.itemSize === null ? 0 : deviceFirst * operand.itemSize);

export const gemm: StageKind<'gemm', GemmOp, GemmPrimitive> = {
  id: 'gemm',
  opKind: 'gemm',
  phase: 'compute',
  planStep: (step: ComputeStep, w) => {
    const spec = step.spec as GemmSpec;
    const short = chunkShortOfB(spec, w.range.count);
    if (short)
      throw new UsageError(`kernels entry "${step.label}": gemm.b: ${w.chunk === null ? 'the whole buffer' : `chunk ${w.chunk}`} of ${short}`, {
        hint: 'Use fewer chunks, or give B itemSize: k × n so that each item holds a whole B (with m).',
      });
    return [{ kind: 'gemm', stream: w.stream, gemm: step.label, chunk: w.chunk, first: w.range.first, count: w.range.count, deviceFirst: w.deviceFirst, spec }];
  },
  config: gemmConfig as StepConfig<unknown>,
  moves: () => null,
  owns: () => true,
  touchesDevice: true,
  // cuBLAS launches kernels of its own, and may clear its workspace with a memset among them; each carries the
  // correlation id of the call, which the timeline spans.
  cupti: { kind: 'kernel', memsets: true },
  // On the SMs with the kernels, its time from its mode alone on whole buffers.
  model: SMS,
  // cuBLAS may pick another algorithm for a chunk's rows than for the whole buffers: its C takes verify.tolerance.
  verify: 'tolerance',
  writes: (op) => [op.spec.c.buffer],
  names: (op) => [op.gemm],
  look: {
    letter: 'G',
    colour: '#b5179e',
    name: 'gemm',
    prefix: 'gemm',
    always: false,
    rate: false,
    noun: { one: 'cuBLAS GEMM', many: 'cuBLAS GEMMs', always: false },
    terminal: { background: 'bgMagenta', foreground: 'whiteBright' },
    // It runs on the SMs: one engine row with the kernels.
    engine: { row: 3000, name: 'SMs', hostCopy: false, exclusive: false },
  },
  what,
  describe: (op, c) => `${what(op)}, ${c.chunk(op.chunk)} (m ${gemmRows(op)}, items ${op.first} to ${op.first + op.count - 1}, ${gemmFlops(op) / 1e9} GFLOP)`,
  timeline: (op) => ({ buffer: null, kernel: op.gemm, bytes: gemmBytesRead(op) }),
  subject: (op) => op.kernel,
  issue: (op, p) => {
    const { operands, ...call } = columnMajorCall(op.spec, gemmRows(op));
    const products = Array.from({ length: gemmProducts(op) }, (_, i) => {
      const operand = (o: 'a' | 'b' | 'c') => ({ buffer: op.spec[o].buffer, elementOffset: offsetOf(op.spec[o], op.deviceFirst + i) });
      return p.gemm({
        label: op.gemm,
        call: { ...call, alpha: op.spec.alpha, beta: op.spec.beta, dtype: op.spec.dtype, cFloat32: op.spec.cFloat32 },
        operands: [operand(operands[0]), operand(operands[1]), operand(operands[2])],
      });
    });
    const [only] = products;
    if (products.length === 1 && only) return { issue: only, hostTag: null };
    // Each product returns its cudaError_t-like status; the first failure stops the rest, as one op's would.
    return {
      issue: () => {
        for (const product of products) {
          const status = product();
          if (status !== 0) return status;
        }
        return 0;
      },
      hostTag: null,
    };
  },
  failureHint: 'Check that the operands hold m×k, k×n and m×n elements for the chunk (itemSize k and n), or run it under compute-sanitizer.',
};
