import { join } from 'node:path';
import koffi from 'koffi';
import { type NativeLibrary, unfitLibraryFile } from './load.js';

// CUPTI's activity API, for the engine-true times of a traced rep's copies, kernels and memsets. Everything CUPTI
// lives here (not in bindings.ts): it is optional, so a missing or unusable libcupti is a reason to fall back to
// events, never an error.

/** The environment variable that names the libcupti file exactly. */
export const CUPTI_OVERRIDE = 'CUDA_PIPE_CUPTI';

const CUPTI_SONAMES = ['libcupti.so.13', 'libcupti.so.12', 'libcupti.so'];
// CUPTI ships beside the runtime in recent toolkits, under targets/ on the GPU host, and in extras/ in older ones.
const CUPTI_SUBDIRS = ['lib64', 'targets/x86_64-linux/lib', 'extras/CUPTI/lib64'];

/** Every place to try for libcupti, in order: the override, CUDA_PATH/CUDA_HOME, the loader, /usr/local/cuda. */
export function cuptiCandidates(env: NodeJS.ProcessEnv): string[] {
  const override = env[CUPTI_OVERRIDE];
  if (override) return [override];
  const roots = [env.CUDA_PATH, env.CUDA_HOME].filter((r): r is string => Boolean(r));
  const inRoot = (root: string) =>
    CUPTI_SUBDIRS.flatMap((sub) => CUPTI_SONAMES.map((soname) => join(root, sub, soname)));
  return [...new Set([...roots.flatMap(inRoot), ...CUPTI_SONAMES, ...inRoot('/usr/local/cuda')])];
}

// CUpti_ActivityKind values (cupti_activity.h, unchanged from CUDA 11 to 13).
export const ACTIVITY_KIND = {
  memcpy: 1,
  memset: 2,
  driver: 4,
  runtime: 5,
  concurrentKernel: 10,
  externalCorrelation: 39,
} as const;
const EXTERNAL_CORRELATION_CUSTOM0 = 3;
const FLUSH_FORCED = 1;
const CUPTI_SUCCESS = 0;

/**
 * Byte offsets of the fields read from each record kind. Every version of these records since CUDA 11 (Memcpy5 and
 * Memcpy6, Memset4, Kernel5 to Kernel9 and later) keeps this prefix and appends new fields after it; a record is
 * still checked (its kind, start before end) before its times are used.
 */
export const RECORD_LAYOUT = {
  memcpy: { bytes: 8, start: 16, end: 24, deviceId: 32, streamId: 40, correlationId: 44, size: 48 },
  memset: { bytes: 8, start: 16, end: 24, deviceId: 32, streamId: 40, correlationId: 44, size: 48 },
  kernel: { start: 16, end: 24, deviceId: 40, streamId: 48, correlationId: 92, size: 96 },
  externalCorrelation: { externalKind: 4, externalId: 8, correlationId: 16, size: 24 },
} as const;

/** One copy, memset or kernel as the GPU ran it: ns on CUPTI's clock, relative to the collection's base. */
export interface ActivityRecord {
  readonly kind: 'memcpy' | 'memset' | 'kernel';
  readonly correlationId: number;
  readonly deviceId: number;
  readonly streamId: number;
  readonly bytes: number;
  readonly startNs: number;
  readonly endNs: number;
}

export interface ActivityCollection {
  readonly records: readonly ActivityRecord[];
  /** CUPTI correlation id → the id pushed around the API call that made it. */
  readonly external: ReadonlyMap<number, number>;
  /** Records CUPTI dropped for want of buffer space. */
  readonly dropped: number;
  /** Records whose layout did not check out (end before start, a kind read from the wrong place). */
  readonly malformed: number;
}

/**
 * Reads the fields cuda-pipe needs from one record, given a DataView over it; null for a kind it does not use.
 * `base` is subtracted from CUPTI's ns timestamps while they are still exact (they are over 2^53).
 */
