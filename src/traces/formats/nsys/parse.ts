import { UsageError } from '../../../errors.js';
import { isDeviceIndex, MAX_DEVICE_INDEX } from '../../../vocabulary.js';
import type { Direction, GpuEvent, GpuKind, HostCall, HostMemory, ParsedTrace, StepMark } from '../../events.js';
import { type ReadLimit, SQLITE_HINT } from './sniff.js';
import { openSqliteFile, type Row, type SqliteFile } from './sqlite.js';

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
const NVTX = 'NVTX_EVENTS';
const STRINGS = 'StringIds';
const CONTEXTS = 'TARGET_INFO_CUDA_CONTEXT_INFO';

const NS_PER_MS = 1e6;

/** CUpti_ActivityMemcpyKind: the kinds given a direction, as Kineto names them (array and host-to-host copies get none, as there). */
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
const HOST_SYNCS: Readonly<Record<number, string>> = { 1: 'Event Synchronize', 3: 'Stream Synchronize', 4: 'Context Synchronize' };
/** ENUM_NSYS_EVENT_TYPE: NvtxPushPopRange and NvtxStartEndRange. */
const NVTX_RANGES = [59, 60] as const;
const PROFILER_STEP = /^ProfilerStep#\d+$/;
/** NCCL's kernels, as the Kineto reader recognises communication. */
const NCCL = /^nccl/i;
const SYNC_NAME = /Synchronize/;

/** One column we read: `required` where the schema declares it NOT NULL and we need it. */
interface Column {
  readonly name: string;
  readonly required: boolean;
}
const need = (name: string): Column => ({ name, required: true });
const may = (name: string): Column => ({ name, required: false });

const GPU_COMMON = [need('start'), need('end'), need('deviceId'), need('contextId'), need('streamId'), may('correlationId'), may('globalPid')];

/** A row of one table, its values checked as they are taken: a failure names the file, the table and the rowid. */
interface Cells {
  readonly rowid: number;
  int(name: string): number;
  intOrNull(name: string): number | null;
  textOrNull(name: string): string | null;
  /** start and end, in ms; exit 2 where it ends before it starts. */
  span(): { start: number; end: number };
}

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
  for (const row of table(STRINGS, [need('id'), need('value')])) strings.set(row.int('id'), row.textOrNull('value') ?? '');
  const text = (row: Cells, tableName: string, column: string): string => {
    const id = row.int(column);
    const value = strings.get(id);
    if (value === undefined) throw nsysError(file, `${tableName} row ${row.rowid} has ${column} ${id}, a string id that ${STRINGS} does not hold`);
    return value;
  };
  const correlations = new Correlations();
  const host = hostCalls(table, text, correlations);
  const issuedAt = new Map<number, number>();
  for (const call of host) if (call.kind === 'launch' && call.correlation !== null) issuedAt.set(call.correlation, call.end);
  const nullStreams = nullStreamsOf(table, db.tables.has(CONTEXTS));
  const gpu: GpuEvent[] = [];
  const gpuEvent = (row: Cells, kind: GpuKind, name: string, copy: Pick<GpuEvent, 'bytes' | 'direction' | 'hostMemory'>, communication: boolean): GpuEvent => {
    const { start, end } = row.span();
    const pid = pidOf(row.intOrNull('globalPid'));
    const device = row.int('deviceId');
    if (!isDeviceIndex(device)) throw nsysError(file, `a GPU activity row ${row.rowid} has deviceId ${device}, not a device index (a whole number from 0 to ${MAX_DEVICE_INDEX})`);
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
    gpu.push(gpuEvent(row, 'kernel', name, { bytes: null, direction: null, hostMemory: null }, NCCL.test(text(row, KERNEL, 'shortName')) || NCCL.test(name)));
  }
  for (const row of table(MEMCPY, [...GPU_COMMON, need('bytes'), need('copyKind'), may('srcKind'), may('dstKind')])) {
    const copy = copyOf(row);
    gpu.push(gpuEvent(row, 'memcpy', copy.name, { bytes: byteCount(file, row, MEMCPY), direction: copy.direction, hostMemory: copy.hostMemory }, false));
  }
  for (const row of table(MEMSET, [...GPU_COMMON, need('bytes')])) {
    gpu.push(gpuEvent(row, 'memset', 'Memset', { bytes: byteCount(file, row, MEMSET), direction: null, hostMemory: null }, false));
  }
  const { steps, notes: stepNotes } = nvtxSteps(table, text, db.tables.has(NVTX));
  const notes = [
    ...(![KERNEL, MEMCPY, MEMSET].some((t) => db.tables.has(t)) ? [`it has none of ${KERNEL}, ${MEMCPY}, ${MEMSET}: was CUDA traced (nsys profile --trace=cuda)?`] : []),
    ...defaultStreamNotes(nullStreams, gpu),
    ...stepNotes,
  ];
  return { file, format: 'nsys', rank: null, gpu, host, steps, notes };
}

