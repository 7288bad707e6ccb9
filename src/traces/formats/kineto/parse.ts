import { isDeviceIndex, MAX_DEVICE_INDEX } from '../../../vocabulary.js';
import {
  type ChromeReads,
  type Field,
  shown,
  type TopFields,
  type TraceRecord,
  type TraceRecords,
} from '../../chrome/record.js';
import { traceError } from '../../errors.js';
import type {
  DeviceShape,
  Direction,
  GpuEvent,
  GpuKind,
  HostCall,
  HostMemory,
  LaunchShape,
  StepMark,
} from '../../events.js';
import type { PacedParse, Sniffed } from '../format.js';
import { HostRanges, launchLabels } from './labels.js';

// PyTorch profiler (Kineto) Chrome traces. Each field is read where Kineto writes it, never guessed from a name
// where a field exists: `cat` says what an event is, `args.stream`, `args.device`, `args.bytes` and
// `args.correlation` where the work ran and what issued it. Only a copy's direction and host memory kind come from
// its name (`Memcpy HtoD (Pageable -> Device)`), as Kineto writes them nowhere else. `ts` and `dur` are µs.

const GPU_CATS: Readonly<Record<string, GpuKind>> = { kernel: 'kernel', gpu_memcpy: 'memcpy', gpu_memset: 'memset' };
const DIRECTIONS: Readonly<Record<string, Direction>> = { HtoD: 'h2d', DtoH: 'd2h', DtoD: 'd2d', PtoP: 'p2p' };
const STEP = /^ProfilerStep#\d+$/;
const SYNC = /Synchronize/;
/**
 * The stream id CUPTI gives the legacy default stream in the traces we know of. Neither Kineto's nor PyTorch's
 * documentation states it (docs/analyze.md): an assumption, named wherever a finding rests on it.
 */
export const KINETO_DEFAULT_STREAM = '7';
/** NCCL's kernels, as Holistic Trace Analysis recognises communication (`^nccl.*Kernel`), taken a little wider. */
const NCCL = /^nccl/i;

const HOST_CATS: ReadonlySet<string> = new Set(['cuda_runtime', 'cuda_driver', 'cuda_sync']);
const STEP_CATS: ReadonlySet<string> = new Set(['user_annotation', 'gpu_user_annotation']);
/** The host ranges a launch is named by: PyTorch's ops and the program's own ranges (record_function, NVTX). */
const LABEL_CATS: ReadonlySet<string> = new Set(['cpu_op', 'user_annotation']);

/** Kineto's top-level keys: a file with one of them is Kineto's. */
const TOP_KEYS = ['schemaVersion', 'distributedInfo', 'deviceProperties'] as const;
const RANK = 'distributedInfo.rank';
const BASE_TIME = 'baseTimeNanoseconds';
const DEVICES = 'deviceProperties';

/** The fields it reads: of each event, of its args (a kernel's launch shape among them), and of the document. */
export const KINETO_READS: ChromeReads = {
  event: ['ph', 'cat', 'name', 'pid', 'tid', 'ts', 'dur'],
  args: ['device', 'stream', 'bytes', 'correlation', 'grid', 'block', 'registers per thread', 'shared memory'],
  dimensions: ['grid', 'block'],
  topKeys: TOP_KEYS,
  topValues: [RANK, BASE_TIME],
  // The multiprocessors of each device, for contention.
  topTables: {
    [DEVICES]: ['id', 'numSms', 'regsPerMultiprocessor', 'sharedMemPerMultiprocessor', 'maxThreadsPerMultiprocessor'],
  },
};

/**
 * The events this parser reads: complete events of its GPU and host categories, the profiler steps and the ranges that
 * name launches.
 */
export function kinetoKeeps(record: TraceRecord): boolean {
  const { ph, cat, name } = record.event;
  if (ph !== 'X' || typeof cat !== 'string') return false;
  return (
    Object.hasOwn(GPU_CATS, cat) ||
    HOST_CATS.has(cat) ||
    LABEL_CATS.has(cat) ||
    (STEP_CATS.has(cat) && typeof name === 'string' && STEP.test(name))
  );
}

/** A PyTorch op or a range of the program's own that is not a profiler step: it only labels the launches in it. */
export function kinetoContext(record: TraceRecord): boolean {
  const { cat, name } = record.event;
  return (
    typeof cat === 'string' &&
    LABEL_CATS.has(cat) &&
    !(STEP_CATS.has(cat) && typeof name === 'string' && STEP.test(name))
  );
}

/**
 * A trace Kineto wrote: marked by Kineto's own top-level fields, likely by its event categories among the kept events.
 */
export function sniffKineto(top: TopFields, records: TraceRecords): Sniffed {
  if (TOP_KEYS.some((key) => top.keys.has(key))) return 'marked';
  for (const {
    event: { cat },
  } of records)
    if (typeof cat === 'string' && (Object.hasOwn(GPU_CATS, cat) || cat === 'cuda_runtime')) return 'likely';
  return null;
}

