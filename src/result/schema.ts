import { z } from 'zod';
import { CrossDeviceSchema, DeviceTimesSchema, PeerPathSchema, ScalingSchema } from './devices.js';
import { BoundTermSchema, ModelAnalysisSchema, SweepSectionSchema } from './model.js';
import { WarningSchema } from './warnings.js';
import { BUFFER_ROLES, COLLECTIVES, DEFAULT_STREAM_OPS, ISSUE_COST_OPS, ISSUE_ORDERS, type ModeRole, SMALL_OPS, STOP_RULES, STREAM_KINDS, TOPOLOGIES } from '../vocabulary.js';
import { STAGE_IDS } from '../kinds/index.js';

// The contract between measuring and rendering. Renderers read a Result alone, so a saved JSON file redraws every
// table and picture exactly as measured. Bump RESULT_VERSION on any change that an older reader would misread, and
// teach load.ts to migrate the old version.

export const RESULT_SCHEMA_ID = 'cuda-pipe/result';
export const RESULT_VERSION = 2;

export const PcieLinkSchema = z.object({
  generation: z.number().nullable(),
  width: z.number(),
  maxGeneration: z.number().nullable(),
  maxWidth: z.number(),
  speed: z.string(),
});
export type PcieLink = z.infer<typeof PcieLinkSchema>;

export const DeviceFactsSchema = z.object({
  index: z.number().int(),
  name: z.string(),
  uuid: z.string(),
  computeCapability: z.object({ major: z.number().int(), minor: z.number().int() }),
  multiprocessors: z.number().int(),
  maxThreadsPerMultiprocessor: z.number().int(),
  memoryBytes: z.number(),
  l2CacheBytes: z.number(),
  asyncEngineCount: z.number().int(),
  concurrentKernels: z.boolean(),
  gpuOverlap: z.boolean(),
  unifiedAddressing: z.boolean(),
  canMapHostMemory: z.boolean(),
  integrated: z.boolean(),
  streamPriority: z.object({ least: z.number().int(), greatest: z.number().int() }),
  pciBusId: z.string(),
  pcie: PcieLinkSchema.nullable(),
});
export type DeviceFacts = z.infer<typeof DeviceFactsSchema>;

export const SoftwareVersionsSchema = z.object({
  driver: z.string(),
  runtime: z.string(),
  nvrtc: z.string().nullable(),
  nvrtcArchitectures: z.array(z.string()),
  cudartPath: z.string(),
  nvrtcPath: z.string().nullable(),
});
export type SoftwareVersions = z.infer<typeof SoftwareVersionsSchema>;

/** Summary statistics of one timed quantity, in the samples' unit (milliseconds for times). */
export const StatsSchema = z.object({
  n: z.number().int(),
  median: z.number(),
  mean: z.number(),
  min: z.number(),
  max: z.number(),
  stdev: z.number(),
  q1: z.number(),
  q3: z.number(),
  iqr: z.number(),
  /** stdev / mean; 0 for a single sample. */
  relativeStdev: z.number(),
  /** 1.4826 · MAD / median: the noise around the median that the stopping rule and the tables use. */
  relativeNoise: z.number(),
  /** Indexes of samples whose modified z-score exceeds 3.5; flagged, never dropped. */
  outliers: z.array(z.number().int()),
});
export type Stats = z.infer<typeof StatsSchema>;

export const MismatchSchema = z.object({
  buffer: z.string(),
  /** The overlapped mode whose output differed from serial. */
  mode: z.string(),
  /** Added within version 2: the device whose outputs differed, where a data-parallel run stored several devices' apart. */
  device: z.number().int().optional(),
  index: z.number().int(),
  expected: z.string(),
  actual: z.string(),
  differing: z.number().int(),
  unwritten: z.boolean(),
});
export type Mismatch = z.infer<typeof MismatchSchema>;

