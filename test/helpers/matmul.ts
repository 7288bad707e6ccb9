import type { MatmulSpec } from '../../src/kinds/matmul/spec.js';

/** inference-matmul.yaml's first layer: x[m×4096] · w1ᵀ + b1, then ReLU, into h. */
export const LAYER1: MatmulSpec = {
  a: { buffer: 'x', itemSize: 4096, elementBytes: 2 },
  b: { buffer: 'w1', itemSize: null, elementBytes: 2 },
  c: { buffer: 'h', itemSize: 4096, elementBytes: 2 },
  bias: { buffer: 'b1', elementBytes: 2 },
  m: null,
  n: 4096,
  k: 4096,
  dtype: 'bf16',
  output: 'bfloat16',
  epilogue: 'bias-relu',
  transB: true,
  alpha: 1,
  beta: 0,
};
