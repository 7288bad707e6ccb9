import type { ModelResource, StageKind } from '../kind.js';

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

/**
 * The SMs in the overlap model: every compute step's time alone on whole buffers (a mode per step), or all of them
 * chunked as the layout runs them, and the fixed cost of a launch.
 */
export const SMS: ModelResource = {
  term: 'kernels',
  estimate: 'alone',
  hostLink: false,
  measured: (p) => ({ wholeMs: p.kernelWholeMs, opMs: p.launchOpMs, opsPerChunk: p.kernelsPerChunk, bytes: 0 }),
};

/** A kernel from kernels/ over the chunk's element range, launched from a launch record built once. */
/** The SMs as the trace draws them: one engine row that every compute kind on them shares. */
export const SMS_ENGINE = { row: 3000, name: 'SMs', hostCopy: false, exclusive: false } as const;

/**
 * What every library call on the SMs (a cuBLAS GEMM, a cuBLASLt matmul) is alike in: it moves no bytes and owns its
 * op kind; it launches kernels of its own, and may clear its workspace with a memset among them, each with the
 * correlation id of the call, which the timeline spans; its time comes from its mode alone on whole buffers; and the
 * library may pick another algorithm for a chunk's rows than for the whole buffers, so its outputs take
 * verify.tolerance.
 */
export const LIBRARY_ON_SMS = {
  moves: () => null,
  owns: () => true,
  touchesDevice: true,
  cupti: { kind: 'kernel', memsets: true },
  model: SMS,
  verify: 'tolerance',
  subject: (op: { readonly kernel: string | null }) => op.kernel,
} as const;

export const kernel: StageKind<'kernel', KernelOp> = {
  id: 'kernel',
  opKind: 'kernel',
  phase: 'compute',
  planStep: (step, w) => [{ kind: 'kernel', stream: w.stream, kernel: step.label, chunk: w.chunk, first: w.range.first, count: w.range.count, deviceFirst: w.deviceFirst }],
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
  describe: (op, c) => `${what(op, c.kernels)}, ${c.chunk(op.chunk)} (elements ${op.first} to ${op.first + op.count - 1})`,
  timeline: (op, kernelBytes) => ({ buffer: null, kernel: op.kernel, bytes: kernelBytes(op) }),
  work: (op, kernelBytes) => ({ flop: 0, bytes: kernelBytes(op) }),
  subject: (op) => op.kernel,
  issue: (op, p) => ({ issue: p.kernel(op), hostTag: null }),
  failureHint: "Check the kernel's indexing against the chunk's element count it is given, or run it under compute-sanitizer.",
};
