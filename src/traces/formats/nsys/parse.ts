import { isDeviceIndex, MAX_DEVICE_INDEX } from '../../../vocabulary.js';
import type { Direction, GpuEvent, GpuKind, HostCall, HostMemory, ParsedTrace } from '../../events.js';
import type { ReadLimit } from './sniff.js';
import { openSqliteFile, type SqliteFile } from './sqlite.js';
import { NVTX, nvtxSteps } from './steps.js';
import { type Cells, type Column, may, need, nsysError, type TableOf, type TextOf, tableRows } from './tables.js';

// Nsight Systems SQLite exports (`nsys export --type sqlite`). Tables and columns are those of NVIDIA's "SQLite
// Schema Reference" (Nsight Systems Analysis Guide, schema 3.28.1); enum values are CUPTI's (cupti_activity.h):
// docs/analyze.md lists both. Each value is read from the column that holds it, never guessed from a name, except
// that a runtime call is a synchronize when its name holds `Synchronize`, as for Kineto. Times are ns; the model's
// are ms. Tables are created lazily by the exporter, so an absent table means no such events; a present table
// without a column we read, a NULL where the schema requires a value, or an event that ends before it starts is
// exit 2 naming the file, the table and the row.

const KERNEL = 'CUPTI_ACTIVITY_KIND_KERNEL';
const MEMCPY = 'CUPTI_ACTIVITY_KIND_MEMCPY';
const MEMSET = 'CUPTI_ACTIVITY_KIND_MEMSET';
const RUNTIME = 'CUPTI_ACTIVITY_KIND_RUNTIME';
const SYNC = 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION';
const STRINGS = 'StringIds';
const CONTEXTS = 'TARGET_INFO_CUDA_CONTEXT_INFO';

/**
 * CUpti_ActivityMemcpyKind: the kinds given a direction, as Kineto names them (array and host-to-host copies get none,
 * as there).
 */
const COPY_KINDS: Readonly<Record<number, { direction: Direction; label: string }>> = {
  1: { direction: 'h2d', label: 'HtoD' },
  2: { direction: 'd2h', label: 'DtoH' },
  8: { direction: 'd2d', label: 'DtoD' },
  10: { direction: 'p2p', label: 'PtoP' },
};
/** CUpti_ActivityMemoryKind. */
const MEMORY_KINDS: Readonly<Record<number, string>> = {
  0: 'Unknown',
  1: 'Pageable',
  2: 'Pinned',
  3: 'Device',
  4: 'Array',
  5: 'Managed',
  6: 'Device Static',
  7: 'Managed Static',
};
const HOST_MEMORY: Readonly<Record<number, HostMemory>> = { 1: 'pageable', 2: 'pinned' };
/** CUpti_ActivitySynchronizationType: the host waits in these; 2, a stream waiting on an event, does not block it. */
const HOST_SYNCS: Readonly<Record<number, string>> = {
  1: 'Event Synchronize',
  3: 'Stream Synchronize',
  4: 'Context Synchronize',
};
/** NCCL's kernels, as the Kineto reader recognises communication. */
const NCCL = /^nccl/i;
const SYNC_NAME = /Synchronize/;

const GPU_COMMON = [
  need('start'),
  need('end'),
  need('deviceId'),
  need('contextId'),
  need('streamId'),
  may('correlationId'),
  may('globalPid'),
];

export async function parseNsys(file: string, limit: ReadLimit): Promise<ParsedTrace> {
  const db = await openSqliteFile(file, limit);
  try {
    return readExport(file, db);
  } finally {
    db.close();
  }
}

