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
    engine: { row: 3000, name: 'SMs', hostCopy: false, exclusive: false },
  },
  what: (op, c) => what(op, c.kernels),
  describe: (op, c) => `${what(op, c.kernels)}, ${c.chunk(op.chunk)} (elements ${op.first} to ${op.first + op.count - 1})`,
  timeline: (op, kernelBytes) => ({ buffer: null, kernel: op.kernel, bytes: kernelBytes(op) }),
  work: (op, kernelBytes) => ({ flop: 0, bytes: kernelBytes(op) }),
  subject: (op) => op.kernel,
  issue: (op, p) => ({ issue: p.kernel(op), hostTag: null }),
  failureHint: "Check the kernel's indexing against the chunk's element count it is given, or run it under compute-sanitizer.",
};
