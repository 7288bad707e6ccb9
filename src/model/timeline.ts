import { z } from 'zod';
import { COLLECTIVES, STREAM_KINDS } from '../vocabulary.js';

// The traced reps: each op on the GPU's clock, and on the host's where it ran there, for the timeline and its analysis.
// An op's kind is any stage kind's here; the Result's schema (result/timeline.ts) narrows it to the listed kinds'.

export const TimelineOpBaseSchema = z.object({
  mode: z.string(),
  device: z.number().int(),
  stream: z.string(),
  /** `peer`: a copy to another device (cudaMemcpyPeerAsync), on a stream of the device it copies from. */
  kind: z.string(),
  /** Chunk index; null for whole-buffer ops. */
  chunk: z.number().int().nullable(),
  buffer: z.string().nullable(),
  kernel: z.string().nullable(),
  /**
   * Bytes a copy moved; for a kernel, the bytes of the element range it was given (0 for host ops); for a collective,
   * the per-rank message bytes.
   */
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
export type TimelineOpBase = z.infer<typeof TimelineOpBaseSchema>;

/** One traced rep: a rep run apart from the timed ones, with an event before and after every op. */
export const TracedRepBaseSchema = z.object({
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
  streams: z.array(
    z.object({
      id: z.string(),
      flags: z.union([z.enum(STREAM_KINDS), z.literal('default')]),
      priority: z.number().int().nullable(),
    }),
  ),
  ops: z.array(TimelineOpBaseSchema),
  /**
   * What timed the ops' engine work: 'cupti' (each copy and kernel has engineStartMs/engineEndMs) or 'events' (the
   * events around each op only), with why. Absent in results from before CUPTI: events.
   */
  timing: z.object({ source: z.enum(['cupti', 'events']), note: z.string() }).optional(),
  /**
   * A host stage on worker threads: each chunk's task, on the host clock from issuing the rep's start event (which
   * the GPU's clock meets only there: to within the gap between issuing it and the GPU recording it).
   */
  workerTasks: z
    .array(
      z.object({
        worker: z.number().int(),
        chunk: z.number().int().nullable(),
        startMs: z.number(),
        endMs: z.number(),
      }),
    )
    .optional(),
});
export type TracedRepBase = z.infer<typeof TracedRepBaseSchema>;

/** A span of time on some clock, [start, end) (the analysis' interval arithmetic works on these). */
export interface Interval {
  readonly start: number;
  readonly end: number;
}

/** Sorted, disjoint, non-empty intervals. */
export type IntervalSet = readonly Interval[];