export const OverlapLayoutSchema = z.object({
  chunks: z.number().int(),
  streams: z.number().int(),
  order: z.enum(ISSUE_ORDERS),
  topology: z.enum(TOPOLOGIES),
  // Optional, so that version 2 results written before these variants existed still load.
  issue: z.literal('graph').optional(),
  host: z.string().optional(),
  slots: z.number().int().optional(),
  legacyOp: z.object({ chunk: z.number().int(), op: z.enum(DEFAULT_STREAM_OPS) }).optional(),
  perThreadOp: z.object({ chunk: z.number().int(), op: z.enum(DEFAULT_STREAM_OPS) }).optional(),
});

export const ModeRoleSchema = z.union([
  z.object({ kind: z.literal('serial') }),
  z.object({ kind: z.literal('overlapped'), layout: OverlapLayoutSchema }),
  z.object({ kind: z.literal('stage'), stage: z.enum(['h2d', 'd2h']) }),
  z.object({ kind: z.literal('stage'), stage: z.literal('kernel'), kernel: z.string() }),
  z.object({ kind: z.literal('stage'), stage: z.literal('collective'), collective: z.string(), buckets: z.number().int().min(1).optional() }),
  z.object({ kind: z.literal('link'), copiesPerDirection: z.number().int(), streamsPerDirection: z.number().int() }),
  z.object({ kind: z.literal('kernels-chunked'), layout: OverlapLayoutSchema }),
  z.object({ kind: z.literal('op-cost'), op: z.enum(SMALL_OPS) }),
  z.object({ kind: z.literal('issue-cost'), op: z.enum(ISSUE_COST_OPS) }),
  z.object({ kind: z.literal('latency'), kernel: z.string(), priorities: z.boolean() }),
  z.object({ kind: z.literal('split'), layout: OverlapLayoutSchema, devices: z.array(z.number().int()).readonly(), alone: z.number().int().optional() }),
  z.object({ kind: z.literal('split-link'), devices: z.array(z.number().int()).readonly(), alone: z.number().int().optional() }),
  z.object({ kind: z.literal('cross-device'), layout: OverlapLayoutSchema, from: z.number().int(), to: z.number().int(), after: z.string() }),
  z.object({ kind: z.literal('peer'), from: z.number().int(), to: z.number().int(), both: z.literal(true).optional() }),
]);
// The schema and the vocabulary's type must describe the same thing.
const roleMatchesVocabulary: z.infer<typeof ModeRoleSchema> extends ModeRole ? (ModeRole extends z.infer<typeof ModeRoleSchema> ? true : false) : false = true;
void roleMatchesVocabulary;

export const BoundSchema = z.object({
  ms: z.number(),
  limitedBy: BoundTermSchema,
  steadyMs: z.number(),
  fillDrainMs: z.number(),
  copyEngines: z.number().int(),
  /** Every lower bound considered; `ms` of the largest is the bound. `perOpMs` is the fixed-cost part of `steadyMs`. */
  terms: z.array(z.object({ term: BoundTermSchema, steadyMs: z.number(), perOpMs: z.number().default(0), fillDrainMs: z.number(), ms: z.number() })),
  /** Both directions' bytes over the link mode's median, GB/s; null when not measured. */
  linkGbPerSecond: z.number().nullable(),
});
export type BoundRecord = z.infer<typeof BoundSchema>;

/** How one overlapped mode did: against its device's serial mode and against the model's bound for its layout. */
export const OverlapAnalysisSchema = z.object({
  serialMs: z.number(),
  /** serial median / this mode's median */
  speedup: z.number(),
  /** One standard error of the speedup, propagated from both medians' standard errors; null when a side has one sample. */
  speedupError: z.number().nullable(),
  bound: BoundSchema,
  /** bound / this mode's median */
  efficiency: z.number(),
  /** Elements in every chunk but the last. */
  chunkElements: z.number().int(),
  /** Absent in results written before the model had per-op, host and chunked-kernel terms. */
  model: ModelAnalysisSchema.nullable().default(null),
});
export type OverlapAnalysis = z.infer<typeof OverlapAnalysisSchema>;

