import {
  type BoundCalls,
  type BoundLibrary,
  type CheckedLibrary,
  checkedLibrary,
  declareStruct,
  loadOnce,
  type NativeCall,
} from '../../cuda/ffi.js';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import { DeviceFailure } from '../../errors.js';
import type { Collective } from '../../vocabulary.js';
import { loadNcclLibrary } from './nccl-locate.js';

// NCCL, for collective stages: located in its own order (the override, the loader, the CUDA folders, the system
// folders, PyTorch's wheel), loaded only for a plan with a collective, and bound to the few calls a data-parallel
// step makes. NVLink SHARP (NVLS) stays off unless the user set NCCL_NVLS_ENABLE: its multicast objects are what
// the GPU hosts' notes forbid, and cuda-pipe never calls cuMulticastCreate itself.

declare const commBrand: unique symbol;
/** An ncclComm_t. Branded so that it cannot be passed where a stream or a pointer is expected. */
export type NcclComm = bigint & { readonly [commBrand]: 'NcclComm' };

/** ncclDataType_t of each element type NCCL reduces. */
export const NCCL_DATA_TYPE: Readonly<Record<string, number>> = {
  int8: 0,
  uint8: 1,
  int32: 2,
  uint32: 3,
  float16: 6,
  float32: 7,
  float64: 8,
  bfloat16: 9,
};

/** ncclSum: the reduction data parallelism does on gradients. */
const NCCL_SUM = 0;
/** ncclMax: what ranks agreeing on a decision reduce their votes with. */
const NCCL_MAX = 2;
/** ncclInt32. */
const NCCL_INT32 = 2;

/** NCCL_UNIQUE_ID_BYTES. */
export const UNIQUE_ID_BYTES = 128;

const RESULT_NAME: ReadonlyMap<number, string> = new Map([
  [0, 'ncclSuccess'],
  [1, 'ncclUnhandledCudaError'],
  [2, 'ncclSystemError'],
  [3, 'ncclInternalError'],
  [4, 'ncclInvalidArgument'],
  [5, 'ncclInvalidUsage'],
  [6, 'ncclRemoteError'],
  [7, 'ncclInProgress'],
]);

const RESULT_HINT: ReadonlyMap<number, string> = new Map([
  [1, 'A CUDA call inside NCCL failed: run with NCCL_DEBUG=WARN to see which, and check the GPU with nvidia-smi.'],
  [
    2,
    'A system call inside NCCL failed (sockets, shared memory, /dev/shm size): run with NCCL_DEBUG=WARN to see which.',
  ],
  [5, 'NCCL was used wrongly: every rank must run the same config with the same chunks, in the same order.'],
  [6, 'Another rank failed or went away: look at the other ranks\u2019 output.'],
]);

/** An NCCL call that returned something other than ncclSuccess: a device failure (exit 4). */
export class NcclError extends DeviceFailure {
  constructor(
    readonly api: string,
    readonly status: number,
    description: string,
    context: string,
  ) {
    super(
      `${api} failed (${context}): ${RESULT_NAME.get(status) ?? 'unknown ncclResult_t'} (${status}): ${description}`,
      { hint: RESULT_HINT.get(status) },
    );
  }
}

/**
 * NCCL_NVLS_ENABLE=0 unless the user set it, before NCCL reads its environment (at its first call). Returns the
 * sentence the Result carries: what was set, or what the user had.
 */
export function nvlsOff(env: NodeJS.ProcessEnv = process.env): { readonly set: boolean; readonly note: string } {
  const own = env.NCCL_NVLS_ENABLE;
  if (own !== undefined) return { set: false, note: `NCCL_NVLS_ENABLE=${own} was set by the user and left as it is.` };
  env.NCCL_NVLS_ENABLE = '0';
  return { set: true, note: 'cuda-pipe set NCCL_NVLS_ENABLE=0 (NVLink multicast off), as nothing had set it.' };
}

/**
 * NCCL_RUNTIME_CONNECT=0 unless the user set it: every connection between ranks is made while the communicator is
 * created, which cuda-pipe waits for off the JS thread and within a deadline. Left at NCCL's default, a rank's first
 * collective of each algorithm connects to its peers inside the call and blocks the thread that made it until they
 * come, and a peer that never comes would hold the JS thread (and with it Ctrl-C) for ever.
 */
