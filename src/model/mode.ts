import { z } from 'zod';
import {
  COLLECTIVES,
  DEFAULT_STREAM_OPS,
  ISSUE_COST_OPS,
  ISSUE_ORDERS,
  type ModeRole,
  SMALL_OPS,
  STOP_RULES,
  TOPOLOGIES,
} from '../vocabulary.js';
import { DeviceTimesSchema } from './devices.js';
import { OverlapAnalysisSchema } from './analysis.js';

// One measured mode: what it ran (its role), its samples and their statistics, and what each kind of mode adds.

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
  z.object({
    kind: z.literal('stage'),
    stage: z.literal('collective'),
    collective: z.string(),
    buckets: z.number().int().min(1).optional(),
  }),
  z.object({ kind: z.literal('link'), copiesPerDirection: z.number().int(), streamsPerDirection: z.number().int() }),
  z.object({ kind: z.literal('kernels-chunked'), layout: OverlapLayoutSchema }),
  z.object({ kind: z.literal('op-cost'), op: z.enum(SMALL_OPS) }),
  z.object({ kind: z.literal('issue-cost'), op: z.enum(ISSUE_COST_OPS) }),
  z.object({ kind: z.literal('latency'), kernel: z.string(), priorities: z.boolean() }),
  z.object({
    kind: z.literal('split'),
    layout: OverlapLayoutSchema,
    devices: z.array(z.number().int()).readonly(),
    alone: z.number().int().optional(),
  }),
  z.object({
    kind: z.literal('split-link'),
    devices: z.array(z.number().int()).readonly(),
    alone: z.number().int().optional(),
  }),
  z.object({
    kind: z.literal('cross-device'),
    layout: OverlapLayoutSchema,
    from: z.number().int(),
    to: z.number().int(),
    after: z.string(),
  }),
  z.object({ kind: z.literal('peer'), from: z.number().int(), to: z.number().int(), both: z.literal(true).optional() }),
]);
// The schema and the vocabulary's type must describe the same thing.
const roleMatchesVocabulary: z.infer<typeof ModeRoleSchema> extends ModeRole
  ? ModeRole extends z.infer<typeof ModeRoleSchema>
    ? true
    : false
  : false = true;
void roleMatchesVocabulary;

const MODE_FIELDS = {
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
};

const MODE_FIELDS_AFTER_KINDS = {
  /**
   * Modes that ran collectives: the collective, the calls a rep made on each rank and their per-rank message bytes
   * together (each call's count × element size), from which the report gives the collective's bandwidths.
   */
  collective: z
    .object({ collective: z.enum(COLLECTIVES), calls: z.number().int().min(1), bytes: z.number().min(0) })
    .optional(),
  /**
   * A compute step's stage mode: the work one rep did and its rate at the median. `flop` (a GEMM's 2·m·n·k) with
   * `tflops`; `bytes` (a GEMM's operands read, or the element ranges of a kernel's non-resident buffer arguments) with
   * `gbPerSecond`. Absent where neither is known, and in files written before it.
   */
  throughput: z
    .object({
      flop: z.number().min(0).optional(),
      tflops: z.number().min(0).optional(),
      bytes: z.number().min(0).optional(),
      gbPerSecond: z.number().min(0).optional(),
    })
    .optional(),
};

/**
 * A mode of the Result with the fields kinds add from their own records of its reps (the api's `reps`), where files
 * have always held them: after `perDevice`. A parsed object keeps its schema's order of keys, so a loaded Result is
 * written back as it was. The model names none of them; each kind reads its own.
 */
export function modeResultSchema<K extends z.ZodRawShape>(kinds: K) {
  return z.object({ ...MODE_FIELDS, ...kinds, ...MODE_FIELDS_AFTER_KINDS });
}

/** A mode as the core reads it: without the kinds' fields of its reps. */
export const ModeResultSchema = modeResultSchema({});
export type ModeResult = z.infer<typeof ModeResultSchema>;