export function parseRecord(
  view: DataView,
  base: bigint,
): ActivityRecord | { externalId: number; correlationId: number } | 'malformed' | null {
  const kind = view.getUint32(0, true);
  const u32 = (at: number) => view.getUint32(at, true);
  const u64 = (at: number) => view.getBigUint64(at, true);
  if (kind === ACTIVITY_KIND.externalCorrelation) {
    const L = RECORD_LAYOUT.externalCorrelation;
    if (u32(L.externalKind) !== EXTERNAL_CORRELATION_CUSTOM0) return null;
    return { externalId: Number(u64(L.externalId)), correlationId: u32(L.correlationId) };
  }
  const which =
    kind === ACTIVITY_KIND.memcpy
      ? 'memcpy'
      : kind === ACTIVITY_KIND.memset
        ? 'memset'
        : kind === ACTIVITY_KIND.concurrentKernel
          ? 'kernel'
          : null;
  if (which === null) return null;
  const L = RECORD_LAYOUT[which];
  const start = u64(L.start);
  const end = u64(L.end);
  // CUPTI writes 0 for both when it could not time the activity.
  if (start === 0n || end < start) return 'malformed';
  // Recorded before this collection began (recording stays on between collections): not this collection's.
  if (start < base) return null;
  return {
    kind: which,
    correlationId: u32(L.correlationId),
    deviceId: u32(L.deviceId),
    streamId: u32(L.streamId),
    bytes: 'bytes' in L ? Number(u64(L.bytes)) : 0,
    startNs: Number(start - base),
    endNs: Number(end - base),
  };
}

const BufferRequested = koffi.proto('void cudaPipeCuptiBufferRequested(void *buffer, void *size, void *maxNumRecords)');
const BufferCompleted = koffi.proto(
  'void cudaPipeCuptiBufferCompleted(void *context, uint32_t streamId, void *buffer, size_t size, size_t validSize)',
);

/** Activity buffers, allocated once: enough for tens of thousands of records, so none fills during a traced rep. */
const BUFFER_BYTES = 8 << 20;
const BUFFER_COUNT = 4;

function declare(lib: NativeLibrary) {
  return {
    registerCallbacks: lib.func('int cuptiActivityRegisterCallbacks(void *requested, void *completed)'),
    enable: lib.func('int cuptiActivityEnable(int kind)'),
    disable: lib.func('int cuptiActivityDisable(int kind)'),
    flushAll: lib.func('int cuptiActivityFlushAll(uint32_t flag)'),
    getNextRecord: lib.func('int cuptiActivityGetNextRecord(void *buffer, size_t validBufferSizeBytes, void *record)'),
    getNumDroppedRecords: lib.func(
      'int cuptiActivityGetNumDroppedRecords(void *context, uint32_t streamId, _Out_ size_t *dropped)',
    ),
    getTimestamp: lib.func('int cuptiGetTimestamp(_Out_ uint64_t *timestamp)'),
    pushExternal: lib.func('int cuptiActivityPushExternalCorrelationId(int kind, uint64_t id)'),
    popExternal: lib.func('int cuptiActivityPopExternalCorrelationId(int kind, _Out_ uint64_t *lastId)'),
    getResultString: lib.func('int cuptiGetResultString(int result, _Out_ const char **str)'),
    finalize: lib.func('int cuptiFinalize()'),
  };
}
type CuptiFunctions = ReturnType<typeof declare>;

// Driver API records too: a library (cuBLAS) may launch its kernels through the driver, and the external id pushed
// around its call is tied to those launches only where their API kind is recorded.
const ENABLED_KINDS = [
  ACTIVITY_KIND.memcpy,
  ACTIVITY_KIND.memset,
  ACTIVITY_KIND.concurrentKernel,
  ACTIVITY_KIND.runtime,
  ACTIVITY_KIND.driver,
  ACTIVITY_KIND.externalCorrelation,
];

/**
 * CUPTI activity collection around one traced rep at a time. CUPTI hands buffers out and back through callbacks,
 * possibly from its own thread; koffi runs those on the JS thread when the event loop turns and holds CUPTI's
 * thread until then. So buffers are native and allocated once, the rep is awaited without blocking, and the final
 * flush runs on a koffi worker thread: the JS thread stays free to run any callback, whichever thread makes it.
 */
export class CuptiActivity {
  private readonly free: bigint[] = [];
  private readonly slot = koffi.alloc('uint64', 1);
  private readonly slotAddress = koffi.address(this.slot);
  private records: ActivityRecord[] = [];
  private external = new Map<number, number>();
  private malformed = 0;
  private base = 0n;
  private recording = false;

