import type { StageKind } from '../api/index.js';
import { SMS, SMS_ENGINE } from '../blas/on-sms.js';

export type KernelOp = {
  readonly kind: 'kernel';
  readonly stream: string;
  readonly kernel: string;
  readonly chunk: number | null;
  readonly first: number;
  readonly count: number;
  /** Element index in the device buffers where this chunk lives. */
  readonly deviceFirst: number;
};

const what = (op: KernelOp, kernels: readonly { readonly label: string; readonly entry: string }[]) => {
  const kernel = kernels.find((k) => k.label === op.kernel);
  return `kernel ${op.kernel}${kernel && kernel.entry !== op.kernel ? ` (${kernel.entry})` : ''}`;
};

/** A kernel from kernels/ over the chunk's element range, launched from a launch record built once. */

export const kernel: StageKind<'kernel', KernelOp> = {
  id: 'kernel',
  opKind: 'kernel',
  phase: 'compute',
  planStep: (step, w) => [
    {
      kind: 'kernel',
      stream: w.stream,
      kernel: step.label,
      chunk: w.chunk,
      first: w.range.first,
      count: w.range.count,
      deviceFirst: w.deviceFirst,
    },
  ],
  moves: () => null,
  owns: () => true,
  touchesDevice: true,
  cupti: { kind: 'kernel', memsets: false },
  model: SMS,
  // A user's kernel may sum in another order per layout (atomics, a grid that follows the chunk): the config says.
  verify: 'tolerance',
  writes: () => null,
  names: (op) => [op.kernel],
  look: {
    letter: 'K',
    colour: '#2a9d3a',
    name: 'kernel',
    prefix: 'kernel',
    always: true,
    rate: false,
    noun: { one: 'kernel launch', many: 'kernel launches', always: true },
    terminal: { background: 'bgGreen', foreground: 'black' },
    engine: SMS_ENGINE,
  },
  what: (op, c) => what(op, c.kernels),
  describe: (op, c) =>
    `${what(op, c.kernels)}, ${c.chunk(op.chunk)} (elements ${op.first} to ${op.first + op.count - 1})`,
  timeline: (op, kernelBytes) => ({ buffer: null, kernel: op.kernel, bytes: kernelBytes(op) }),
  work: (op, kernelBytes) => ({ flop: 0, bytes: kernelBytes(op) }),
  subject: (op) => op.kernel,
  issue: (op, p) => ({ issue: p.kernel(op), hostTag: null }),
  failureHint:
    "Check the kernel's indexing against the chunk's element count it is given, or run it under compute-sanitizer.",
};
