import { formatBytes } from '../../format.js';
import type { StageKind } from '../api/index.js';

/** A chunk of a buffer copied from one device's copy to another's (cudaMemcpyPeerAsync), at the same offset in both. */
export type PeerOp = {
  readonly kind: 'peer';
  readonly stream: string;
  readonly buffer: string;
  readonly from: number;
  readonly to: number;
  readonly deviceOffset: number;
  readonly bytes: number;
  readonly chunk: number | null;
};

const what = (op: PeerOp) => `peer copy of "${op.buffer}" from GPU ${op.from} to GPU ${op.to}`;

export const peer: StageKind<'peer', PeerOp> = {
  id: 'peer',
  opKind: 'peer',
  moves: (op) => ({ count: 'peer', bytes: op.bytes }),
  owns: () => true,
  // A ring of slots is a one-device layout; peer copies run only in plans over several devices, which have none.
  touchesDevice: false,
  cupti: null,
  verify: 'exact',
  writes: (op) => [op.buffer],
  names: () => [],
  look: {
    letter: 'P',
    colour: '#d9822b',
    name: 'peer copy',
    prefix: 'peer',
    always: false,
    rate: true,
    // The printed plan counts peer copies in its total and its bytes.
    noun: null,
    terminal: { background: 'bgYellow', foreground: 'black' },
    engine: { row: 5000, name: 'peer copies', hostCopy: false, exclusive: true },
  },
  what,
  describe: (op, c) => `${what(op)}, ${c.chunk(op.chunk)} (${formatBytes(op.bytes)})`,
  timeline: (op) => ({ buffer: op.buffer, kernel: null, bytes: op.bytes }),
  subject: (op) => op.buffer,
  issue: (op, p) => ({ issue: p.peerCopy(op), hostTag: null }),
};