/**
 * Records read between two turns of the event loop: a 160 MB trace's parse took seconds in one piece, and a SIGTERM
 * waited for it (`test/unit/hostile-signals.test.ts`).
 */
const PACE = 50_000;

/** A GPU event whose issue time and label are filled in once every host call and range has been read. */
type Pending = { -readonly [K in keyof GpuEvent]: GpuEvent[K] };

/**
 * `records` are the trace's kept events in file order (`kinetoKeeps`); events may come in any order of time. One
 * pass, the records given back as it goes (`drain`): a GPU event's issue time and label come from host calls and
 * ranges anywhere in the file, so they are filled in after it, and, as when the host calls had a pass of their own,
 * a fault in a host call or range is the one reported before any fault in a GPU event or step.
 */
export function* parseKineto(file: string, top: TopFields, records: TraceRecords): PacedParse {
  const host: HostCall[] = [];
  const hostSteps: StepMark[] = [];
  const gpuSteps: StepMark[] = [];
  const gpu: Pending[] = [];
  const ranges = new HostRanges();
  const issuedAt = new Map<number, number>();
  let gpuFault: unknown = null;
  let read = 0;
  for (const record of records.drain()) {
    if (++read % PACE === 0) yield;
    const { ph, cat } = record.event;
    if (ph !== 'X' || typeof cat !== 'string') continue;
    const name = typeof record.event.name === 'string' ? record.event.name : '';
    const where = whereOf(record, cat, name);
    if (HOST_CATS.has(cat) || LABEL_CATS.has(cat)) {
      takeHostEvent(file, where, record, cat, name, { host, steps: hostSteps, ranges, issuedAt });
      continue;
    }
    // Own keys only: a hostile `cat` of "constructor" must not find Object's.
    const gpuKind = Object.hasOwn(GPU_CATS, cat) ? GPU_CATS[cat] : undefined;
    const isStep = STEP_CATS.has(cat) && STEP.test(name);
    if ((!gpuKind && !isStep) || gpuFault) continue;
    try {
      const { start, end } = span(file, where, record);
      if (gpuKind) gpu.push(gpuEvent(file, where, gpuKind, name, start, end, record));
      else
        gpuSteps.push({
          name,
          clock: cat === 'user_annotation' ? 'host' : 'gpu',
          device: cat === 'user_annotation' ? null : deviceOf(file, where, record),
          start,
          end,
        });
    } catch (error) {
      gpuFault = error;
    }
  }
  if (gpuFault) throw gpuFault;
  const labelOf = launchLabels(host, ranges);
  for (const event of gpu) {
    if (event.correlation === null) continue;
    event.issued = issuedAt.get(event.correlation) ?? null;
    event.label = labelOf.get(event.correlation) ?? null;
  }
  const steps = [...hostSteps, ...gpuSteps];
  const rank = rankOf(top.values[RANK]);
  const notes = [
    ...(gpu.some((e) => e.defaultStream)
      ? [
          `stream ${KINETO_DEFAULT_STREAM} is taken for the legacy default stream, as CUPTI numbers it in the traces we know of`,
        ]
      : []),
    ...(gpu.some((e) => e.kind === 'memcpy' && e.bytes === null)
      ? ['some copies give no args.bytes: they count in time but not in the floor']
      : []),
  ];
  const base = top.values[BASE_TIME];
  return {
    file,
    format: 'kineto',
    rank,
    gpu,
    host,
    steps,
    notes,
    devices: deviceShapes(top),
    clockBaseMs: typeof base === 'number' && Number.isFinite(base) ? base / 1e6 : null,
  };
}

/** Built only for a message: a million events must not make a million strings. */
const whereOf = (record: TraceRecord, cat: string, name: string) => () =>
  `traceEvents[${record.index}] (${cat} "${name.slice(0, 60)}")`;

/** A host call, a host step, or a range that labels the launches inside it. */
function takeHostEvent(
  file: string,
  where: () => string,
  record: TraceRecord,
  cat: string,
  name: string,
  into: { host: HostCall[]; steps: StepMark[]; ranges: HostRanges; issuedAt: Map<number, number> },
): void {
  const { start, end } = span(file, where, record);
  if (LABEL_CATS.has(cat)) {
    if (!(STEP_CATS.has(cat) && STEP.test(name)))
      into.ranges.push(name, start, end, threadOf(record), cat === 'user_annotation');
    else into.steps.push({ name, clock: 'host', device: null, start, end });
    return;
  }
  const call: HostCall = {
    kind: cat === 'cuda_sync' || SYNC.test(name) ? 'sync' : 'launch',
    name,
    start,
    end,
    correlation: intOrNull(record.args.correlation),
    thread: threadOf(record),
  };
  if (call.kind === 'launch' && call.correlation !== null) into.issuedAt.set(call.correlation, end);
  into.host.push(call);
}

