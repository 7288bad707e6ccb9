import { z } from 'zod';
import { ClocksRecordSchema, DeviceFactsSchema, SoftwareVersionsSchema } from './environment.js';
import { StatsSchema } from '../model/mode.js';
import { RESULT_SCHEMA_ID } from './schema.js';
import { BufferRecordSchema, ConfigRecordSchema, KernelRecordSchema, PolicyRecordSchema } from './workload.js';
import { WarningSchema } from './warnings.js';

// Version 1 of the Result (cuda-pipe 0.1.0): one layout, one summary, one bound, modes named by strings. Kept only so
// that load.ts can read the files written then (recorded fixtures, baselines/) and migrate them to the current
// version. Its 97 zod schemas are built at the first file of this version, not at every start that reads a Result.

function build() {
  const ModeResultV1Schema = z.object({
    id: z.string(),
    kind: z.enum(['serial', 'overlapped', 'stage', 'link']),
    description: z.string(),
    bytes: z.object({ h2d: z.number(), d2h: z.number() }),
    /** GPU time of each timed rep, from CUDA events. */
    samplesMs: z.array(z.number()),
    /** Host time of each timed rep's issue loop (a host timer; issue cost, not GPU time). */
    hostIssueMs: z.array(z.number()),
    stats: StatsSchema,
    stoppedBy: z.enum(['fixed-reps', 'noise-target', 'noise-stable', 'max-time', 'max-reps']),
    /** Host time spent on the timed reps. */
    elapsedMs: z.number(),
    gateTimeouts: z.number().int(),
    /** SM clock read between reps, MHz; null where NVML was not available. */
    smClockMHz: z.object({ min: z.number(), max: z.number() }).nullable(),
  });

  const MismatchV1Schema = z.object({
    buffer: z.string(),
    index: z.number().int(),
    expected: z.string(),
    actual: z.string(),
    differing: z.number().int(),
    unwritten: z.boolean(),
  });

  return z.object({
    schema: z.literal(RESULT_SCHEMA_ID),
    version: z.literal(1),
    tool: z.object({ name: z.string(), version: z.string() }),
    createdAt: z.string(),
    environment: z.object({
      hostname: z.string(),
      node: z.string(),
      platform: z.string(),
      software: SoftwareVersionsSchema,
      device: DeviceFactsSchema,
    }),
    config: ConfigRecordSchema,
    layout: z.object({
      elements: z.number(),
      chunks: z.number().int(),
      requestedChunks: z.number().int(),
      streams: z.number().int(),
      requestedStreams: z.number().int(),
      order: z.enum(['depth-first', 'breadth-first']),
      orders: z.array(z.enum(['depth-first', 'breadth-first'])),
      align: z.number().int(),
      chunkElements: z.number().int(),
    }),
    buffers: z.array(BufferRecordSchema),
    kernels: z.array(KernelRecordSchema),
    policy: PolicyRecordSchema,
    clocks: ClocksRecordSchema,
    modes: z.array(ModeResultV1Schema),
    bound: z.object({
      ms: z.number(),
      limitedBy: z.enum(['H2D', 'kernels', 'D2H', 'link', 'copy engine', 'serial']),
      steadyMs: z.number(),
      fillDrainMs: z.number(),
      copyEngines: z.number().int(),
      /** Every lower bound considered; `ms` of the largest is the bound. */
      terms: z.array(z.object({ term: z.string(), steadyMs: z.number(), fillDrainMs: z.number(), ms: z.number() })),
      /** Both directions' bytes over the bidirectional mode's median, GB/s; null when not measured. */
      linkGbPerSecond: z.number().nullable(),
    }),
    summary: z.object({
      serialMs: z.number(),
      overlappedMs: z.number(),
      /** serial median / overlapped median */
      speedup: z.number(),
      /**
       * One standard error of the speedup, propagated from both medians' standard errors; null when a side has one
       * sample.
       */
      speedupError: z.number().nullable(),
      /** bound / overlapped median */
      efficiency: z.number(),
    }),
    verification: z.object({
      status: z.enum(['passed', 'failed', 'skipped']),
      mismatches: z.array(MismatchV1Schema),
    }),
    warnings: z.array(WarningSchema),
    notes: z.array(z.string()),
  });
}

let built: ReturnType<typeof build> | undefined;

/** The schema of a version 1 Result, built once, when it is first asked for. */
export const runResultV1Schema = (): ReturnType<typeof build> => (built ??= build());

export type RunResultV1 = z.infer<ReturnType<typeof build>>;
