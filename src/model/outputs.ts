import { z } from 'zod';

// What comparing a run's outputs finds, in terms the verifier (data/compare.ts) and a kind's output check share.

export interface OutputMismatch {
  readonly buffer: string;
  readonly index: number;
  readonly expected: string;
  readonly actual: string;
  readonly differing: number;
  /** The candidate's element still holds its poison: the candidate mode never wrote it. */
  readonly unwritten: boolean;
}

/** How a verified mode's outputs were compared with serial's, as the Result records it. */
export interface ToleranceRule {
  readonly relative: number;
  readonly absolute: number;
}

/** A comparison within a tolerance: its rule (|a − b| ≤ absolute + relative × |b|) and the largest error it saw. */
export const ToleranceCheckSchema = z.object({
  relative: z.number().min(0),
  absolute: z.number().min(0),
  largestError: z.object({ absolute: z.number().min(0), relative: z.number().min(0) }),
});

/** A stage kind's check of serial's outputs against its own reference rep, as the Result's verification records it. */
export const OutputCheckRecordSchema = z.object({
  rule: z.literal('allreduce-sum'),
  text: z.string(),
  ranks: z.number().int().positive(),
  buffers: z.array(z.object({ name: z.string(), elements: z.number().int().min(0) })),
  exact: z.boolean(),
  tolerance: ToleranceCheckSchema.optional(),
  status: z.enum(['passed', 'failed']),
});
export type OutputCheckRecord = z.infer<typeof OutputCheckRecordSchema>;