export const CpuStageSchema = z.object({
  /** Worker threads in the pool. */
  workers: z.number().int().min(1),
  /** Tasks a rep ran (one per chunk and side). */
  tasksPerRep: z.number().int(),
  /** Of those, the tasks after a chunk's D2H (the others are a loader's fills); absent in files from before it: all. */
  afterTasksPerRep: z.number().int().optional(),
  /** The bytes a rep's tasks were handed: the CPU stage's throughput is these over its time. */
  bytesPerRep: z.number(),
  /** Median of every task's time in its worker, ms. */
  taskMedianMs: z.number(),
  /** The fastest task's time in its worker, ms (absent in files from before it). */
  taskMinMs: z.number().optional(),
  /** The least CPU work of a timed rep: its tasks' times in their workers added up, ms (absent in files from before it). */
  workMinMs: z.number().optional(),
  /** Each worker's time in tasks over the timed reps, ms, by worker index. */
  busyMs: z.array(z.number()),
  /** Median over the timed reps of the GPU's own time (start to end event), ms. */
  gpuMedianMs: z.number(),
  /** Median over the timed reps of the time from the GPU's start to the last task's end (host clock), ms. */
  cpuMedianMs: z.number(),
});
export type CpuStage = z.infer<typeof CpuStageSchema>;

export const ModeResultSchema = z.object({
  /** A key generated from the role (vocabulary.modeId); code reads `role`, never the id's parts. */
  id: z.string(),
  role: ModeRoleSchema,
  /** The CUDA device index the mode ran on; one of `devices`. */
  device: z.number().int(),
  description: z.string(),
  /** `peer`: bytes copied between devices (absent where none are). */
  bytes: z.object({ h2d: z.number(), d2h: z.number(), peer: z.number().optional(), collective: z.number().optional() }),
  /** GPU time of each timed rep, from CUDA events. */
  samplesMs: z.array(z.number()),
  /** Host time of each timed rep's issue loop (a host timer; issue cost, not GPU time). */
  hostIssueMs: z.array(z.number()),
  stats: StatsSchema,
  stoppedBy: z.enum(STOP_RULES),
  /** Host time spent on the timed reps. */
  elapsedMs: z.number(),
  gateTimeouts: z.number().int(),
  /** SM clock read between reps, MHz; null where NVML was not available. */
  smClockMHz: z.object({ min: z.number(), max: z.number() }).nullable(),
  /** Overlapped modes only: speedup, bound and efficiency. */
  analysis: OverlapAnalysisSchema.nullable(),
  /** Modes replayed as a CUDA graph: host time to capture and to instantiate it, paid once, not in `samplesMs`. */
  graph: z.object({ captureMs: z.number(), instantiateMs: z.number() }).optional(),
  /** Latency modes: each urgent kernel's time between the events around it, over every timed rep, ms. */
  latency: z.object({ n: z.number().int(), medianMs: z.number(), p99Ms: z.number(), maxMs: z.number() }).optional(),
  /** Issue-cost modes: the ops of that kind each rep issued, and the median host time per op, µs (a host timer). */
  issueCost: z.object({ opsPerRep: z.number().int(), hostUsPerOp: z.number() }).optional(),
  /** Modes that span devices: each device's own time, from its own events. */
  perDevice: z.array(DeviceTimesSchema).optional(),
  /**
   * A host stage on worker threads: what it did over the timed reps. `samplesMs` are then each rep's GPU work and
   * CPU work together (until the last task ended, where that is later than the end event).
   */
  cpuStage: CpuStageSchema.optional(),
  /**
   * Modes that ran collectives: the collective, the calls a rep made on each rank and their per-rank message bytes
   * together (each call's count × element size), from which the report gives the collective's bandwidths.
   */
  collective: z.object({ collective: z.enum(COLLECTIVES), calls: z.number().int().min(1), bytes: z.number().min(0) }).optional(),
  /**
   * A compute step's stage mode: the work one rep did and its rate at the median. `flop` (a GEMM's 2·m·n·k) with
   * `tflops`; `bytes` (a GEMM's operands read, or the element ranges of a kernel's non-resident buffer arguments) with
   * `gbPerSecond`. Absent where neither is known, and in files written before it.
   */
  throughput: z
    .object({ flop: z.number().min(0).optional(), tflops: z.number().min(0).optional(), bytes: z.number().min(0).optional(), gbPerSecond: z.number().min(0).optional() })
    .optional(),
});
export type ModeResult = z.infer<typeof ModeResultSchema>;