type TableOf = (name: string, columns: readonly Column[]) => Cells[];
type TextOf = (row: Cells, table: string, column: string) => string;

/**
 * Runtime calls, and the synchronizations CUPTI records beside them. A synchronization whose correlation id is a
 * runtime call's is that same call, already taken; one without (a driver-API synchronize) is added.
 */
function hostCalls(table: TableOf, text: TextOf, correlations: Correlations): HostCall[] {
  const calls: HostCall[] = [];
  const syncs = new Set<number>();
  for (const row of table(RUNTIME, [need('start'), need('end'), need('nameId'), may('correlationId'), may('globalTid')])) {
    const { start, end } = row.span();
    const name = text(row, RUNTIME, 'nameId');
    const correlation = correlations.of(pidOf(row.intOrNull('globalTid')), row.intOrNull('correlationId'));
    const kind = SYNC_NAME.test(name) ? 'sync' : 'launch';
    if (kind === 'sync' && correlation !== null) syncs.add(correlation);
    calls.push({ kind, name, start, end, correlation });
  }
  for (const row of table(SYNC, [need('start'), need('end'), need('syncType'), may('correlationId'), may('globalPid')])) {
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
  const sides = src !== null && dst !== null ? ` (${MEMORY_KINDS[src] ?? 'Unknown'} -> ${MEMORY_KINDS[dst] ?? 'Unknown'})` : '';
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

/** Each context's legacy default stream (`nullStreamId`), keyed by process, device and context; null without the table. */
function nullStreamsOf(table: TableOf, present: boolean): Map<string, number> | null {
  if (!present) return null;
  const streams = new Map<string, number>();
  for (const row of table(CONTEXTS, [need('nullStreamId'), need('processId'), need('deviceId'), need('contextId')]))
    streams.set(`${row.int('processId')}:${row.int('deviceId')}:${row.int('contextId')}`, row.int('nullStreamId'));
  return streams;
}

function defaultStreamNotes(nullStreams: ReadonlyMap<string, number> | null, gpu: readonly GpuEvent[]): string[] {
  if (nullStreams === null) return [`it has no ${CONTEXTS} table, so work on the legacy default stream is not looked for`];
  const used = [...new Set(gpu.filter((e) => e.defaultStream).map((e) => e.stream))];
  return used.length ? [`the legacy default stream is read from ${CONTEXTS}.nullStreamId (stream ${used.join(', ')}), not assumed`] : [];
}

interface Range {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly thread: number | null;
}

/**
 * Steps from NVTX ranges, on the host's clock (as Kineto's ProfilerStep#N is): the ranges named `ProfilerStep#N`
 * where there are any; else the ranges of the most repeated name among top-level ranges (those inside no other range
 * of their thread), at least two of them, numbered in time order; else none, and the whole trace is one step.
 */
function nvtxSteps(table: TableOf, text: TextOf, present: boolean): { steps: StepMark[]; notes: string[] } {
  if (!present) return { steps: [], notes: [`it has no ${NVTX} table: the whole trace is one step`] };
  const ranges: Range[] = [];
  let open = 0;
  for (const row of table(NVTX, [need('start'), may('end'), need('eventType'), may('text'), may('textId'), may('globalTid')])) {
    if (!(NVTX_RANGES as readonly number[]).includes(row.int('eventType'))) continue;
    if (row.intOrNull('end') === null) {
      open += 1;
      continue;
    }
    const { start, end } = row.span();
    const name = row.textOrNull('text') ?? (row.intOrNull('textId') === null ? '' : text(row, NVTX, 'textId'));
    ranges.push({ name, start, end, thread: row.intOrNull('globalTid') });
  }
  const notes = open ? [`${open} NVTX range${open === 1 ? ' has' : 's have'} no end (open when the capture stopped): not taken as steps`] : [];
  const mark = (r: Range, name: string): StepMark => ({ name, clock: 'host', device: null, start: r.start, end: r.end });
  const profilerSteps = ranges.filter((r) => PROFILER_STEP.test(r.name));
  if (profilerSteps.length) return { steps: profilerSteps.map((r) => mark(r, r.name)), notes: [...notes, 'steps are the NVTX ranges named ProfilerStep#N'] };
  const chosen = mostRepeated(topLevel(ranges));
  if (!chosen) return { steps: [], notes: [...notes, 'no NVTX range name repeats at the top level: the whole trace is one step'] };
  return {
    steps: chosen.ranges.map((r, i) => mark(r, `${chosen.name} #${i + 1}`)),
    notes: [...notes, `steps are the ${chosen.ranges.length} NVTX ranges named "${chosen.name}", the most repeated top-level range name`],
  };
}

/** Ranges that lie inside no other range of their thread (sorted by start, longest first at a tie). */
function topLevel(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start || b.end - a.end);
  const openUntil = new Map<number | null, number>();
  return sorted.filter((r) => {
    const until = openUntil.get(r.thread);
    if (until !== undefined && r.start < until) return false;
    openUntil.set(r.thread, r.end);
    return true;
  });
}

/** The named ranges of the most repeated name, at least two; a tie goes to the name that came first. */
function mostRepeated(ranges: readonly Range[]): { name: string; ranges: Range[] } | null {
  const byName = new Map<string, Range[]>();
  for (const r of ranges) {
    if (!r.name) continue;
    const named = byName.get(r.name);
    if (named) named.push(r);
    else byName.set(r.name, [r]);
  }
  let best: { name: string; ranges: Range[] } | null = null;
  for (const [name, named] of byName) if (named.length >= 2 && (!best || named.length > best.ranges.length)) best = { name, ranges: named };
  return best;
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

/** The rows of `table` (none where the exporter did not create it), each value checked as it is taken. */
function tableRows(file: string, db: SqliteFile, table: string, columns: readonly Column[]): Cells[] {
  if (!db.tables.has(table)) return [];
  const have = db.columns(table);
  const missing = columns.filter((c) => !have.has(c.name)).map((c) => c.name);
  if (missing.length) throw nsysError(file, `table ${table} has no column ${missing.join(', ')}, which the export schema gives it`);
  const index = new Map(columns.map((c, i) => [c.name, i]));
  const required = new Set(columns.filter((c) => c.required).map((c) => c.name));
  return db
    .rows(
      table,
      columns.map((c) => c.name),
    )
    .map((row) => cells(file, table, row, index, required));
}

function cells(file: string, table: string, row: Row, index: ReadonlyMap<string, number>, required: ReadonlySet<string>): Cells {
  const at = (name: string) => row.values[index.get(name) ?? -1] ?? null;
  const fail = (reason: string) => nsysError(file, `${table} row ${row.rowid} ${reason}`);
  const intOrNull = (name: string): number | null => {
    const value = at(name);
    if (value === null) {
      if (required.has(name)) throw fail(`has NULL ${name}, where the export schema requires a value`);
      return null;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) throw fail(`has ${name} ${JSON.stringify(typeof value === 'string' ? value : String(value))}, not an integer`);
    return value;
  };
  const int = (name: string): number => {
    const value = intOrNull(name);
    if (value === null) throw fail(`has NULL ${name}, where a value is needed`);
    return value;
  };
  return {
    rowid: row.rowid,
    int,
    intOrNull,
    textOrNull: (name) => {
      const value = at(name);
      return value === null ? null : typeof value === 'string' ? value : String(value);
    },
    span: () => {
      const start = int('start');
      const end = int('end');
      if (end < start) throw fail(`ends before it starts (start ${start} ns, end ${end} ns)`);
      return { start: start / NS_PER_MS, end: end / NS_PER_MS };
    },
  };
}

function nsysError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot analyse trace ${file}: ${reason}.`, { hint: SQLITE_HINT });
}
