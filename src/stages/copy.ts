import { formatBytes } from '../format.js';
import type { StageKind } from './stage.js';

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

// One op kind, two stages: the direction decides which engine runs it and how it is drawn.
function copyStage<D extends 'h2d' | 'd2h'>(direction: D, look: StageKind<D, CopyOp>['look']): StageKind<D, CopyOp> {
  const what = (op: CopyOp) => `${op.direction.toUpperCase()} of "${op.buffer}"`;
  return {
    id: direction,
    opKind: 'copy',
    owns: (op) => op.direction === direction,
    touchesDevice: true,
    cupti: 'memcpy',
    look,
    what,
    describe: (op, c) => `${what(op)}, ${c.chunk(op.chunk)} (${formatBytes(op.bytes)})`,
    timeline: (op) => ({ buffer: op.buffer, kernel: null, bytes: op.bytes }),
    subject: (op) => op.buffer,
    issue: (op, p) => ({ issue: p.copy(op), hostTag: null }),
  };
}

export const h2d = copyStage('h2d', {
  letter: 'H', colour: '#1f6fd1', name: 'H2D', prefix: 'H2D', always: true, rate: true,
  terminal: { background: 'bgBlue', foreground: 'whiteBright' },
  engine: { row: 1000, name: 'H2D copy engine', hostCopy: true, exclusive: true },
});

export const d2h = copyStage('d2h', {
  letter: 'D', colour: '#8e3fb5', name: 'D2H', prefix: 'D2H', always: true, rate: true,
  terminal: { background: 'bgMagenta', foreground: 'whiteBright' },
  engine: { row: 2000, name: 'D2H copy engine', hostCopy: true, exclusive: true },
});
