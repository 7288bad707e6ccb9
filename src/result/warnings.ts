import { z } from 'zod';

/**
 * Every warning a Result can carry, one per rule in measure/warnings.ts. Closed, so that a renderer or a script can
 * rely on the list; spelled as files already on disk spell them, so that those still load. Adding a code is adding a
 * rule; removing one would make older files unreadable.
 */
export const WarningCodeSchema = z.enum([
  'no-copy-engine',
  'one-copy-engine',
  'pageable-memory',
  'write-combined-output',
  'not-verified',
  'noisy',
  'outliers',
  'gate-timeout',
  'shared-gpu',
  'clock-change',
  'above-bound',
  'slower-than-serial',
]);
export type WarningCode = z.infer<typeof WarningCodeSchema>;

export const WarningSchema = z.object({
  code: WarningCodeSchema,
  message: z.string(),
  remedy: z.string(),
});
export type Warning = z.infer<typeof WarningSchema>;
