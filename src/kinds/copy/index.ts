import { formatBytes } from '../../format.js';
import type { ChunkWork, ModelResource, StageKind } from '../api/index.js';

/** A chunk of a buffer copied between its host and device copies (cudaMemcpyAsync). */
export type CopyOp = {
  readonly kind: 'copy';
  readonly stream: string;
  readonly direction: 'h2d' | 'd2h';
  readonly buffer: string;
  readonly hostOffset: number;
  /** Separate from hostOffset so that a ring of device slots can map many chunks onto few. */
  readonly deviceOffset: number;
  readonly bytes: number;
  readonly chunk: number | null;
};

/** The chunk's range of one buffer, copied one way. */
export function copyOp(
  buffer: { readonly name: string; readonly elementBytes: number; readonly itemSize: number },
  w: Pick<ChunkWork, 'range' | 'deviceFirst' | 'stream' | 'chunk'>,
  direction: 'h2d' | 'd2h',
): CopyOp {
  // Ranges count items; each buffer's item is itemSize elements, so its bytes and offsets follow its own shape.
  const itemBytes = buffer.itemSize * buffer.elementBytes;
  return {
    kind: 'copy',
    stream: w.stream,
    direction,
    buffer: buffer.name,
    hostOffset: w.range.first * itemBytes,
    deviceOffset: w.deviceFirst * itemBytes,
    bytes: w.range.count * itemBytes,
    chunk: w.chunk,
  };
}

/**
 * A direction of the host link in the overlap model: its copies alone on whole buffers and its small copies' fixed
 * cost.
 */
const linkSide = (term: 'H2D' | 'D2H', measured: ModelResource['measured']): ModelResource => ({
  term,
  estimate: 'copy',
  hostLink: true,
  measured,
});

const COPY_NOUN = { one: 'copy', many: 'copies', always: true } as const;

// One op kind, two stages: the direction decides which engine runs it and how it is drawn.
function copyStage<D extends 'h2d' | 'd2h'>(
  direction: D,
  roles: readonly string[],
  model: ModelResource,
  look: Omit<StageKind<D, CopyOp>['look'], 'noun'>,
): StageKind<D, CopyOp> {
  const what = (op: CopyOp) => `${op.direction.toUpperCase()} of "${op.buffer}"`;
  return {
    id: direction,
    opKind: 'copy',
    phase: direction === 'h2d' ? 'load' : 'store',
    plan: (w) => w.buffers.filter((b) => roles.includes(b.role)).map((b) => copyOp(b, w, direction)),
    moves: (op) => ({ count: direction, bytes: op.bytes }),
    owns: (op) => op.direction === direction,
    touchesDevice: true,
    cupti: { kind: 'memcpy', memsets: false },
    model,
    // A copy moves bytes: what it lands is what a kernel wrote, and verifies as that kernel's output does.
    verify: 'exact',
    writes: (op) => (op.direction === 'h2d' ? [op.buffer] : []),
    names: () => [],
    look: { ...look, noun: COPY_NOUN },
    what,
    describe: (op, c) => `${what(op)}, ${c.chunk(op.chunk)} (${formatBytes(op.bytes)})`,
    timeline: (op) => ({ buffer: op.buffer, kernel: null, bytes: op.bytes }),
    subject: (op) => op.buffer,
    issue: (op, p) => ({ issue: p.copy(op), hostTag: null }),
  };
}

/** Loads: the buffers the GPU reads. */
export const h2d = copyStage(
  'h2d',
  ['in', 'inout'],
  linkSide('H2D', (p) => ({ wholeMs: p.h2dMs, opMs: p.h2dOpMs, opsPerChunk: p.h2dCopiesPerChunk, bytes: p.h2dBytes })),
  {
    letter: 'H',
    colour: '#1f6fd1',
    name: 'H2D',
    prefix: 'H2D',
    always: true,
    rate: true,
    terminal: { background: 'bgBlue', foreground: 'whiteBright' },
    engine: { row: 1000, name: 'H2D copy engine', hostCopy: true, exclusive: true },
  },
);

/** Stores: the buffers the GPU writes. */
export const d2h = copyStage(
  'd2h',
  ['out', 'inout'],
  linkSide('D2H', (p) => ({ wholeMs: p.d2hMs, opMs: p.d2hOpMs, opsPerChunk: p.d2hCopiesPerChunk, bytes: p.d2hBytes })),
  {
    letter: 'D',
    colour: '#8e3fb5',
    name: 'D2H',
    prefix: 'D2H',
    always: true,
    rate: true,
    terminal: { background: 'bgMagenta', foreground: 'whiteBright' },
    engine: { row: 2000, name: 'D2H copy engine', hostCopy: true, exclusive: true },
  },
);
