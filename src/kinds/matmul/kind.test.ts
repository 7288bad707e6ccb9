import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ChunkWork,
  type DescribeContext,
  nounCounts,
  phaseOps,
  STAGE_IDS,
  STEP_CONFIGS,
  stage,
  takesTolerance,
} from '../index.js';
import { matmul } from './index.js';
import { LAYER1 } from '../../../test/helpers/matmul.js';
import { columnMajorCall, productCount, productRows } from '../blas/column-major.js';
import { type MatmulOp, type MatmulSpec, matmulBytesRead, matmulFlops } from './spec.js';

const work = (chunk: number | null, first: number, count: number, spec: MatmulSpec = LAYER1): ChunkWork => ({
  buffers: [],
  compute: [
    { stage: 'kernel', label: 'prep', spec: null },
    { stage: 'matmul', label: 'layer1', spec },
  ],
  host: null,
  range: { first, count },
  deviceFirst: first % 1024,
  stream: `s${chunk ?? 0}`,
  chunk,
});

const context: DescribeContext = {
  kernels: [],
  chunk: (chunk) => (chunk === null ? 'whole buffers' : `chunk ${chunk} of 16`),
};

function planned(w: ChunkWork): MatmulOp {
  const op = phaseOps('compute', w).find((o) => o.kind === 'matmul');
  assert.ok(op?.kind === 'matmul');
  return op;
}

describe('the matmul stage kind', () => {
  it("is in the kinds' list after gemm, with its config key in the kernels: list", () => {
    assert.deepEqual(STAGE_IDS.slice(1, 5), ['kernel', 'gemm', 'matmul', 'collective']);
    assert.equal(stage('matmul'), matmul);
    assert.deepEqual(
      STEP_CONFIGS.map((c) => [c.key, c.stage]),
      [
        ['gemm', 'gemm'],
        ['matmul', 'matmul'],
        ['collective', 'collective'],
      ],
    );
  });

  it("plans one op per chunk, after the chunk's earlier steps, over the chunk's items at its device position", () => {
    const ops = phaseOps('compute', work(3, 1536, 512));
    assert.deepEqual(
      ops.map((o) => o.kind),
      ['kernel', 'matmul'],
    );
    const op = planned(work(3, 1536, 512));
    assert.deepEqual(
      { ...op, spec: op.spec === LAYER1 },
      {
        kind: 'matmul',
        stream: 's3',
        matmul: 'layer1',
        chunk: 3,
        first: 1536,
        count: 512,
        deviceFirst: 512,
        spec: true,
      },
    );
    assert.deepEqual([productRows(op), productCount(op)], [512, 1]);
  });

  it('counts 2·m·n·k flop, and reads A, B and the bias, and C only where beta is not zero', () => {
    const op = planned(work(0, 0, 512));
    assert.equal(matmulFlops(op), 2 * 512 * 4096 * 4096);
    assert.equal(matmulBytesRead(op), 512 * 4096 * 2 + 4096 * 4096 * 2 + 4096 * 2);
    const accumulating = planned(work(0, 0, 512, { ...LAYER1, beta: 1, bias: null, epilogue: 'none' }));
    assert.equal(matmulBytesRead(accumulating), 512 * 4096 * 2 + 4096 * 4096 * 2 + 512 * 4096 * 2);
    assert.deepEqual(
      matmul.work?.(op, () => 0),
      { flop: 2 * 512 * 4096 * 4096, bytes: 512 * 4096 * 2 + 4096 * 4096 * 2 + 4096 * 2 },
    );
    assert.deepEqual(
      matmul.timeline(op, () => 0),
      { buffer: null, kernel: 'layer1', bytes: 512 * 4096 * 2 + 4096 * 4096 * 2 + 4096 * 2 },
    );
  });

  it('makes one product per item where m is given (resident A and C, a B per item), and counts them all', () => {
    const weights: MatmulSpec = {
      ...LAYER1,
      a: { ...LAYER1.a, itemSize: null },
      b: { ...LAYER1.b, itemSize: 4096 * 4096 },
      c: { ...LAYER1.c, itemSize: null },
      m: 64,
    };
    const op = planned(work(1, 2, 3, weights));
    assert.deepEqual([productRows(op), productCount(op)], [64, 3]);
    assert.equal(matmulFlops(op), 3 * 2 * 64 * 4096 * 4096);
  });

  it('describes an op with its operands, bias, epilogue, chunk, rows and GFLOP', () => {
    const op = planned(work(3, 1536, 512));
    assert.equal(matmul.what(op, context), 'matmul layer1 (bf16 x·w1ᵀ + b1, bias-relu → h, n 4096 k 4096)');
    assert.equal(
      matmul.describe(op, context),
      'matmul layer1 (bf16 x·w1ᵀ + b1, bias-relu → h, n 4096 k 4096), chunk 3 of 16 (m 512, items 1536 to 2047, 17.179869184 GFLOP)',
    );
    const plain = planned(work(null, 0, 8192, { ...LAYER1, bias: null, epilogue: 'none', transB: false }));
    assert.equal(matmul.what(plain, context), 'matmul layer1 (bf16 x·w1 → h, n 4096 k 4096)');
  });

  it('writes only C, which verifies within the tolerance, and is counted as cuBLASLt matmuls in the printed plan', () => {
    const op = planned(work(0, 0, 512));
    assert.deepEqual(matmul.writes(op), ['h']);
    assert.equal(takesTolerance('h', [op]), true);
    assert.equal(takesTolerance('x', [op]), false);
    assert.deepEqual(
      nounCounts([op, op]).find((n) => n.one === 'cuBLASLt matmul'),
      { one: 'cuBLASLt matmul', many: 'cuBLASLt matmuls', always: false, count: 2 },
    );
  });

  it("has a letter, colour and terminal look of its own, on the SMs' row", () => {
    const others = STAGE_IDS.filter((id) => id !== 'matmul').map((id) => stage(id).look);
    const own = matmul.look;
    assert.ok(
      !others.some(
        (l) => l.letter === own.letter || l.colour === own.colour || l.terminal.background === own.terminal.background,
      ),
      JSON.stringify(own),
    );
    assert.deepEqual(own.engine, stage('kernel').look.engine);
  });
});

describe("cuBLASLt's column-major call for row-major operands", () => {
  it('computes Dᵀ = Bᵀ·Aᵀ: B first, n × m × k, B as Bᵀ transposed with leading dimension k', () => {
    const { operands, ...call } = columnMajorCall({ n: 1000, k: 4096, transB: true }, 512);
    assert.deepEqual(call, {
      transA: 'T',
      transB: 'N',
      m: 1000,
      n: 512,
      k: 4096,
      lda: 4096,
      ldb: 4096,
      ldc: 1000,
      layouts: {
        a: { rows: 4096, cols: 1000, ld: 4096 },
        b: { rows: 4096, cols: 512, ld: 4096 },
        c: { rows: 1000, cols: 512, ld: 1000 },
      },
    });
    assert.deepEqual(operands, ['b', 'a', 'c']);
  });

  it('without transB, takes B (k rows of n) as cuBLASLt’s A untransposed, n × k with leading dimension n', () => {
    const { layouts, transA } = columnMajorCall({ n: 1000, k: 4096, transB: false }, 512);
    assert.deepEqual([transA, layouts.a], ['N', { rows: 1000, cols: 4096, ld: 1000 }]);
  });
});
