import { UsageError } from '../errors.js';
import { ringSlots, splitRanges } from '../chunking.js';
import type { PrioritySpec } from '../model/schedule.js';
import type { PlacedDefaultOp } from '../vocabulary.js';
import { bytesPerItem, residentBytes } from './items.js';
import type { ParsedConfig } from './schema.js';

// Checks and readings of the stream toolbox's config fields, kept apart from the loader's core (which imports
// this module, so this one names what it needs of the loader's types structurally).

type Locator = (path: readonly (string | number)[]) => string;

export type { PrioritySpec } from '../model/schedule.js';

export interface LatencySpec {
  /** The label of the kernel launched on the urgent stream; it is not launched per chunk. */
  readonly kernel: string;
  readonly elements: number;
  readonly priority: PrioritySpec;
}

export function readLatency(
  parsed: ParsedConfig,
  kernels: readonly { readonly label: string }[],
  elements: number,
  locate: Locator,
): LatencySpec | null {
  const latency = parsed.latency;
  if (!latency) return null;
  if (!kernels.some((k) => k.label === latency.kernel)) {
    throw new UsageError(`${locate(['latency', 'kernel'])}: no kernel is called "${latency.kernel}".`, {
      hint: `Kernels in this config: ${kernels.map((k) => k.label).join(', ')}.`,
    });
  }
  if (kernels.length < 2)
    throw new UsageError(
      `${locate(['latency', 'kernel'])}: the pipeline needs a kernel of its own beside the latency kernel.`,
    );
  if (latency.elements < 1 || latency.elements > elements) {
    throw new UsageError(
      `${locate(['latency', 'elements'])}: ${latency.elements} elements; the buffers have ${elements}.`,
    );
  }
  return {
    kernel: latency.kernel,
    elements: latency.elements,
    priority: { level: latency.priority, where: locate(['latency', 'priority']) },
  };
}

/**
 * A device-memory budget or slot count must leave room for a chunk (beside the resident buffers, which sit on the
 * device whole), and a ring needs chunks issued in order.
 */
export function checkRing(
  parsed: ParsedConfig,
  buffers: readonly {
    readonly role: string;
    readonly itemSize: number;
    readonly elementBytes: number;
    readonly bytes: number;
  }[],
  units: number,
  locate: Locator,
): void {
  const { pipeline } = parsed;
  const resident = residentBytes(buffers);
  if (parsed.deviceMemory !== undefined && resident >= parsed.deviceMemory) {
    throw new UsageError(
      `${locate(['deviceMemory'])}: deviceMemory: the resident buffers take ${resident} bytes, which leaves none of the budget of ${parsed.deviceMemory} bytes for chunks.`,
      {
        hint: 'Give a larger deviceMemory, or smaller resident buffers.',
      },
    );
  }
  const ranges = splitRanges(units, pipeline.chunks, pipeline.align);
  const slots = ringSlots({
    chunks: ranges.length,
    chunkElements: ranges[0]?.count ?? units,
    bytesPerElement: bytesPerItem(buffers),
    budgetBytes: parsed.deviceMemory === undefined ? null : parsed.deviceMemory - resident,
    slots: pipeline.slots ?? null,
  });
  if (slots !== null && typeof slots === 'object') {
    const where = locate(pipeline.slots !== undefined ? ['pipeline', 'slots'] : ['deviceMemory']);
    throw new UsageError(`${where}: ${slots.error}.`, {
      hint: 'Use more chunks (smaller slots), fewer slots, or a larger deviceMemory.',
    });
  }
  if (typeof slots === 'number' && [pipeline.order].flat().includes('breadth-first')) {
    throw new UsageError(
      `${locate(['pipeline', 'order'])}: a ring of ${slots} device slots reloads a slot only once the chunk before it has left it, ` +
        'which needs depth-first issue; breadth-first would issue every load before the stores it must wait for.',
      { hint: 'Use order: depth-first.' },
    );
  }
}

/** The ops a config moves onto default streams, from `legacyDefaultOp` or `defaultStreamOp` (one of them). */
export function readDefaultStreamOps(p: ParsedConfig['pipeline'], locate: Locator): PlacedDefaultOp[] {
  if (p.legacyDefaultOp && p.defaultStreamOp) {
    throw new UsageError(
      `${locate(['pipeline', 'defaultStreamOp'])}: give defaultStreamOp or legacyDefaultOp, not both; legacyDefaultOp: { chunk: N } is defaultStreamOp: { chunk: N, stream: legacy }.`,
    );
  }
  const field = p.defaultStreamOp ? 'defaultStreamOp' : 'legacyDefaultOp';
  const spec =
    p.defaultStreamOp ??
    (p.legacyDefaultOp ? { chunk: p.legacyDefaultOp.chunk, op: 'kernel' as const, stream: 'legacy' as const } : null);
  if (!spec) return [];
  if (spec.chunk >= p.chunks) {
    throw new UsageError(
      `${locate(['pipeline', field, 'chunk'])}: chunk ${spec.chunk} does not exist; chunks are 0 to ${p.chunks - 1}.`,
    );
  }
  if (p.topology !== 'chunk-per-stream') {
    throw new UsageError(
      `${locate(['pipeline', field])}: ${field} moves one chunk's op off its stream, which only the chunk-per-stream topology has; this pipeline is ${p.topology}.`,
      {
        hint: `Use topology: chunk-per-stream, or remove ${field}.`,
      },
    );
  }
  const streams = [...new Set(Array.isArray(spec.stream) ? spec.stream : [spec.stream])];
  const kind = p.streamKind ?? (p.streamFlags === 'default' ? 'blocking' : 'non-blocking');
  if (streams.includes('legacy') && kind !== 'blocking') {
    // Only blocking streams synchronise with cudaStreamLegacy: on any other kind the op would cost nothing and the
    // comparison would say so, which is not what an op on the legacy default stream is there to show.
    throw new UsageError(
      `${locate(['pipeline', field])}: an op on the legacy default stream serialises only blocking streams, ` +
        `and these are ${kind}${p.streamKind === undefined ? ' (the default)' : ''}, so it would show nothing.`,
      {
        hint: `Add streamKind: blocking to the pipeline, or remove ${field}.`,
      },
    );
  }
  return streams.map((stream) => ({ stream, chunk: spec.chunk, op: spec.op }));
}
