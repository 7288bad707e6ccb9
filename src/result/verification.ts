import { z } from 'zod';
import { OutputCheckRecordSchema, ToleranceCheckSchema } from '../model/outputs.js';

// Whether the overlapped modes computed what serial did: the outputs compared, how, and every mismatch.

export const MismatchSchema = z.object({
  buffer: z.string(),
  /** The overlapped mode whose output differed from serial. */
  mode: z.string(),
  /**
   * Added within version 2: the device whose outputs differed, where a data-parallel run stored several devices' apart.
   */
  device: z.number().int().optional(),
  index: z.number().int(),
  expected: z.string(),
  actual: z.string(),
  differing: z.number().int(),
  unwritten: z.boolean(),
});
export type Mismatch = z.infer<typeof MismatchSchema>;

export const VerificationSchema = z.object({
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
  reduction: OutputCheckRecordSchema.optional(),
});