/** The multiprocessors of each device Kineto describes; entries missing a count are left out. */
function deviceShapes(top: TopFields): DeviceShape[] {
  return (top.tables[DEVICES] ?? []).flatMap((d) => {
    const count = (v: Field) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);
    const index = typeof d.id === 'number' && Number.isInteger(d.id) && d.id >= 0 ? d.id : null;
    const sms = count(d.numSms);
    const registers = count(d.regsPerMultiprocessor);
    const shared = count(d.sharedMemPerMultiprocessor);
    const threads = count(d.maxThreadsPerMultiprocessor);
    if (index === null || sms === null || registers === null || shared === null || threads === null) return [];
    return [
      { index, multiprocessors: sms, registersPerSm: registers, sharedBytesPerSm: shared, threadsPerSm: threads },
    ];
  });
}

/** A kernel's grid and block counts, registers and shared memory, where Kineto gives all four. */
function launchOf(record: TraceRecord): LaunchShape | null {
  const { args } = record;
  const count = (v: Field) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  const blocks = count(args.grid);
  const threads = count(args.block);
  const registers = count(args['registers per thread']);
  const shared = count(args['shared memory']);
  if (blocks === null || threads === null || registers === null || shared === null || blocks === 0 || threads === 0)
    return null;
  return { blocks, threadsPerBlock: threads, registersPerThread: registers, sharedBytesPerBlock: shared };
}

function span(file: string, where: () => string, record: TraceRecord): { start: number; end: number } {
  const { ts, dur } = record.event;
  if (ts === undefined || dur === undefined)
    throw traceError(file, `${where()} has no ${ts === undefined ? 'ts' : 'dur'}`);
  if (typeof ts !== 'number' || !Number.isFinite(ts))
    throw traceError(file, `${where()} has ts ${shown(ts)}, not a finite number of µs`);
  if (typeof dur !== 'number' || !Number.isFinite(dur) || dur < 0)
    throw traceError(file, `${where()} has dur ${shown(dur)}, not a duration of 0 µs or more`);
  return { start: ts / 1000, end: (ts + dur) / 1000 };
}

function gpuEvent(
  file: string,
  where: () => string,
  kind: GpuKind,
  name: string,
  start: number,
  end: number,
  record: TraceRecord,
): Pending {
  const { args } = record;
  const stream = args.stream;
  if (typeof stream !== 'number' && typeof stream !== 'string') throw traceError(file, `${where()} has no args.stream`);
  const bytes = args.bytes;
  if (bytes !== undefined && (typeof bytes !== 'number' || !Number.isFinite(bytes) || bytes < 0))
    throw traceError(file, `${where()} has args.bytes ${shown(bytes)}, not a count of bytes`);
  const copy = kind === 'memcpy' ? copyKind(name) : NOT_A_COPY;
  const correlation = intOrNull(args.correlation);
  return {
    device: deviceOf(file, where, record),
    stream: String(stream),
    kind,
    start,
    end,
    bytes: typeof bytes === 'number' ? bytes : null,
    direction: copy.direction,
    hostMemory: copy.hostMemory,
    name,
    correlation,
    communication: kind === 'kernel' && NCCL.test(name),
    issued: null,
    defaultStream: String(stream) === KINETO_DEFAULT_STREAM,
    label: null,
    launch: kind === 'kernel' ? launchOf(record) : null,
  };
}

/** Kineto's `tid`: a host thread's id, a number in the traces we know. */
function threadOf(record: TraceRecord): number | null {
  const tid = record.event.tid;
  return typeof tid === 'number' && Number.isFinite(tid) ? tid : null;
}

const NOT_A_COPY = { direction: null, hostMemory: null } as const;

/** `Memcpy HtoD (Pageable -> Device)`: the direction, and the host side's memory kind. */
export function copyKind(name: string): { direction: Direction | null; hostMemory: HostMemory | null } {
  const match = /^Memcpy (\w+)(?: \((\w+) -> (\w+)\))?/.exec(name);
  const direction = (match && DIRECTIONS[match[1] ?? '']) ?? null;
  const hostSide = direction === 'h2d' ? match?.[2] : direction === 'd2h' ? match?.[3] : undefined;
  const hostMemory = hostSide === 'Pageable' ? 'pageable' : hostSide === 'Pinned' ? 'pinned' : null;
  return { direction, hostMemory };
}

/** Kineto gives the GPU's index in `args.device`; older traces only as the event's pid. */
function deviceOf(file: string, where: () => string, record: TraceRecord): number {
  const device = record.args.device ?? record.event.pid;
  if (isDeviceIndex(device)) return device;
  if (typeof device === 'number')
    throw traceError(
      file,
      `${where()} has device ${shown(device)}, not a device index (a whole number from 0 to ${MAX_DEVICE_INDEX})`,
    );
  throw traceError(file, `${where()} names no device (args.device or a numeric pid)`);
}

function rankOf(rank: Field): number | null {
  return isDeviceIndex(rank) ? rank : null;
}

function intOrNull(value: Field): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}
