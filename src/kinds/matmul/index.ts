import type { StageKind, StepConfig } from '../api/index.js';
import { LIBRARY_ON_SMS, SMS_ENGINE } from '../blas/on-sms.js';
import { matmulConfig } from './config.js';
import { productRows } from '../blas/column-major.js';
import { type MatmulOp, type MatmulSpec, matmulBytesRead, matmulFlops } from './spec.js';

const what = (op: MatmulOp) => {
  const { spec } = op;
  const bias = spec.bias ? ` + ${spec.bias.buffer}` : '';
  const epilogue = spec.epilogue === 'none' ? '' : `, ${spec.epilogue}`;
  return `matmul ${op.matmul} (${spec.dtype} ${spec.a.buffer}·${spec.b.buffer}${spec.transB ? 'ᵀ' : ''}${bias}${epilogue} → ${spec.c.buffer}, n ${spec.n} k ${spec.k})`;
};

/**
 * A cuBLASLt matmul per chunk, its bias and activation fused into the GEMM's epilogue, as PyTorch's `linear` runs it.
 */
export const matmul: StageKind<'matmul', MatmulOp> = {
  id: 'matmul',
  opKind: 'matmul',
  phase: 'compute',
  planStep: (step, w) => [
    {
      kind: 'matmul',
      stream: w.stream,
      matmul: step.label,
      chunk: w.chunk,
      first: w.range.first,
      count: w.range.count,
      deviceFirst: w.deviceFirst,
      spec: step.spec as MatmulSpec,
    },
  ],
  config: matmulConfig as StepConfig<unknown>,
  ...LIBRARY_ON_SMS,
  writes: (op) => [op.spec.c.buffer],
  names: (op) => [op.matmul],
  look: {
    letter: 'M',
    colour: '#0a9396',
    name: 'matmul',
    prefix: 'matmul',
    always: false,
    rate: false,
    noun: { one: 'cuBLASLt matmul', many: 'cuBLASLt matmuls', always: false },
    terminal: { background: 'bgCyan', foreground: 'black' },
    engine: SMS_ENGINE,
  },
  what,
  describe: (op, c) =>
    `${what(op)}, ${c.chunk(op.chunk)} (m ${productRows(op)}, items ${op.first} to ${op.first + op.count - 1}, ${matmulFlops(op) / 1e9} GFLOP)`,
  timeline: (op) => ({ buffer: null, kernel: op.matmul, bytes: matmulBytesRead(op) }),
  work: (op) => ({ flop: matmulFlops(op), bytes: matmulBytesRead(op) }),
  environment: [['CUDA_PIPE_CUBLASLT', 'the libcublasLt file for matmul stages, exactly (nothing else is tried)']],
  runtime: async () => (await import('./runtime.js')).runtime,
  failureHint:
    'Check that the operands hold m×k, k×n and m×n elements for the chunk (itemSize k and n) and the bias n, or run it under compute-sanitizer.',
};
