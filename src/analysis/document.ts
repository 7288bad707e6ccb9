import { z } from 'zod';
import { ChangeRangeSchema, OverallVerdictSchema, VerdictRuleSchema, VerdictSchema } from '../result/verdict.js';
import { traceFormats } from '../traces/formats/index.js';

// The document `analyze --json` writes (`cuda-pipe/analysis`, version 1) and `schema --analysis` prints. Shares are
// fractions (0.25 = 25%), times milliseconds. A share is null where its first party never ran in the step.

export const ANALYSIS_SCHEMA_ID = 'cuda-pipe/analysis';
/**
 * 2: a finding's `ms` is what the step would save without its cause (a replay), no longer the time its ops took;
 * `label`.
 */
export const ANALYSIS_VERSION = 2;

export const FINDING_CODES = [
  'pageable-copy',
  'default-stream',
  'serialised-copies',
  'copy-on-compute-stream',
  'exposed-communication',
  'host-sync',
  'host-bound',
] as const;
export type FindingCode = (typeof FINDING_CODES)[number];

const share = z.number().nullable();

const OverlapSchema = z.object({
  h2dWithKernel: share,
  d2hWithKernel: share,
  h2dWithD2h: share,
  copyWithKernel: share,
});

export const StepSchema = z.object({
  name: z.string(),
  /** The step's GPU start, ms on the trace's clock. */
  startMs: z.number(),
  ms: z.number(),
  busy: z.object({
    kernels: z.number(),
    h2d: z.number(),
    d2h: z.number(),
    memsets: z.number(),
    communication: z.number(),
  }),
  overlap: OverlapSchema.extend({ commWithCompute: share }),
  copyMs: z.number(),
  exposedCopyMs: z.number(),
  commMs: z.number(),
  exposedCommMs: z.number(),
  idleMs: z.number(),
  /**
   * idleMs by cause, each gap whole under one (docs/analyze.md): HTA's host wait and kernel wait, and its "other" as
   * sync wait and the rest.
   */
  hostWaitMs: z.number(),
  kernelWaitMs: z.number(),
  syncWaitMs: z.number(),
  otherIdleMs: z.number(),
  floor: z.object({
    ms: z.number(),
    bound: z.enum(['kernels', 'h2d', 'd2h']),
    kernelMs: z.number(),
    h2dMs: z.number().nullable(),
    d2hMs: z.number().nullable(),
    opCostMs: z.number(),
  }),
  efficiency: z.number(),
});
export type Step = z.infer<typeof StepSchema>;

export const RatesSchema = z.object({
  h2dGbPerSecond: z.number().nullable(),
  d2hGbPerSecond: z.number().nullable(),
  /** `trace`: the trace's own fastest copies; `probe`, `result`: the file given with --rates. */
  source: z.enum(['trace', 'probe', 'result']),
  file: z.string().nullable(),
});

export const DeviceAnalysisSchema = z.object({
  file: z.string(),
  /** The trace's format: an id of the list of formats (src/traces/formats/index.ts). */
  format: z.string().refine((id) => traceFormats().some((f) => f.id === id), {
    message: 'not a trace format of src/traces/formats/index.ts',
  }),
  device: z.number().int(),
  rank: z.number().int().nullable(),
  steps: z.array(StepSchema),
  /** Medians over the steps. */
  stepMs: z.number(),
  exposedCopyMs: z.number(),
  exposedCommMs: z.number(),
  idleMs: z.number(),
  /** Medians over the steps, each of its own: they need not add up to idleMs. */
  hostWaitMs: z.number(),
  kernelWaitMs: z.number(),
  syncWaitMs: z.number(),
  otherIdleMs: z.number(),
  floorMs: z.number(),
  /** floorMs / stepMs. */
  efficiency: z.number(),
  /** Over all steps together: each overlapped time summed over each first party's time summed. */
  overlap: OverlapSchema.extend({ commWithCompute: share.optional() }),
  rates: RatesSchema,
});
export type DeviceAnalysis = z.infer<typeof DeviceAnalysisSchema>;

export const FindingSchema = z.object({
  code: z.enum(FINDING_CODES),
  file: z.string(),
  device: z.number().int(),
  rank: z.number().int().nullable(),
  /**
   * Milliseconds a step would save without the cause, averaged over the device's steps: the step replayed with the
   * cause removed (docs/analyze.md), credited after the larger findings, never more than the step takes above its
   * floor.
   */
  ms: z.number(),
  /** Steps in which removing it saved time. */
  steps: z.number().int(),
  /** The PyTorch op or NVTX / record_function range its work comes from, where the trace has one. */
  label: z.string().nullable(),
  message: z.string(),
});
export type Finding = z.infer<typeof FindingSchema>;

