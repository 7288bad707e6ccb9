import { z } from 'zod';

// The contract between measuring and rendering. Renderers read a Result alone, so a saved JSON file redraws every
// table exactly as measured. Bump RESULT_VERSION on any change that an older reader would misread.

export const RESULT_SCHEMA_ID = 'cuda-pipe/result';
export const RESULT_VERSION = 1;
export const PROBE_SCHEMA_ID = 'cuda-pipe/probe';
export const PROBE_VERSION = 1;

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

export const BandwidthSchema = z.object({
  bytes: z.number(),
  hostMemory: z.enum(['pinned', 'pageable']),
  direction: z.enum(['h2d', 'd2h', 'bidirectional']),
  /** For bidirectional: the copies each direction was split into, and the streams per direction. */
  pieces: z.number().int(),
  streamsPerDirection: z.number().int(),
  samplesMs: z.array(z.number()),
  stats: StatsSchema,
  /** bytes moved (both directions together for bidirectional) / median time, in GB/s (1e9 bytes/s). */
  gbPerSecond: z.number(),
});
export type Bandwidth = z.infer<typeof BandwidthSchema>;

export const ProbeDocumentSchema = z.object({
  schema: z.literal(PROBE_SCHEMA_ID),
  version: z.literal(PROBE_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  software: SoftwareVersionsSchema,
  devices: z.array(z.object({ facts: DeviceFactsSchema, bandwidth: z.array(BandwidthSchema).nullable() })),
});
export type ProbeDocument = z.infer<typeof ProbeDocumentSchema>;

export const WarningSchema = z.object({
  code: z.string(),
  message: z.string(),
  remedy: z.string(),
});
export type Warning = z.infer<typeof WarningSchema>;

export const ModeResultSchema = z.object({
  id: z.string(),
  kind: z.enum(['serial', 'overlapped', 'stage', 'link']),
  description: z.string(),
  bytes: z.object({ h2d: z.number(), d2h: z.number() }),
  /** GPU time of each timed rep, from CUDA events. */
  samplesMs: z.array(z.number()),
  /** Host time of each timed rep's issue loop (a host timer; issue cost, not GPU time). */
  hostIssueMs: z.array(z.number()),
  stats: StatsSchema,
  stoppedBy: z.enum(['fixed-reps', 'noise-target', 'noise-stable', 'max-time', 'max-reps']),
  /** Host time spent on the timed reps. */
  elapsedMs: z.number(),
  gateTimeouts: z.number().int(),
  /** SM clock read between reps, MHz; null where NVML was not available. */
  smClockMHz: z.object({ min: z.number(), max: z.number() }).nullable(),
});
export type ModeResult = z.infer<typeof ModeResultSchema>;

export const MismatchSchema = z.object({
  buffer: z.string(),
  index: z.number().int(),
  expected: z.string(),
  actual: z.string(),
  differing: z.number().int(),
  unwritten: z.boolean(),
});

export const RunResultSchema = z.object({
  schema: z.literal(RESULT_SCHEMA_ID),
  version: z.literal(RESULT_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  createdAt: z.string(),
  environment: z.object({
    hostname: z.string(),
    node: z.string(),
    platform: z.string(),
    software: SoftwareVersionsSchema,
    device: DeviceFactsSchema,
  }),
  config: z.object({
    name: z.string(),
    path: z.string().nullable(),
    hash: z.string(),
    /** The config as written, with command-line overrides applied. */
    resolved: z.unknown(),
  }),
  layout: z.object({
    elements: z.number(),
    chunks: z.number().int(),
    requestedChunks: z.number().int(),
    streams: z.number().int(),
    requestedStreams: z.number().int(),
    order: z.enum(['depth-first', 'breadth-first']),
    orders: z.array(z.enum(['depth-first', 'breadth-first'])),
    align: z.number().int(),
    chunkElements: z.number().int(),
  }),
  buffers: z.array(z.object({
    name: z.string(),
    type: z.string(),
    elements: z.number(),
    bytes: z.number(),
    role: z.enum(['in', 'out', 'inout', 'scratch']),
    /** 'device-only' for scratch buffers. */
    hostMemory: z.string(),
  })),
  kernels: z.array(z.object({
    label: z.string(),
    entry: z.string(),
    source: z.string(),
    block: z.number().int(),
    grid: z.union([z.literal('auto'), z.literal('cover'), z.number()]),
    compile: z.object({ cached: z.boolean(), ms: z.number(), arch: z.string(), nvrtc: z.string() }),
  })),
  policy: z.object({
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
  }),
  /** Whether the SM clock was watched during the run, and the range it was read in. */
  clocks: z.object({ checked: z.boolean(), note: z.string(), minMHz: z.number().nullable(), maxMHz: z.number().nullable() }),
  modes: z.array(ModeResultSchema),
  bound: z.object({
    ms: z.number(),
    limitedBy: z.enum(['H2D', 'kernels', 'D2H', 'link', 'copy engine', 'serial']),
    steadyMs: z.number(),
    fillDrainMs: z.number(),
    copyEngines: z.number().int(),
    /** Every lower bound considered; `ms` of the largest is the bound. */
    terms: z.array(z.object({ term: z.string(), steadyMs: z.number(), fillDrainMs: z.number(), ms: z.number() })),
    /** Both directions' bytes over the bidirectional mode's median, GB/s; null when not measured. */
    linkGbPerSecond: z.number().nullable(),
  }),
  summary: z.object({
    serialMs: z.number(),
    overlappedMs: z.number(),
    /** serial median / overlapped median */
    speedup: z.number(),
    /** One standard error of the speedup, propagated from both medians' standard errors; null when a side has one sample. */
    speedupError: z.number().nullable(),
    /** bound / overlapped median */
    efficiency: z.number(),
  }),
  verification: z.object({
    status: z.enum(['passed', 'failed', 'skipped']),
    mismatches: z.array(MismatchSchema),
  }),
  warnings: z.array(WarningSchema),
  notes: z.array(z.string()),
});
export type RunResult = z.infer<typeof RunResultSchema>;