export function connectAtInit(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.NCCL_RUNTIME_CONNECT !== undefined)
    return `NCCL_RUNTIME_CONNECT=${env.NCCL_RUNTIME_CONNECT} was set by the user and left as it is.`;
  env.NCCL_RUNTIME_CONNECT = '0';
  return null;
}

/**
 * "2.27.3" from NCCL_VERSION_CODE (major × 10000 + minor × 100 + patch since 2.9; major × 1000 + minor × 100 + patch
 * before).
 */
export function versionText(code: number): string {
  if (code >= 10000) return `${Math.floor(code / 10000)}.${Math.floor(code / 100) % 100}.${code % 100}`;
  return `${Math.floor(code / 1000)}.${Math.floor(code / 100) % 10}.${code % 100}`;
}

/** NCCL captures collectives into CUDA graphs from 2.9 on. */
export const GRAPH_CAPTURE_MIN = 20900;

/** ncclInProgress: a nonblocking communicator's call accepted, its work still being done by NCCL's own thread. */
export const NCCL_IN_PROGRESS = 7;

/** How long a communicator's release waits for its finalisation before it aborts it instead. */
const RELEASE_WAIT_MS = 2_000;

/** NCCL_CONFIG_UNDEF_INT: a config field left to NCCL's default. */
const CONFIG_UNDEF_INT = -2147483648;
/** NCCL_VERSION(2, 14, 0): the ncclConfig_t layout declared below, the first with `blocking`. */
const CONFIG_VERSION = 21400;

// ncclCommInitRank takes the id by value, as a struct its declaration names (declared once per process).
function declareStructs(): { readonly configBytes: number } {
  declareStruct('ncclUniqueId', { internal: { array: 'uint8_t', length: UNIQUE_ID_BYTES } });
  // ncclConfig_t as NCCL 2.14 laid it out; NCCL copies `size` bytes of it over its defaults, so later fields keep
  // theirs.
  const configBytes = declareStruct('ncclConfig_v21400', {
    size: 'size_t',
    magic: 'uint32_t',
    version: 'uint32_t',
    blocking: 'int',
    cgaClusterSize: 'int',
    minCTAs: 'int',
    maxCTAs: 'int',
    netName: 'const char *',
    splitShare: 'int',
  });
  return { configBytes };
}

const PROTOTYPES = {
  getVersion: 'int ncclGetVersion(_Out_ int *version)',
  getUniqueId: 'int ncclGetUniqueId(_Out_ ncclUniqueId *id)',
  commInitAll: 'int ncclCommInitAll(_Out_ void **comms, int ndev, const int *devlist)',
  commInitRank: 'int ncclCommInitRank(_Out_ void **comm, int nranks, ncclUniqueId commId, int rank)',
  commDestroy: 'int ncclCommDestroy(void *comm)',
  commAbort: 'int ncclCommAbort(void *comm)',
  commGetAsyncError: 'int ncclCommGetAsyncError(void *comm, _Out_ int *asyncError)',
  commCount: 'int ncclCommCount(void *comm, _Out_ int *count)',
  groupStart: 'int ncclGroupStart()',
  groupEnd: 'int ncclGroupEnd()',
  allReduce:
    'int ncclAllReduce(void *sendbuff, void *recvbuff, size_t count, int datatype, int op, void *comm, void *stream)',
  reduceScatter:
    'int ncclReduceScatter(void *sendbuff, void *recvbuff, size_t recvcount, int datatype, int op, void *comm, void *stream)',
  allGather:
    'int ncclAllGather(void *sendbuff, void *recvbuff, size_t sendcount, int datatype, void *comm, void *stream)',
  getErrorString: 'const char *ncclGetErrorString(int result)',
} as const;

/** One collective call as the hot loop makes it, bound once: buffers, counts and the communicator fixed. */
export interface CollectiveCall {
  readonly collective: Collective;
  /** Where the chunk's elements start on this device. */
  readonly buffer: DevicePtr;
  /** Elements of the chunk (nccl-tests' "count"): all-reduced whole, scattered or gathered in ranks' parts. */
  readonly elements: number;
  readonly elementBytes: number;
  readonly dataType: number;
  readonly comm: NcclComm;
  readonly rank: number;
  readonly ranks: number;
  readonly stream: StreamHandle;
}