export const TimelineOpSchema = z.object({
  mode: z.string(),
  device: z.number().int(),
  stream: z.string(),
  /** `peer`: a copy to another device (cudaMemcpyPeerAsync), on a stream of the device it copies from. */
  kind: z.enum(STAGE_IDS),
  /** Chunk index; null for whole-buffer ops. */
  chunk: z.number().int().nullable(),
  buffer: z.string().nullable(),
  kernel: z.string().nullable(),
  /** Bytes a copy moved; for a kernel, the bytes of the element range it was given (0 for host ops); for a collective, the per-rank message bytes. */
  bytes: z.number(),
  /** A collective op's NCCL call; absent for every other kind. */
  collective: z.enum(COLLECTIVES).optional(),
  /** GPU time from the rep's start event to the op's own start and end events, ms. */
  startMs: z.number(),
  endMs: z.number(),
  /** Host time from issuing the rep's start event to issuing this op, ms (a host timer). */
  issuedMs: z.number(),
  /**
   * Host ops: host time from issuing the start event to when the function started and ended on the JS thread. On
   * the GPU's clock `startMs` is when its stream reached it; the difference is its latency, to within the gap
   * between issuing the start event and the GPU recording it.
   */
  hostStartedMs: z.number().optional(),
  hostEndedMs: z.number().optional(),
  /**
   * Where CUPTI recorded the op (the rep's `timing.source` is 'cupti'): when its engine started and finished it, on
   * the same clock as startMs. From startMs to engineStartMs the op was queued: its stream had reached it, its
   * engine had not. Absent for host ops, peer copies, and reps timed by events alone.
   */
  engineStartMs: z.number().optional(),
  engineEndMs: z.number().optional(),
});
export type TimelineOp = z.infer<typeof TimelineOpSchema>;

/** One traced rep: a rep run apart from the timed ones, with an event before and after every op. */
export const TracedRepSchema = z.object({
  mode: z.string(),
  device: z.number().int(),
  /** Start to end event of the traced rep, ms; per-op events make it a little slower than the timed reps. */
  totalMs: z.number(),
  /** Host time to issue the whole traced rep, ms. */
  issueMs: z.number(),
  /**
   * The host's wall clock (Unix epoch, ms) when the rep's start event was issued: every rank of a launch on one host
   * reads the same clock, so `merge` can tell which rank reached each collective last. Absent in older files.
   */
  originEpochMs: z.number().optional(),
  /** `flags` is the stream's kind; 'default' is how results before stream kinds spelled 'blocking'. */
  streams: z.array(z.object({ id: z.string(), flags: z.union([z.enum(STREAM_KINDS), z.literal('default')]), priority: z.number().int().nullable() })),
  ops: z.array(TimelineOpSchema),
  /**
   * What timed the ops' engine work: 'cupti' (each copy and kernel has engineStartMs/engineEndMs) or 'events' (the
   * events around each op only), with why. Absent in results from before CUPTI: events.
   */
  timing: z.object({ source: z.enum(['cupti', 'events']), note: z.string() }).optional(),
  /**
   * A host stage on worker threads: each chunk's task, on the host clock from issuing the rep's start event (which
   * the GPU's clock meets only there: to within the gap between issuing it and the GPU recording it).
   */
  workerTasks: z.array(z.object({ worker: z.number().int(), chunk: z.number().int().nullable(), startMs: z.number(), endMs: z.number() })).optional(),
});
export type TracedRep = z.infer<typeof TracedRepSchema>;

export const RunIdentitySchema = z.object({
  hostname: z.string(),
  /** The launcher's rank and size (OpenMPI, Slurm, MVAPICH, MPICH/PMI, torchrun); null when not launched by one. */
  rank: z.number().int().nullable(),
  localRank: z.number().int().nullable(),
  size: z.number().int().nullable(),
  jobId: z.string().nullable(),
  launcher: z.string().nullable(),
});
export type RunIdentity = z.infer<typeof RunIdentitySchema>;

