import { UsageError } from '../errors.js';
import type { ParsedConfig } from './schema.js';
import type { BufferRole } from '../vocabulary.js';

// What this module needs of the resolved buffers and kernels (load.ts builds them and calls here).
type Locator = (path: readonly (string | number)[]) => string;
type BufferNames = ReadonlyArray<{ readonly name: string; readonly role: BufferRole }>;
type KernelBuffers = ReadonlyArray<{
  readonly label: string;
  readonly args: ReadonlyArray<{ readonly kind: string; readonly buffer?: string }>;
}>;

/**
 * One pipeline across two devices: the kernels up to `after` on the first, a peer copy of `buffers` per chunk, the
 * kernels after it and the store on the second.
 */
export interface Handoff {
  readonly after: string;
  readonly first: readonly string[];
  readonly second: readonly string[];
  /**
   * What each chunk hands over: every buffer both halves name, inputs only the second half reads, outputs only the
   * first half writes.
   */
  readonly buffers: readonly string[];
}

/** The config's devices (null: one device, `device`) and its cross-device pipeline, checked. */
export function readDevices(
  parsed: ParsedConfig,
  deviceGiven: boolean,
  buffers: BufferNames,
  kernels: KernelBuffers,
  locate: Locator,
  /** The config has a collective: several devices are then data-parallel ranks, each running the whole pipeline. */
  dataParallel = false,
): { devices: readonly number[] | 'all' | null; handoff: Handoff | null } {
  const { devices } = parsed;
  const handoff = parsed.pipeline.handoff;
  if (devices === undefined) {
    if (handoff) {
      throw new UsageError(
        `${locate(['pipeline', 'handoff'])}: a handoff hands each chunk from one device to another; it needs devices: [first, second].`,
      );
    }
    return { devices: null, handoff: null };
  }
  if (deviceGiven) {
    throw new UsageError(`${locate(['devices'])}: give device (one GPU) or devices (several), not both.`, {
      hint: 'devices: [0, 1] runs on both; its first device is the one the single-device modes run on.',
    });
  }
  if (Array.isArray(devices)) {
    const seen = new Set<number>();
    for (const d of devices) {
      if (seen.has(d)) throw new UsageError(`${locate(['devices'])}: device ${d} is listed twice.`);
      seen.add(d);
    }
    if (handoff && devices.length !== 2) {
      throw new UsageError(
        `${locate(['devices'])}: a handoff spans exactly two devices; devices lists ${devices.length}.`,
      );
    }
  }
  if (parsed.deviceMemory !== undefined) {
    throw new UsageError(
      `${locate(['deviceMemory'])}: a device-memory budget (a ring of slots) is measured on one device; it cannot be combined with devices yet.`,
      {
        hint: 'Drop deviceMemory to run on several devices, or devices to measure the ring.',
      },
    );
  }
  if (dataParallel && parsed.pipeline.mode === 'graph') {
    throw new UsageError(
      `${locate(['pipeline', 'mode'])}: a collective over several devices from one process issues each bucket's calls in one NCCL group across devices, which cuda-pipe does not capture into a CUDA graph.`,
      {
        hint: 'Use pipeline.mode: stream (or --mode stream) with devices, or one process per GPU (mpirun -np N cuda-pipe run …) to replay graphs.',
      },
    );
  }
  // A split and a handoff lay out chunk per stream; data-parallel ranks run the config's own layout on each device.
  if (!dataParallel && parsed.pipeline.topology !== 'chunk-per-stream') {
    throw new UsageError(
      `${locate(['pipeline', 'topology'])}: several devices run the chunk-per-stream layout; ${parsed.pipeline.topology} is measured on one device only.`,
    );
  }
  return { devices, handoff: handoff ? readHandoff(handoff.after, buffers, kernels, locate) : null };
}

function readHandoff(after: string, buffers: BufferNames, kernels: KernelBuffers, locate: Locator): Handoff {
  const where = locate(['pipeline', 'handoff', 'after']);
  const index = kernels.findIndex((k) => k.label === after);
  if (index < 0)
    throw new UsageError(`${where}: no kernel is called "${after}".`, {
      hint: `Kernels in this config: ${kernels.map((k) => k.label).join(', ')}.`,
    });
  if (index === kernels.length - 1) {
    throw new UsageError(`${where}: "${after}" is the last kernel, which leaves none for the second device.`, {
      hint: 'Name a kernel that has others after it.',
    });
  }
  const named = (ks: KernelBuffers) =>
    new Set(
      ks.flatMap((k) => k.args.flatMap((a) => (a.kind === 'buffer' && a.buffer !== undefined ? [a.buffer] : []))),
    );
  const first = kernels.slice(0, index + 1);
  const second = kernels.slice(index + 1);
  const before = named(first);
  const later = named(second);
  const role = new Map(buffers.map((b) => [b.name, b.role]));
  const handed = buffers
    .map((b) => b.name)
    .filter((name) => {
      const r = role.get(name);
      if (before.has(name) && later.has(name)) return true;
      if (later.has(name)) return r === 'in' || r === 'inout';
      return before.has(name) && (r === 'out' || r === 'inout');
    });
  if (!handed.length) {
    throw new UsageError(
      `${where}: the kernels after "${after}" share no buffer with those before it, so nothing would be handed over.`,
    );
  }
  return { after, first: first.map((k) => k.label), second: second.map((k) => k.label), buffers: handed };
}

/**
 * `devices: all` made a list once the devices are counted. A handoff needs exactly two; one device leaves a plain
 * single-device run, which the caller says.
 */
export function resolveDevices(
  devices: readonly number[] | 'all' | null,
  handoff: Handoff | null,
  count: number,
  where: string,
): readonly number[] | null {
  if (devices !== 'all') {
    const missing = devices?.find((d) => d >= count);
    if (missing !== undefined) {
      throw new UsageError(
        `${where}: device ${missing} does not exist: this machine has ${count} CUDA device${count === 1 ? '' : 's'} (0 to ${count - 1}).`,
        {
          hint: 'See them with `cuda-pipe probe --device all`.',
        },
      );
    }
    return devices;
  }
  if (handoff && count !== 2) {
    throw new UsageError(`${where}: a handoff spans exactly two devices, and devices: all found ${count}.`, {
      hint: 'List the two, e.g. devices: [0, 1].',
    });
  }
  return Array.from({ length: count }, (_, i) => i);
}