/** libnccl, typed. Every checked call throws `NcclError` naming the call, its device or rank, and NCCL's words. */
export class Nccl {
  readonly libraryPath: string;
  private readonly lib: CheckedLibrary<BoundCalls<typeof PROTOTYPES>, NcclError>;
  private readonly fn: BoundCalls<typeof PROTOTYPES>;
  /** Since 2.14; without them communicators are made blocking, as before. */
  private readonly initRankConfig: NativeCall | null;
  private readonly commFinalize: NativeCall | null;
  private readonly configBytes: number;
  private readonly out = new BigUint64Array(1);

  constructor(lib: BoundLibrary) {
    this.configBytes = declareStructs().configBytes;
    this.lib = checkedLibrary(
      lib,
      PROTOTYPES,
      (fn, status, api, context) => new NcclError(api, status, fn.getErrorString(status) as string, context ?? ''),
    );
    this.libraryPath = lib.path;
    this.fn = this.lib.fn;
    const nonblocking = lib.exports('ncclCommInitRankConfig') && lib.exports('ncclCommFinalize');
    this.initRankConfig = nonblocking
      ? lib.bind(
          'int ncclCommInitRankConfig(_Out_ void **comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_v21400 *config)',
        )
      : null;
    this.commFinalize = nonblocking ? lib.bind('int ncclCommFinalize(void *comm)') : null;
  }

  failure(status: number, api: string, context: string): NcclError {
    return this.lib.failure(status, api, context);
  }

  check(status: number, api: string, context: string): void {
    this.lib.check(status, api, context);
  }

  /** NCCL_VERSION_CODE of the loaded library. */
  version(): number {
    const version = [0];
    this.check(this.fn.getVersion(version) as number, 'ncclGetVersion', 'version');
    return version[0] ?? 0;
  }

  /** The 128 bytes rank 0 hands every other rank. */
  uniqueId(): Uint8Array {
    const id: { internal: Uint8Array } = { internal: new Uint8Array(UNIQUE_ID_BYTES) };
    this.check(this.fn.getUniqueId(id) as number, 'ncclGetUniqueId', 'rank 0');
    return Uint8Array.from(id.internal);
  }

  /** Whether communicators take a config: nonblocking, or a CTA count (NCCL 2.14 and later). */
  get configurable(): boolean {
    return this.initRankConfig !== null;
  }

  /**
   * Starts making `rank` of `ranks` on the current device. A nonblocking communicator returns at once and is made by
   * NCCL's own thread (`pending` polls it), so the JS thread stays free for signals and a deadline while the other
   * ranks come; with an NCCL older than 2.14 the call blocks until every rank joined. `blocking` makes it as
   * ncclCommInitRank would, `ctas` pins its collectives' CTAs (minCTAs = maxCTAs), both through the config. Call it
   * between groupStart and groupEnd to make one process's communicators together.
   */
  initRank(
    ranks: number,
    id: Uint8Array,
    rank: number,
    context: string,
    { blocking = false, ctas }: { readonly blocking?: boolean; readonly ctas?: number | undefined } = {},
  ): NcclComm {
    if (id.length !== UNIQUE_ID_BYTES)
      throw new Error(`an NCCL unique id is ${UNIQUE_ID_BYTES} bytes, not ${id.length}`);
    this.out[0] = 0n;
    const { initRankConfig } = this;
    if (ctas !== undefined && !initRankConfig)
      throw new Error(`NCCL ${versionText(this.version())} takes no CTA count: its communicators have no config`);
    const status = initRankConfig
      ? (initRankConfig(this.out, ranks, { internal: id }, rank, {
          size: this.configBytes,
          magic: 0xcafebeef,
          version: CONFIG_VERSION,
          blocking: blocking ? 1 : 0,
          cgaClusterSize: CONFIG_UNDEF_INT,
          minCTAs: ctas ?? CONFIG_UNDEF_INT,
          maxCTAs: ctas ?? CONFIG_UNDEF_INT,
          netName: null,
          splitShare: CONFIG_UNDEF_INT,
        }) as number)
      : (this.fn.commInitRank(this.out, ranks, { internal: id }, rank) as number);
    if (status !== 0 && status !== NCCL_IN_PROGRESS)
      this.check(status, initRankConfig ? 'ncclCommInitRankConfig' : 'ncclCommInitRank', context);
    return (this.out[0] ?? 0n) as NcclComm;
  }