// Parts of the Result that version 1 had in the same shape.
export const ConfigRecordSchema = z.object({
  name: z.string(),
  path: z.string().nullable(),
  hash: z.string(),
  /** The config as written, with command-line overrides applied. */
  resolved: z.unknown(),
});

export const BufferRecordSchema = z.object({
  name: z.string(),
  type: z.string(),
  elements: z.number(),
  bytes: z.number(),
  role: z.enum(BUFFER_ROLES),
  /** 'device-only' for scratch buffers. */
  hostMemory: z.string(),
  /** Added within version 2: elements per item, where the config gave pipeline.items and it is not 1. */
  itemSize: z.number().int().min(1).optional(),
});

export const KernelRecordSchema = z.object({
  label: z.string(),
  entry: z.string(),
  source: z.string(),
  block: z.number().int(),
  grid: z.union([z.literal('auto'), z.literal('cover'), z.number()]),
  compile: z.object({ cached: z.boolean(), ms: z.number(), arch: z.string(), nvrtc: z.string() }),
});

export const PolicyRecordSchema = z.object({
  warmup: z.number().int(),
  warmupMs: z.number(),
  fixedReps: z.number().int().nullable(),
  minReps: z.number().int(),
  maxReps: z.number().int(),
  /** Fraction, 0.005 = 0.5%. */
  maxNoise: z.number(),
  maxTimeMs: z.number(),
  /** True when a gate kernel held the streams until each rep was issued: times exclude host issue cost. */
  gate: z.boolean(),
});

/** Whether other compute processes shared the GPU during the run, as NVML listed them. */
export const SharingRecordSchema = z.object({
  checked: z.boolean(),
  /** The most compute processes other than this run seen at once; null when not checked. */
  otherProcesses: z.number().int().nullable(),
  note: z.string(),
});
export type SharingRecord = z.infer<typeof SharingRecordSchema>;

/** What results written before the check say: nothing is known. */
export const SHARING_NOT_CHECKED: SharingRecord = {
  checked: false,
  otherProcesses: null,
  note: 'not checked: written before cuda-pipe looked for other processes on the GPU',
};

/**
 * Whether the SM clock was watched during the run, and the range it was read in; and whether anything else was
 * running on the GPU (added within version 2: absent in older files, which read as not checked).
 */
export const ClocksRecordSchema = z.object({
  checked: z.boolean(),
  note: z.string(),
  minMHz: z.number().nullable(),
  maxMHz: z.number().nullable(),
  sharing: SharingRecordSchema.default(SHARING_NOT_CHECKED),
});

export const CommunicatorSchema = z.object({
  library: z.literal('nccl'),
  version: z.string(),
  ranks: z.number().int().min(1),
  localDevices: z.array(z.number().int()),
  nvls: z.enum(['off', 'on']),
});
export type CommunicatorRecord = z.infer<typeof CommunicatorSchema>;

/** A comparison within a tolerance: its rule (|a − b| ≤ absolute + relative × |b|) and the largest error it saw. */
const ToleranceCheckSchema = z.object({
  relative: z.number().min(0),
  absolute: z.number().min(0),
  largestError: z.object({ absolute: z.number().min(0), relative: z.number().min(0) }),
});

