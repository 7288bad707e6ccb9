import { z } from 'zod';

// The verdicts' shapes in every document that carries them (`compare --json`, `ab --json`, the analysis document's
// `--ab` part). compare/rule.ts states the rule these record.

export const VerdictSchema = z.enum(['faster', 'slower', 'same', 'noisy']);
export const OverallVerdictSchema = z.enum(['faster', 'slower', 'same', 'noisy', 'mixed']);

/** The rule a document's verdicts were judged by. */
export const VerdictRuleSchema = z.object({
  /** The equivalence band δ, a fraction: `same` needs the whole interval of B/A inside 1/(1+δ) … 1+δ. */
  band: z.number(),
  /** The interval's confidence: 0.9, so that `same` is TOST at α = 5%. */
  confidence: z.number(),
  /** Two separate runs (the Hodges–Lehmann shift of log times) or interleaved pairs (the sign test). */
  interval: z.enum(['hodges-lehmann', 'sign-test']),
});

/** B/A − 1: the estimate and its interval at the rule's confidence. */
export const ChangeRangeSchema = z.object({ estimate: z.number(), low: z.number(), high: z.number() });
