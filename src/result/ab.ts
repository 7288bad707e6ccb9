import { z } from 'zod';
import { DeviceFactsSchema, RunIdentitySchema, SoftwareVersionsSchema } from './environment.js';
import { ModeRoleSchema, StatsSchema } from '../model/mode.js';
import { MismatchSchema } from './verification.js';
import { OverallVerdictSchema, VerdictRuleSchema, VerdictSchema } from './verdict.js';

// The document `cuda-pipe ab --json` writes: two pipelines measured in one process on one GPU, their reps
// interleaved, and a paired verdict per mode. Version 2 (2026-11-27) judges by compare/rule.ts' equivalence band and
// adds the top-level `verdict`; version 1 documents (the noise rule: floor, multiple, 95% interval) still load and
// render with their own verdicts and rule.

export const AB_SCHEMA_ID = 'cuda-pipe/ab';
export const AB_VERSION = 2;

const SideSchema = z.object({
  name: z.string(),
  path: z.string().nullable(),
  hash: z.string(),
  verification: z.object({
    status: z.enum(['passed', 'failed', 'skipped', 'nothing-compared']),
    mismatches: z.array(MismatchSchema),
  }),
});

/**
 * A paired estimate of B's time over A's: the median ratio and the sign test's interval (null below 5 pairs at 90%).
 */
const RatioSchema = z.object({
  ratio: z.number(),
  low: z.number().nullable(),
  high: z.number().nullable(),
  noise: z.number(),
});

/** How the reps were taken until each mode was decided. */
const StoppingSchema = z.object({
  minPairs: z.number().int(),
  maxPairs: z.number().int(),
  maxTimeMs: z.number(),
  warmup: z.number().int(),
});

/** Version 2: the one rule's band and confidence (compare/rule.ts), and the stopping rule. */
export const AbRuleSchema = VerdictRuleSchema.extend(StoppingSchema.shape);

/** Version 1: a change counted past max(floor, multiple × the pairs' noise), or the threshold, at 95%. */
export const AbRuleV1Schema = StoppingSchema.extend({
  floor: z.number(),
  multiple: z.number(),
  threshold: z.number().nullable(),
  confidence: z.number(),
});

export const AbModeSchema = z.object({
  id: z.string(),
  role: ModeRoleSchema,
  /** Whether this mode can fail the gate (compare's modes a user acts on). */
  gating: z.boolean(),
  /** A's and B's timed reps in issue order: a[i] and b[i] are one pair, run back to back. */
  aMs: z.array(z.number()),
  bMs: z.array(z.number()),
  a: StatsSchema,
  b: StatsSchema,
  /** B over A, pair by pair, in time. */
  time: RatioSchema,
  /** B over A in clock-normalised time (time × the SM clock read after each rep); null where NVML gave no clock. */
  cycles: RatioSchema.nullable(),
  /**
   * The band δ (version 1: the change that had to be reached, the threshold or the floor and multiple of the noise).
   */
  needed: z.number(),
  /** time.ratio − 1: positive is slower. */
  change: z.number(),
  verdict: VerdictSchema,
  /** Why, in one line: the interval against the band, the clocks, or the budget (version 2). */
  reason: z.string().optional(),
  /** Slower or faster in time, the same in clock-normalised time. */
  clocksExplain: z.boolean(),
  /** `decided` once the rule gave a verdict after the minimum pairs; otherwise the budget ran out (then `noisy`). */
  stoppedBy: z.enum(['decided', 'max-time', 'max-reps']),
  elapsedMs: z.number(),
});
export type AbMode = z.infer<typeof AbModeSchema>;

export const AbResultSchema = z.object({
  schema: z.literal(AB_SCHEMA_ID),
  version: z.union([z.literal(1), z.literal(AB_VERSION)]),
  tool: z.object({ name: z.string(), version: z.string() }),
  createdAt: z.string(),
  run: RunIdentitySchema,
  device: DeviceFactsSchema,
  software: SoftwareVersionsSchema,
  a: SideSchema,
  b: SideSchema,
  rule: z.union([AbRuleSchema, AbRuleV1Schema]),
  /** The document's one verdict from its gating modes (compare/rule.ts' `overallVerdict`); absent in version 1. */
  verdict: OverallVerdictSchema.optional(),
  gate: z.boolean(),
  clocks: z.object({ checked: z.boolean(), note: z.string() }),
  modes: z.array(AbModeSchema),
  /** Modes of one side with no counterpart on the other (not interleaved). */
  unpaired: z.array(z.string()),
  notes: z.array(z.string()),
});
export type AbResult = z.infer<typeof AbResultSchema>;