export const RunResultSchema = z.object({
  schema: z.literal(RESULT_SCHEMA_ID),
  version: z.literal(RESULT_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  createdAt: z.string(),
  run: RunIdentitySchema,
  environment: z.object({
    node: z.string(),
    platform: z.string(),
    software: SoftwareVersionsSchema,
  }),
  /** Every device the run used; modes name theirs by index. */
  devices: z.array(DeviceFactsSchema).min(1),
  config: ConfigRecordSchema,
  pipeline: z.object({
    /** Items per rep where the config gave pipeline.items (then chunks range over items, not elements). */
    elements: z.number(),
    /** Added within version 2: present where the config gave pipeline.items. */
    items: z.number().optional(),
    align: z.number().int(),
    requestedChunks: z.number().int(),
    requestedStreams: z.number().int(),
  }),
  buffers: z.array(BufferRecordSchema),
  kernels: z.array(KernelRecordSchema),
  policy: PolicyRecordSchema,
  clocks: ClocksRecordSchema,
  modes: z.array(ModeResultSchema),
  /** The headline: the first overlapped mode, as `run` prints it. Every overlapped mode has its own analysis. */
  summary: z.object({
    mode: z.string(),
    serialMs: z.number(),
    overlappedMs: z.number(),
    speedup: z.number(),
    speedupError: z.number().nullable(),
    efficiency: z.number(),
  }),
  /**
   * Device memory of the buffers: the budget asked for (null for none), what the plan allocates, what cudaMemGetInfo
   * saw go (before and after allocating), and the ring of slots the chunks cycled through (null when none). Absent
   * in results written before it was measured.
   */
  deviceMemory: z
    .object({
      budgetBytes: z.number().nullable(),
      askedBytes: z.number(),
      measuredBytes: z.number(),
      ring: z.object({ slots: z.number().int(), slotElements: z.number() }).nullable(),
    })
    .optional(),
  /** Traced reps, when the run recorded any. */
  timeline: z.object({ reps: z.array(TracedRepSchema) }).nullable(),
  /** Present when the result comes from `cuda-pipe sweep`. */
  sweep: SweepSectionSchema.nullable().default(null),
  /** Runs over several devices (added within version 2, absent otherwise): how peer copies ran, how the split scaled, the cross-device pipeline. */
  peers: z.array(PeerPathSchema).optional(),
  scaling: ScalingSchema.optional(),
  crossDevice: CrossDeviceSchema.optional(),
  /**
   * The NCCL communicator of a run with collective stages (added within version 2; null or absent without one):
   * its library version, ranks, this process's devices, and NVLink multicast ('off': NCCL_NVLS_ENABLE=0, set by
   * cuda-pipe or by the user; 'on': the user set it otherwise).
   */
  communicator: CommunicatorSchema.nullable().optional(),
  verification: z.object({
    /** `nothing-compared` (added within version 2): the config has no output buffer, so no output was compared. */
    status: z.enum(['passed', 'failed', 'skipped', 'nothing-compared']),
    /**
     * Added within version 2: what each overlapped mode's outputs were compared with; absent: serial's. A plan with a
     * reduce-scatter (whose outputs depend on the bucket count) compares each layout with its own checked rep, every
     * op waited for.
     */
    against: z.literal('same-layout-serialised').optional(),
    mismatches: z.array(MismatchSchema),
    /**
     * Added within version 2: present where the config gave verify.tolerance, so float outputs were compared as
     * numbers (|a − b| ≤ absolute + relative × |b|, integer outputs exact); absent: byte for byte.
     */
    tolerance: ToleranceCheckSchema.optional(),
    /**
     * Added within version 2, for a plan with all-reduces: serial's reduced outputs checked against ranks × those of
     * serial with its collectives left out (equal inputs on every rank), exactly for one or two ranks, else within
     * the tolerance; `text` says which rule ran on which elements. Its mismatches are listed under the serial mode.
     */
    reduction: z
      .object({
        rule: z.literal('allreduce-sum'),
        text: z.string(),
        ranks: z.number().int().positive(),
        buffers: z.array(z.object({ name: z.string(), elements: z.number().int().min(0) })),
        exact: z.boolean(),
        tolerance: ToleranceCheckSchema.optional(),
        status: z.enum(['passed', 'failed']),
      })
      .optional(),
  }),
  warnings: z.array(WarningSchema),
  notes: z.array(z.string()),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** The Result's JSON Schema, published by `cuda-pipe schema --result`. */
export function resultJsonSchema(): unknown {
  return {
    $id: 'https://cuda-pipe.dev/result.schema.json',
    title: `cuda-pipe result, version ${RESULT_VERSION}`,
    ...z.toJSONSchema(RunResultSchema, { io: 'output', unrepresentable: 'any' }),
  };
}

export { BoundTermSchema, type ModelAnalysis, type SweepSection } from './model.js';