function readExport(file: string, db: SqliteFile): ParsedTrace {
  if (!db.tables.has(STRINGS)) {
    const have = [...db.tables].sort();
    throw nsysError(
      file,
      `it is an SQLite database but not an Nsight Systems export: it has no ${STRINGS} table, which every export has (${have.length ? `its tables: ${have.slice(0, 8).join(', ')}${have.length > 8 ? ', …' : ''}` : 'it has no tables at all'})`,
    );
  }
  const table = (name: string, columns: readonly Column[]) => tableRows(file, db, name, columns);
  const strings = new Map<number, string>();
  for (const row of table(STRINGS, [need('id'), need('value')]))
    strings.set(row.int('id'), row.textOrNull('value') ?? '');
  const text = (row: Cells, tableName: string, column: string): string => {
    const id = row.int(column);
    const value = strings.get(id);
    if (value === undefined)
      throw nsysError(
        file,
        `${tableName} row ${row.rowid} has ${column} ${id}, a string id that ${STRINGS} does not hold`,
      );
    return value;
  };
  const correlations = new Correlations();
  const host = hostCalls(table, text, correlations);
  const issuedAt = new Map<number, number>();
  for (const call of host)
    if (call.kind === 'launch' && call.correlation !== null) issuedAt.set(call.correlation, call.end);
  const nullStreams = nullStreamsOf(table, db.tables.has(CONTEXTS));
  const gpu: GpuEvent[] = [];
  const gpuEvent = (
    row: Cells,
    kind: GpuKind,
    name: string,
    copy: Pick<GpuEvent, 'bytes' | 'direction' | 'hostMemory'>,
    communication: boolean,
  ): GpuEvent => {
    const { start, end } = row.span();
    const pid = pidOf(row.intOrNull('globalPid'));
    const device = row.int('deviceId');
    if (!isDeviceIndex(device))
      throw nsysError(
        file,
        `a GPU activity row ${row.rowid} has deviceId ${device}, not a device index (a whole number from 0 to ${MAX_DEVICE_INDEX})`,
      );
    const stream = row.int('streamId');
    const correlation = correlations.of(pid, row.intOrNull('correlationId'));
    return {
      device,
      stream: String(stream),
      kind,
      start,
      end,
      ...copy,
      name,
      correlation,
      communication,
      issued: correlation === null ? null : (issuedAt.get(correlation) ?? null),
      defaultStream: nullStreams?.get(`${pid}:${device}:${row.int('contextId')}`) === stream,
    };
  };
  for (const row of table(KERNEL, [...GPU_COMMON, need('shortName'), need('demangledName')])) {
    const name = text(row, KERNEL, 'demangledName');
    gpu.push(
      gpuEvent(
        row,
        'kernel',
        name,
        { bytes: null, direction: null, hostMemory: null },
        NCCL.test(text(row, KERNEL, 'shortName')) || NCCL.test(name),
      ),
    );
  }
  for (const row of table(MEMCPY, [...GPU_COMMON, need('bytes'), need('copyKind'), may('srcKind'), may('dstKind')])) {
    const copy = copyOf(row);
    gpu.push(
      gpuEvent(
        row,
        'memcpy',
        copy.name,
        { bytes: byteCount(file, row, MEMCPY), direction: copy.direction, hostMemory: copy.hostMemory },
        false,
      ),
    );
  }
  for (const row of table(MEMSET, [...GPU_COMMON, need('bytes')])) {
    gpu.push(
      gpuEvent(
        row,
        'memset',
        'Memset',
        { bytes: byteCount(file, row, MEMSET), direction: null, hostMemory: null },
        false,
      ),
    );
  }
  const { steps, notes: stepNotes } = nvtxSteps(table, text, db.tables.has(NVTX));
  const notes = [
    ...(![KERNEL, MEMCPY, MEMSET].some((t) => db.tables.has(t))
      ? [`it has none of ${KERNEL}, ${MEMCPY}, ${MEMSET}: was CUDA traced (nsys profile --trace=cuda)?`]
      : []),
    ...defaultStreamNotes(nullStreams, gpu),
    ...stepNotes,
  ];
  return { file, format: 'nsys', rank: null, gpu, host, steps, notes };
}

/**
 * Runtime calls, and the synchronizations CUPTI records beside them. A synchronization whose correlation id is a
 * runtime call's is that same call, already taken; one without (a driver-API synchronize) is added.
 */
