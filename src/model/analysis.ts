import { z } from 'zod';
import { ISSUE_ORDERS } from '../vocabulary.js';

// The parts of a Result that say why: an overlapped mode against serial and against its bound, the overlap model's
// view of it, and a sweep's verdict.

export const BoundTermSchema = z.enum([
  'H2D',
  'kernels',
  'D2H',
  'link',
  'copy engine',
  'serial',
  'streams',
  'host issue',
  'CPU stage',
  'communication',
]);

/** The parts the overlap model was built from, as measured in the run (times in ms). */
export const ModelPartsSchema = z.object({
  h2dMs: z.number(),
  d2hMs: z.number(),
  kernelWholeMs: z.number(),
  h2dBytes: z.number(),
  d2hBytes: z.number(),
  h2dCopiesPerChunk: z.number().int(),
  d2hCopiesPerChunk: z.number().int(),
  kernelsPerChunk: z.number().int(),
  linkMs: z.number().nullable(),
  linkPieces: z.number().int(),
  copyEngines: z.number().int(),
  h2dOpMs: z.number(),
  d2hOpMs: z.number(),
  launchOpMs: z.number(),
  hostCopyMs: z.number(),
  hostLaunchMs: z.number(),
  /** Host cost of an event record or a stream wait; absent in files from before it was measured apart. */
  hostSyncMs: z.number().optional(),
  gated: z.boolean(),
});

export const GapCauseSchema = z.enum([
  'fill and drain',
  'per-op cost',
  'shared link',
  'host issue',
  'CPU stage',
  'kernels not concurrent',
  'one direction at a time',
  'too few streams',
  'exposed communication',
  'serialisation and effects the model does not capture',
]);

/**
 * What the model's advice changes: the layout (chunks and streams, or a kind's words for them: buckets), the issue (a
 * CUDA graph), the host stage's workers, the streams' kind; `none`: no change the model can name.
 */
export const ADVICE_CODES = ['layout', 'graph', 'workers', 'stream-kind', 'none'] as const;

/**
 * The model's advice for one overlapped mode: the largest cause of the time lost against the workload's ideal, why,
 * and the change that helps with what it is predicted to save: the step's time with the change made (`predictedMs`,
 * null where no change is named) and measured − that, never more than measured − the floor the change leaves.
 */
export const AdviceSchema = z.object({
  code: z.enum(ADVICE_CODES),
  cause: GapCauseSchema,
  /** The time lost to the cause against the ideal. */
  lostMs: z.number(),
  change: z.string().nullable(),
  why: z.string(),
  predictedMs: z.number().nullable(),
  savingMs: z.number(),
  /** The layout a `layout` change names. */
  to: z.object({ chunks: z.number().int(), streams: z.number().int() }).optional(),
});
export type AdviceRecord = z.infer<typeof AdviceSchema>;

const ClockRangeSchema = z.object({ min: z.number(), max: z.number() });

/**
 * The SM clocks of the bound's kernel parts against the mode's (src/clocks.ts); `rebuilt`: the parts put at the mode's.
 */
export const ClockMatchSchema = z.object({
  status: z.enum(['matching', 'rebuilt', 'moving', 'unknown']),
  mode: ClockRangeSchema.nullable(),
  parts: ClockRangeSchema.nullable(),
});

/** What makes ops run one after another that the model takes as concurrent, where a layout has it. */
export const SERIALISERS = ['per-thread default stream', 'legacy default stream', 'pageable memory'] as const;
export type Serialiser = (typeof SERIALISERS)[number];