  private constructor(
    readonly libraryPath: string,
    private readonly fn: CuptiFunctions,
  ) {
    for (let i = 0; i < BUFFER_COUNT; i++) this.free.push(koffi.address(koffi.alloc('uint64', BUFFER_BYTES / 8)));
    // Registered for the life of the process: CUPTI keeps both pointers.
    const requested = koffi.register(
      (buffer: bigint, size: bigint, maxNumRecords: bigint) => this.hand(buffer, size, maxNumRecords),
      koffi.pointer(BufferRequested),
    );
    const completed = koffi.register(
      (_context: unknown, _stream: number, buffer: bigint, _size: unknown, valid: number | bigint) =>
        this.take(buffer, Number(valid)),
      koffi.pointer(BufferCompleted),
    );
    this.check(this.fn.registerCallbacks(requested, completed) as number, 'cuptiActivityRegisterCallbacks');
    // Left attached, CUPTI calls back into the trampolines while the process is torn down, after Node is gone (a
    // segfault at exit on the H200). Detached while JS still runs, it has nothing left to call.
    process.once('exit', () => this.fn.finalize());
  }

  /** Loads libcupti and registers the buffer callbacks; a reason in words when it cannot. */
  static open(env: NodeJS.ProcessEnv = process.env): CuptiActivity | { readonly unavailable: string } {
    const tried: string[] = [];
    for (const path of cuptiCandidates(env)) {
      // A FIFO or a device file under a library's name would hold dlopen (and the run) for ever.
      const unfit = unfitLibraryFile(path, env);
      if (unfit !== null) {
        tried.push(`${path}: ${unfit}`);
        continue;
      }
      let lib: NativeLibrary;
      try {
        lib = koffi.load(path);
      } catch (error) {
        tried.push(`${path}: ${shortReason(error)}`);
        continue;
      }
      try {
        return new CuptiActivity(path, declare(lib));
      } catch (error) {
        return { unavailable: `${path} loads but CUPTI could not be set up (${shortReason(error)})` };
      }
    }
    return {
      unavailable: `no libcupti found (${env[CUPTI_OVERRIDE] ? `${CUPTI_OVERRIDE}=${tried[0] ?? env[CUPTI_OVERRIDE]}` : `tried ${tried.length} places; set ${CUPTI_OVERRIDE} to the file`})`,
    };
  }

  /**
   * Starts a collection: from here on, records of copies, memsets and kernels, and the correlation of each with the
   * id pushed around its call. Recording is switched on if it was off; it stays on from one collection to the next
   * (switching it on costs the next call CUPTI sees most of a millisecond, which a traced rep would show as a wait)
   * until stop().
   */
  begin(): void {
    this.records = [];
    this.external = new Map();
    this.malformed = 0;
    this.base = this.timestamp();
    if (this.recording) return;
    this.recording = true;
    for (const kind of ENABLED_KINDS) {
      const code = this.fn.enable(kind) as number;
      if (code !== CUPTI_SUCCESS) {
        this.stop();
        this.check(code, `cuptiActivityEnable(${kind})`);
      }
    }
  }

  /** Whether CUPTI is recording: every timed rep must see false. */
  get on(): boolean {
    return this.recording;
  }

  /** Thunks that mark the API calls between them with `id`, for the hot loop: raw codes, no checks. */
  correlationThunks(): { push: (id: number) => number; pop: () => number } {
    const push = this.fn.pushExternal;
    const pop = this.fn.popExternal;
    const last = new BigUint64Array(1);
    return {
      push: (id) => push(EXTERNAL_CORRELATION_CUSTOM0, BigInt(id)) as number,
      pop: () => pop(EXTERNAL_CORRELATION_CUSTOM0, last) as number,
    };
  }

  /** Flushes every buffer (off the JS thread) and hands back what was recorded since begin(); recording stays on. */
  async collect(): Promise<ActivityCollection> {
    const code = await new Promise<number>((resolve, reject) => {
      this.fn.flushAll.async(FLUSH_FORCED, (error: unknown, result: number) =>
        error ? reject(error) : resolve(result),
      );
    });
    this.check(code, 'cuptiActivityFlushAll');
    const dropped = [0];
    const droppedCode = this.fn.getNumDroppedRecords(null, 0, dropped) as number;
    return {
      records: this.records,
      external: this.external,
      dropped: droppedCode === CUPTI_SUCCESS ? Number(dropped[0] ?? 0) : 0,
      malformed: this.malformed,
    };
  }

  /**
   * Stops recording; records still in CUPTI's buffers come back with the next collection's flush, older than its base,
   * and are left out.
   */
  stop(): void {
    if (!this.recording) return;
    this.recording = false;
    this.disableAll();
  }

  private disableAll(): void {
    for (const kind of ENABLED_KINDS) this.fn.disable(kind);
  }

