import { z } from 'zod';

/**
 * The Result's `communicator` section (added within version 2; null or absent without a collective): the NCCL
 * communicator of a run with collective stages. `nvls`: whether NVLink SHARP (multicast) was left on ('off': set by
 * cuda-pipe or by the user; 'on': the user set it otherwise).
 */
export const CommunicatorSchema = z.object({
  library: z.literal('nccl'),
  version: z.string(),
  ranks: z.number().int().min(1),
  localDevices: z.array(z.number().int()),
  nvls: z.enum(['off', 'on']),
  /** Added within version 2: the CTAs each collective was pinned to (collective.ctas); absent: NCCL's own choice. */
  ctas: z.number().int().min(1).optional(),
});
export type CommunicatorRecord = z.infer<typeof CommunicatorSchema>;

/** The fields a collective adds to a Result. */
export const resultSection = { communicator: CommunicatorSchema.nullable().optional() };