function hostCalls(table: TableOf, text: TextOf, correlations: Correlations): HostCall[] {
  const calls: HostCall[] = [];
  const syncs = new Set<number>();
  for (const row of table(RUNTIME, [
    need('start'),
    need('end'),
    need('nameId'),
    may('correlationId'),
    may('globalTid'),
  ])) {
    const { start, end } = row.span();
    const name = text(row, RUNTIME, 'nameId');
    const correlation = correlations.of(pidOf(row.intOrNull('globalTid')), row.intOrNull('correlationId'));
    const kind = SYNC_NAME.test(name) ? 'sync' : 'launch';
    if (kind === 'sync' && correlation !== null) syncs.add(correlation);
    calls.push({ kind, name, start, end, correlation });
  }
  for (const row of table(SYNC, [
    need('start'),
    need('end'),
    need('syncType'),
    may('correlationId'),
    may('globalPid'),
  ])) {
    const name = HOST_SYNCS[row.int('syncType')];
    const correlation = correlations.of(pidOf(row.intOrNull('globalPid')), row.intOrNull('correlationId'));
    if (name === undefined || (correlation !== null && syncs.has(correlation))) continue;
    const { start, end } = row.span();
    calls.push({ kind: 'sync', name, start, end, correlation });
  }
  return calls;
}

function copyOf(row: Cells): { name: string; direction: Direction | null; hostMemory: HostMemory | null } {
  const kind = COPY_KINDS[row.int('copyKind')];
  const src = row.intOrNull('srcKind');
  const dst = row.intOrNull('dstKind');
  const hostSide = kind?.direction === 'h2d' ? src : kind?.direction === 'd2h' ? dst : null;
  const sides =
    src !== null && dst !== null ? ` (${MEMORY_KINDS[src] ?? 'Unknown'} -> ${MEMORY_KINDS[dst] ?? 'Unknown'})` : '';
  return {
    name: `Memcpy ${kind?.label ?? `kind ${row.int('copyKind')}`}${sides}`,
    direction: kind?.direction ?? null,
    hostMemory: hostSide === null ? null : (HOST_MEMORY[hostSide] ?? null),
  };
}

function byteCount(file: string, row: Cells, tableName: string): number {
  const bytes = row.int('bytes');
  if (bytes < 0) throw nsysError(file, `${tableName} row ${row.rowid} has bytes ${bytes}, not a count of bytes`);
  return bytes;
}

/**
 * Each context's legacy default stream (`nullStreamId`), keyed by process, device and context; null without the table.
 */
function nullStreamsOf(table: TableOf, present: boolean): Map<string, number> | null {
  if (!present) return null;
  const streams = new Map<string, number>();
  for (const row of table(CONTEXTS, [need('nullStreamId'), need('processId'), need('deviceId'), need('contextId')]))
    streams.set(`${row.int('processId')}:${row.int('deviceId')}:${row.int('contextId')}`, row.int('nullStreamId'));
  return streams;
}

function defaultStreamNotes(nullStreams: ReadonlyMap<string, number> | null, gpu: readonly GpuEvent[]): string[] {
  if (nullStreams === null)
    return [`it has no ${CONTEXTS} table, so work on the legacy default stream is not looked for`];
  const used = [...new Set(gpu.filter((e) => e.defaultStream).map((e) => e.stream))];
  return used.length
    ? [`the legacy default stream is read from ${CONTEXTS}.nullStreamId (stream ${used.join(', ')}), not assumed`]
    : [];
}

/**
 * CUPTI's correlation ids count per process, and one export may hold several processes (a launcher run under
 * nsys): each (process, id) pair gets an id of its own, so a launch never meets another process's kernel.
 */
class Correlations {
  private readonly ids = new Map<string, number>();
  of(pid: number | null, correlation: number | null): number | null {
    if (correlation === null) return null;
    const key = `${pid}:${correlation}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size + 1;
      this.ids.set(key, id);
    }
    return id;
  }
}

/** The process id inside a serialized GlobalId (the exporter's examples: `globalTid / 0x1000000 % 0x1000000`). */
function pidOf(globalId: number | null): number | null {
  return globalId === null ? null : Math.floor(globalId / 0x1000000) % 0x1000000;
}