  private timestamp(): bigint {
    const out = new BigUint64Array(1);
    this.check(this.fn.getTimestamp(out) as number, 'cuptiGetTimestamp');
    return out[0] ?? 0n;
  }

  private hand(buffer: bigint, size: bigint, maxNumRecords: bigint): void {
    const next = this.free.pop();
    koffi.encode(buffer, 0, 'uint64', next ?? 0n);
    // No buffer left: CUPTI drops the records and counts them, which end() reports.
    koffi.encode(size, 0, 'uint64', next === undefined ? 0 : BUFFER_BYTES);
    koffi.encode(maxNumRecords, 0, 'uint64', 0);
  }

  private take(buffer: bigint, validBytes: number): void {
    if (buffer === 0n) return;
    koffi.encode(this.slotAddress, 0, 'uint64', 0n);
    while (validBytes > 0 && this.fn.getNextRecord(buffer, validBytes, this.slotAddress) === CUPTI_SUCCESS) {
      const record = BigInt(koffi.decode(this.slotAddress, 0, 'uint64') as number | bigint);
      const parsed = parseRecord(new DataView(koffi.view(record, 128)), this.base);
      if (parsed === 'malformed') this.malformed += 1;
      else if (parsed !== null && 'kind' in parsed) this.records.push(parsed);
      else if (parsed !== null) this.external.set(parsed.correlationId, parsed.externalId);
    }
    this.free.push(buffer);
  }

  private check(code: number, api: string): void {
    if (code === CUPTI_SUCCESS) return;
    const out: [string | null] = [null];
    const described = this.fn.getResultString(code, out) === CUPTI_SUCCESS && out[0] ? out[0] : `error ${code}`;
    throw new Error(`${api} failed: ${described}`);
  }
}

function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const parts = message.split(': ');
  return parts[parts.length - 1] ?? message;
}

let opened: CuptiActivity | { readonly unavailable: string } | undefined;

/** CUPTI once per process (its callbacks are registered for good), or why not. */
export function openCupti(env: NodeJS.ProcessEnv = process.env): CuptiActivity | { readonly unavailable: string } {
  opened ??= CuptiActivity.open(env);
  return opened;
}

export interface MatchedActivity {
  /** Per expected activity, by index: the span its records cover (ns), or null where none matched. */
  readonly spans: ReadonlyArray<{ readonly start: number; readonly end: number } | null>;
  /** Records correlated with an index whose kind was not the one expected there (a layout or mapping fault). */
  readonly wrongKind: number;
}

/** The records an op is expected to make: their kind, and whether memsets among them are its time too. */
export interface ExpectedActivity {
  readonly kind: ActivityRecord['kind'];
  readonly memsets: boolean;
}

/**
 * Each expected activity's engine span, from the records correlated with its index (the external id pushed around
 * its API call is index + 1). A call that made several records (a copy CUPTI split) spans all of them; where the
 * op's memsets count, so do they.
 */
export function matchActivity(
  collection: ActivityCollection,
  expected: ReadonlyArray<ExpectedActivity | null>,
): MatchedActivity {
  const spans: Array<{ start: number; end: number } | null> = expected.map(() => null);
  const sawExpected = expected.map(() => false);
  let wrongKind = 0;
  for (const record of collection.records) {
    const externalId = collection.external.get(record.correlationId);
    if (externalId === undefined) continue;
    const index = externalId - 1;
    const want = expected[index];
    if (index < 0 || index >= expected.length || want === undefined) continue;
    const fits = want !== null && (want.kind === record.kind || (want.memsets && record.kind === 'memset'));
    if (!fits) {
      wrongKind += 1;
      continue;
    }
    const span = spans[index];
    spans[index] = span
      ? { start: Math.min(span.start, record.startNs), end: Math.max(span.end, record.endNs) }
      : { start: record.startNs, end: record.endNs };
    if (record.kind === want.kind) sawExpected[index] = true;
  }
  // A memset alone is not the call: where none of the expected kind came, the op has no engine time (the rep falls
  // back to events, saying so) rather than the memset's few nanoseconds.
  return { spans: spans.map((span, i) => (sawExpected[i] ? span : null)), wrongKind };
}

/** The CUPTI collector when it is recording, without loading libcupti where nothing opened it: for the timed path. */
export function recordingCupti(): CuptiActivity | null {
  return opened instanceof CuptiActivity && opened.on ? opened : null;
}