/** The model's view of one overlapped mode: what it was built from, the workload's floor, and where time went. */
export const ModelAnalysisSchema = z.object({
  parts: ModelPartsSchema,
  /** The kernels alone, chunked as this layout runs them; null when not measured. */
  kernelsChunkedMs: z.number().nullable(),
  /** Host time to issue one rep of this layout (median of its timed reps): for the advice only, never in the bound. */
  hostIssueMs: z.number(),
  /** Ops issued per rep. */
  ops: z.object({ copies: z.number().int(), launches: z.number().int(), sync: z.number().int() }),
  /** The slowest resource doing all the work with no per-op cost and no fill or drain. */
  idealMs: z.number(),
  /** The best layout the model predicts for this workload over chunk and stream counts, and its time. */
  floor: z.object({
    chunks: z.number().int(),
    streams: z.number().int(),
    ms: z.number(),
    limitedBy: BoundTermSchema,
    /**
     * The layout the model predicted faster that this Result measured no faster (a sweep's), which the floor is then
     * not: the measurement overrules the prediction. Absent where none was.
     */
    overruled: z
      .object({ chunks: z.number().int(), streams: z.number().int(), predictedMs: z.number(), measuredMs: z.number() })
      .optional(),
  }),
  /** measured − ideal, split into causes that add up to it; a negative part is time measured beat the model by. */
  gap: z.array(z.object({ cause: GapCauseSchema, ms: z.number() })),
  /**
   * The statistic every part was taken at: `min`, the fastest of its samples. Absent in files from before, whose
   * parts were medians and whose host term was the layout's own issue time.
   */
  statistic: z.literal('min').optional(),
  /** What in this layout serialises ops (absent in files from before it was recorded; empty: nothing known to). */
  serialisers: z.array(z.enum(SERIALISERS)).optional(),
  // Added within version 2, absent in files from before: the report computes them again from the modes.
  /** The SM clocks of the kernel parts against this mode's; where `rebuilt`, the parts are at this mode's clock. */
  clocks: ClockMatchSchema.optional(),
  /** The advice the model gives this layout; null where nothing is lost against the ideal. */
  advice: AdviceSchema.nullable().optional(),
  /**
   * Where a kind's term is in the bound (a collective's buckets), its words: this layout and the best, what limits
   * each where its term does, and why no other layout is predicted where none is.
   */
  words: z
    .object({
      layout: z.string(),
      best: z.string(),
      limit: z.string().nullable(),
      bestLimit: z.string().nullable(),
      unpredicted: z.string().nullable(),
      /** The layout the floor's `overruled` names. */
      overruled: z.string().optional(),
    })
    .optional(),
});
export type ModelAnalysis = z.infer<typeof ModelAnalysisSchema>;

/** A sweep: the axes it spanned, this result's values of the axes that are not the layout, and its verdict. */
export const SweepSectionSchema = z.object({
  axes: z.array(z.object({ name: z.string(), values: z.array(z.union([z.string(), z.number()])) })),
  /** This result's values of the non-layout axes (a kernel argument, the host memory kind, a buffer size). */
  settings: z.record(z.string(), z.union([z.string(), z.number()])),
  /** The overlapped modes of the sweep, by id; each layout's figures are in its mode. */
  points: z.array(
    z.object({ mode: z.string(), chunks: z.number().int(), streams: z.number().int(), order: z.enum(ISSUE_ORDERS) }),
  ),
  /** The fastest layout by median, and every layout whose middle half overlaps the best's (a tie within noise). */
  best: z.object({ mode: z.string(), ties: z.array(z.string()) }),
  budgetMs: z.number(),
  elapsedMs: z.number(),
});
export type SweepSection = z.infer<typeof SweepSectionSchema>;

export const BoundSchema = z.object({
  ms: z.number(),
  limitedBy: BoundTermSchema,
  steadyMs: z.number(),
  fillDrainMs: z.number(),
  copyEngines: z.number().int(),
  /** Every lower bound considered; `ms` of the largest is the bound. `perOpMs` is the fixed-cost part of `steadyMs`. */
  terms: z.array(
    z.object({
      term: BoundTermSchema,
      steadyMs: z.number(),
      perOpMs: z.number().default(0),
      fillDrainMs: z.number(),
      ms: z.number(),
    }),
  ),
  /** Both directions' bytes over the link mode's median, GB/s; null when not measured. */
  linkGbPerSecond: z.number().nullable(),
});
export type BoundRecord = z.infer<typeof BoundSchema>;

/** How one overlapped mode did: against its device's serial mode and against the model's bound for its layout. */
export const OverlapAnalysisSchema = z.object({
  serialMs: z.number(),
  /** serial median / this mode's median */
  speedup: z.number(),
  /**
   * One standard error of the speedup, propagated from both medians' standard errors; null when a side has one sample.
   */
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
