import type { ConfigBuffer } from '../config/types.js';
import { splitRanges, wholeRange } from '../chunking.js';
import { phaseOps } from '../kinds/index.js';
import type { IssueOrder, SmallOp } from '../vocabulary.js';
import { deviceFirst, kernelOps, loads, makeStreams, type PipelineShape, stores, timedSchedule } from './schedules.js';
import type { ChunkRange, Op, Schedule } from './types.js';

// The schedules that measure parts of the overlap model apart from a layout's copies: the link with both copy
// directions at once, the kernels chunked without copies, and batches of small ops whose fixed costs a chunk pays.

/**
 * H2D and D2H at once: each direction's bytes cut into `ranges`, spread over `streamsPerDirection` streams per
 * direction and issued alternately. Two whole-buffer copies understate the link, and small pieces pay a fixed cost
 * each: `linkRanges` picks pieces large enough to show the link at its best (under a ring, the pipeline's chunks,
 * which fit its slots). Null when the buffers move data one way only. Under a ring, copies of one slot may overlap:
 * the link mode times bytes, not their contents.
 */
export function bidirectionalSchedule(
  buffers: readonly ConfigBuffer[],
  ranges: readonly ChunkRange[],
  device: number,
  gated: boolean,
  streamsPerDirection = 2,
  shape: Pick<PipelineShape, 'ring' | 'base'> = {},
): Schedule | null {
  const up = loads(buffers);
  const down = stores(buffers);
  if (!up.length || !down.length) return null;
  const body: Op[] = [];
  for (const r of ranges) {
    const upStream = `s${r.index % streamsPerDirection}`;
    const downStream = `s${streamsPerDirection + (r.index % streamsPerDirection)}`;
    // Each direction's copies as the load and store kinds plan a chunk's, without its compute or host stage.
    const work = { buffers, compute: [], host: null, range: r, deviceFirst: deviceFirst(shape, r), chunk: r.index };
    body.push(
      ...phaseOps('load', { ...work, stream: upStream }),
      ...phaseOps('store', { ...work, stream: downStream }),
    );
  }
  return timedSchedule({
    role: { kind: 'link', copiesPerDirection: ranges.length, streamsPerDirection },
    device,
    description: `H2D and D2H at once, ${ranges.length} copies per buffer over ${streamsPerDirection} streams per direction`,
    streams: makeStreams(2 * streamsPerDirection, 'non-blocking', device),
    body,
    ranges,
    verify: false,
    gated,
  });
}

/**
 * The kernels alone, chunked and spread over the streams exactly as an overlapped layout runs them, with no copies:
 * the model's kernel term, so that concurrency between kernels and per-launch costs are measured, not assumed.
 */
export function kernelsChunkedSchedule(
  shape: PipelineShape,
  ranges: readonly ChunkRange[],
  streams: number,
  order: IssueOrder,
): Schedule {
  const body = ranges.flatMap((r) => kernelOps(shape, shape.kernels, r, `s${r.index % streams}`, r.index));
  return timedSchedule({
    role: { kind: 'kernels-chunked', layout: { chunks: ranges.length, streams, order, topology: 'chunk-per-stream' } },
    device: shape.device,
    description: `kernels alone, ${ranges.length} chunks over ${streams} streams, no copies`,
    streams: makeStreams(streams, shape.streamKind, shape.device),
    body,
    ranges,
    verify: false,
    gated: shape.gated,
  });
}

/** Small ops back to back, and how many: enough that the batch dwarfs the start and end events. */
export const SMALL_OP_BATCH = 200;
/** Bytes of each small copy: small enough that its transfer time is negligible next to its fixed cost. */
export const SMALL_COPY_BYTES = 4096;

/**
 * A batch of one kind of small op on one stream, always behind the gate, so that the GPU time per op is the op's
 * fixed cost on the device (copies: a few µs however small; launches: the GPU side of a launch), while the host
 * timer around the issue loop gives the host's cost per op. Null when the buffers have no such copy to make.
 */
export function opCostSchedule(shape: PipelineShape, op: SmallOp): Schedule | null {
  const buffer = op === 'h2d' ? loads(shape.buffers)[0] : op === 'd2h' ? stores(shape.buffers)[0] : undefined;
  if (op !== 'launch' && !buffer) return null;
  // Under a ring the device holds only the slots of each buffer: a copy may not run past them.
  const ring = shape.ring?.ring;
  const deviceBytes =
    buffer && ring ? ring.slots * ring.slotElements * buffer.itemSize * buffer.elementBytes : (buffer?.bytes ?? 0);
  const bytes = buffer ? Math.min(SMALL_COPY_BYTES, buffer.bytes, deviceBytes) : 0;
  const body: Op[] = Array.from(
    { length: SMALL_OP_BATCH },
    (): Op =>
      buffer
        ? {
            kind: 'copy',
            stream: 's0',
            direction: op === 'd2h' ? 'd2h' : 'h2d',
            buffer: buffer.name,
            hostOffset: 0,
            deviceOffset: 0,
            bytes,
            chunk: null,
          }
        : { kind: 'empty', stream: 's0' },
  );
  const what = op === 'launch' ? 'launches of an empty kernel' : `${bytes}-byte ${op.toUpperCase()} copies`;
  return timedSchedule({
    role: { kind: 'op-cost', op },
    device: shape.device,
    description: `${SMALL_OP_BATCH} ${what} back to back, behind the gate`,
    streams: makeStreams(1, 'non-blocking', shape.device),
    body,
    ranges: [wholeRange(shape.elements)],
    verify: false,
    gated: true,
  });
}

/** The link moves most both ways with copies of MiBs (GPU-FACTS.md: ~96 GB/s at 4 MiB, ~57 GB/s at 256 KiB). */
const LINK_PIECE_BYTES = 8 * 2 ** 20;
const LINK_PIECES = { min: 2, max: 16 } as const;

/** Pieces for the link at its best: about 8 MiB each, at least two a direction (one per stream), at most 16. */
export function linkRanges(buffers: readonly ConfigBuffer[], elements: number): ChunkRange[] {
  const bytes = Math.max(...buffers.filter((b) => b.role !== 'scratch').map((b) => b.bytes));
  const pieces = Math.min(
    elements,
    Math.max(LINK_PIECES.min, Math.min(LINK_PIECES.max, Math.floor(bytes / LINK_PIECE_BYTES))),
  );
  return splitRanges(elements, pieces);
}
