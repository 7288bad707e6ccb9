import { UsageError } from '../../errors.js';
import type { ComputeStep, StageKind, StepConfig } from '../api/index.js';
import { LIBRARY_ON_SMS, SMS_ENGINE } from '../blas/on-sms.js';
import { chunkShortOfB, gemmConfig } from './config.js';
import { productRows } from '../blas/column-major.js';
import { type GemmOp, type GemmSpec, gemmBytesRead, gemmFlops } from './spec.js';

const what = (op: GemmOp) => {
  const { spec } = op;
  return `gemm ${op.gemm} (${spec.dtype} ${spec.a.buffer}·${spec.b.buffer}${spec.transB ? 'ᵀ' : ''} → ${spec.c.buffer}, n ${spec.n} k ${spec.k})`;
};

export const gemm: StageKind<'gemm', GemmOp> = {
  id: 'gemm',
  opKind: 'gemm',
  phase: 'compute',
  planStep: (step: ComputeStep, w) => {
    const spec = step.spec as GemmSpec;
    const short = chunkShortOfB(spec, w.range.count);
    if (short)
      throw new UsageError(
        `kernels entry "${step.label}": gemm.b: ${w.chunk === null ? 'the whole buffer' : `chunk ${w.chunk}`} of ${short}`,
        {
          hint: 'Use fewer chunks, or give B itemSize: k × n so that each item holds a whole B (with m).',
        },
      );
    return [
      {
        kind: 'gemm',
        stream: w.stream,
        gemm: step.label,
        chunk: w.chunk,
        first: w.range.first,
        count: w.range.count,
        deviceFirst: w.deviceFirst,
        spec,
      },
    ];
  },
  config: gemmConfig as StepConfig<unknown>,
  ...LIBRARY_ON_SMS,
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
    engine: SMS_ENGINE,
  },
  what,
  describe: (op, c) =>
    `${what(op)}, ${c.chunk(op.chunk)} (m ${productRows(op)}, items ${op.first} to ${op.first + op.count - 1}, ${gemmFlops(op) / 1e9} GFLOP)`,
  timeline: (op) => ({ buffer: null, kernel: op.gemm, bytes: gemmBytesRead(op) }),
  work: (op) => ({ flop: gemmFlops(op), bytes: gemmBytesRead(op) }),
  environment: [['CUDA_PIPE_CUBLAS', 'the libcublas file for gemm stages, exactly (nothing else is tried)']],
  runtime: async () => (await import('./runtime.js')).runtime,
  failureHint:
    'Check that the operands hold m×k, k×n and m×n elements for the chunk (itemSize k and n), or run it under compute-sanitizer.',
};
