import { createHash } from 'node:crypto';
import type { Config, ConfigHost } from './types.js';

// What pairs results of the same config across runs and versions.

/**
 * A stable hash of what the config asks for, used to pair results of the same config across runs. Fields added
 * after the first baselines were recorded count only when they differ from their defaults, and the stream kind is
 * hashed in its old spelling, so that a config that does not use them keeps its hash.
 */
export function configHash(config: Config): string {
  // The sweep section says what `sweep` measures, not what a run of the config measures: it stays out.
  const {
    path: _path,
    description: _description,
    notes: _notes,
    host,
    deviceMemory,
    latency,
    pipeline,
    items,
    tolerance,
    steps,
    ...rest
  } = config;
  const {
    chunks,
    streams,
    streamKind,
    topology,
    mode,
    slots,
    defaultStreamOps,
    priority,
    connections,
    align,
    orders,
    handoff,
  } = pipeline;
  // One kernel on the legacy stream is what `legacyDefaultOp` always meant: hashed as it was, so its results still
  // pair.
  const [onlyOp, ...moreOps] = defaultStreamOps;
  const legacyDefaultOp =
    onlyOp && !moreOps.length && onlyOp.stream === 'legacy' && onlyOp.op === 'kernel' ? { chunk: onlyOp.chunk } : null;
  const legacyFlags =
    streamKind === 'non-blocking' ? 'non-blocking' : streamKind === 'blocking' ? 'default' : streamKind;
  const extras = {
    ...(topology === 'chunk-per-stream' ? {} : { topology }),
    ...(mode === 'stream' ? {} : { mode }),
    ...(slots === null ? {} : { slots }),
    ...(legacyDefaultOp === null ? (defaultStreamOps.length ? { defaultStreamOps } : {}) : { legacyDefaultOp }),
    ...(priority === null ? {} : { priority: priority.level }),
    ...(handoff === null ? {} : { handoff: handoff.after }),
    ...(connections === null ? {} : { connections }),
  };
  const what = {
    name: rest.name,
    device: rest.device,
    ...(rest.devices === null ? {} : { devices: rest.devices }),
    buffers: rest.buffers.map(({ itemSize, ...b }) => (itemSize === 1 ? b : { ...b, itemSize })),
    kernels: rest.kernels,
    ...(steps === undefined ? {} : { steps }),
    pipeline: { chunks, streams, streamFlags: legacyFlags, align, orders, ...extras },
    repetitions: rest.repetitions,
    elements: rest.elements,
    ...(host === null ? {} : { host: hashedHost(host) }),
    ...(deviceMemory === null ? {} : { deviceMemory }),
    ...(items === null ? {} : { items }),
    ...(tolerance === null ? {} : { tolerance }),
    ...(latency === null
      ? {}
      : { latency: { kernel: latency.kernel, elements: latency.elements, priority: latency.priority.level } }),
  };
  return createHash('sha256')
    .update(JSON.stringify(what, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
    .digest('hex')
    .slice(0, 16);
}

/** The host stage as hashed: a checksum on the default pool as the old form was, so its results still pair. */
function hashedHost(host: ConfigHost): unknown {
  if (host.thread === 'js') return { name: host.name, function: host.function, thread: 'js' };
  if (host.after?.kind === 'checksum' && host.before === null && host.workers === null)
    return { name: host.name, function: 'checksum' };
  return host;
}
