import { z } from 'zod';
import { STAGE_IDS } from '../kinds/index.js';
import { TimelineOpBaseSchema, TracedRepBaseSchema } from '../model/timeline.js';

// The traced reps as a Result holds them: the model's (model/timeline.ts), each op's kind one of the listed kinds'.

export const TimelineOpSchema = TimelineOpBaseSchema.extend({ kind: z.enum(STAGE_IDS) });
export type TimelineOp = z.infer<typeof TimelineOpSchema>;

export const TracedRepSchema = TracedRepBaseSchema.extend({ ops: z.array(TimelineOpSchema) });
export type TracedRep = z.infer<typeof TracedRepSchema>;