/** One GPU's side of the collectives: a trace (a rank) and a device of it. */
export const ParticipantSchema = z.object({
  file: z.string(),
  rank: z.number().int().nullable(),
  device: z.number().int(),
});
export type Participant = z.infer<typeof ParticipantSchema>;

/**
 * Several ranks' traces: each collective's arrival skew, in `merge`'s words. A participant arrives when its NCCL
 * kernel starts; a collective's skew is the latest arrival − the earliest; the last to arrive is the one the others
 * waited for (none on a tie). `unknown` where the collectives do not pair, with the reason.
 */
export const CollectiveSkewSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('measured'),
    participants: z.array(ParticipantSchema),
    /** Collectives matched across every participant. */
    count: z.number().int(),
    /** Over the collectives. */
    skewMs: z.object({ median: z.number(), max: z.number() }),
    /**
     * Per participant, in participant order: how often it arrived last (count, and share of all collectives), and how
     * late it arrived (its start − the earliest).
     */
    lastArriving: z.array(
      ParticipantSchema.extend({
        count: z.number().int(),
        share: z.number(),
        lateMs: z.object({ median: z.number(), max: z.number() }),
      }),
    ),
    /**
     * The participants that arrived last most often (several on a tie; none when no collective had a last), the count,
     * and of how many.
     */
    mostOftenLast: z.object({ who: z.array(ParticipantSchema), count: z.number().int(), of: z.number().int() }),
    /**
     * Every collective: its step, kernel name and order among that step's kernels of that name; each participant's
     * start (ms, trace clock); the skew; the last's index in participants.
     */
    calls: z.array(
      z.object({
        step: z.string(),
        name: z.string(),
        order: z.number().int(),
        startsMs: z.array(z.number()),
        skewMs: z.number(),
        last: z.number().int().nullable(),
      }),
    ),
  }),
  z.object({ kind: z.literal('unknown'), participants: z.array(ParticipantSchema), reason: z.string() }),
]);
export type CollectiveSkew = z.infer<typeof CollectiveSkewSchema>;

/** `analyze A B --ab`: one device's step times in B against A, by `compare`'s rule. */
export const StepsVerdictSchema = z.object({
  device: z.number().int(),
  rank: z.number().int().nullable(),
  baselineFile: z.string(),
  candidateFile: z.string(),
  /** Median step times. */
  baselineMs: z.number(),
  candidateMs: z.number(),
  /** Steps (samples) on each side. */
  steps: z.tuple([z.number().int(), z.number().int()]),
  /** (B − A) / A of the medians. */
  change: z.number(),
  /**
   * B/A − 1 by compare/rule.ts: the Hodges–Lehmann estimate and its interval; null with too few steps (absent before
   * 2026-11-27).
   */
  interval: ChangeRangeSchema.nullable().optional(),
  verdict: VerdictSchema,
  /** Why, in one line (absent before 2026-11-27). */
  reason: z.string().optional(),
});
export type StepsVerdict = z.infer<typeof StepsVerdictSchema>;

export const AnalysisDocumentSchema = z.object({
  schema: z.literal(ANALYSIS_SCHEMA_ID),
  version: z.literal(ANALYSIS_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  devices: z.array(DeviceAnalysisSchema),
  /** Largest first within each device. */
  findings: z.array(FindingSchema),
  notes: z.array(z.string()),
  /** Only where two or more devices ran NCCL kernels (several ranks' traces, or one trace of several GPUs). */
  collectives: CollectiveSkewSchema.optional(),
  /** Only with --ab: B's steps against A's, per device. */
  verdicts: z.array(StepsVerdictSchema).optional(),
  /** Only with --ab: every device's verdict in one, and the rule (compare/rule.ts); absent before 2026-11-27. */
  verdict: OverallVerdictSchema.optional(),
  verdictRule: VerdictRuleSchema.optional(),
});
export type AnalysisDocument = z.infer<typeof AnalysisDocumentSchema>;

export function analysisJsonSchema(): unknown {
  const schema = z.toJSONSchema(AnalysisDocumentSchema, {
    io: 'output',
    unrepresentable: 'any',
    // A refinement has no JSON Schema: a format is one of the list's ids, named as an enum.
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === DeviceAnalysisSchema.shape.format) jsonSchema.enum = traceFormats().map((f) => f.id);
    },
  });
  return {
    $id: 'https://cuda-pipe.dev/analysis.schema.json',
    title: `cuda-pipe analysis, version ${ANALYSIS_VERSION}`,
    ...schema,
  };
}