  /** One blocking communicator per local device, all in this process (one device: a one-rank communicator). */
  initAll(devices: readonly number[]): NcclComm[] {
    const comms = new BigUint64Array(devices.length);
    this.check(
      this.fn.commInitAll(comms, devices.length, Int32Array.from(devices)) as number,
      'ncclCommInitAll',
      `devices ${devices.join(', ')}`,
    );
    return [...comms] as NcclComm[];
  }

  /** Ends the communicator at once, its kernels on the GPU too (NCCL raises their abort flag). */
  abort(comm: NcclComm): number {
    return this.fn.commAbort(comm) as number;
  }

  count(comm: NcclComm, context: string): number {
    const count = [0];
    this.check(this.fn.commCount(comm, count) as number, 'ncclCommCount', context);
    return count[0] ?? 0;
  }

  /** The communicator's asynchronous error (a failed kernel, a lost peer), 0 when none. */
  asyncError(comm: NcclComm): number {
    const status = [0];
    const code = this.fn.commGetAsyncError(comm, status) as number;
    return code === 0 ? (status[0] ?? 0) : code;
  }

  /**
   * Destroys the communicator, or aborts it where it holds an asynchronous error or its finalisation (NCCL's thread
   * waiting for every rank to reach it) has not ended within RELEASE_WAIT_MS: destroy would wait for peers that may
   * never come.
   */
  release(comm: NcclComm, context: string): void {
    const { commFinalize } = this;
    let broken = this.asyncError(comm) !== 0;
    if (!broken && commFinalize) {
      const status = commFinalize(comm) as number;
      const until = performance.now() + RELEASE_WAIT_MS;
      let state = status;
      while (state === NCCL_IN_PROGRESS && performance.now() < until) state = this.asyncError(comm);
      broken = state !== 0;
    }
    this.check(
      (broken ? this.fn.commAbort(comm) : this.fn.commDestroy(comm)) as number,
      broken ? 'ncclCommAbort' : 'ncclCommDestroy',
      context,
    );
  }

  groupStart(): number {
    return this.fn.groupStart() as number;
  }

  groupEnd(): number {
    return this.fn.groupEnd() as number;
  }

  /** The largest of every rank's `count` int32 values at `buffer`, in place, enqueued on `stream`: raw ncclResult_t. */
  maxInt32(buffer: DevicePtr, count: number, comm: NcclComm, stream: StreamHandle): number {
    return this.fn.allReduce(buffer, buffer, count, NCCL_INT32, NCCL_MAX, comm, stream) as number;
  }

  /**
   * The call enqueued on its stream, returning the raw ncclResult_t. In place, as DDP reduces its buckets: an
   * all-reduce over the chunk; a reduce-scatter leaves rank r's sum at part r; an all-gather sends part r.
   */
  issue(call: CollectiveCall): () => number {
    const { fn, args } = this.bound(call);
    return () => fn(...args) as number;
  }

  private bound(call: CollectiveCall): { fn: NativeCall; args: readonly unknown[] } {
    const { buffer, elements, ranks, rank, dataType, comm, stream } = call;
    const part = elements / ranks;
    const at = (index: number) => (buffer + BigInt(index * part * call.elementBytes)) as DevicePtr;
    switch (call.collective) {
      case 'allreduce':
        return { fn: this.fn.allReduce, args: [buffer, buffer, elements, dataType, NCCL_SUM, comm, stream] };
      case 'reducescatter':
        return { fn: this.fn.reduceScatter, args: [buffer, at(rank), part, dataType, NCCL_SUM, comm, stream] };
      case 'allgather':
        return { fn: this.fn.allGather, args: [at(rank), buffer, part, dataType, comm, stream] };
    }
  }
}

/** Loads libnccl (see `ncclCandidates` for where it looks). */
export function loadNccl(env: NodeJS.ProcessEnv = process.env): Nccl {
  return new Nccl(loadNcclLibrary(env));
}

/** libnccl, loaded once per process. */
export const openNccl = loadOnce(loadNccl);
