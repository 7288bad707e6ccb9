import { z } from 'zod';
import { MODE_SECTIONS, RESULT_SECTIONS } from '../kinds/index.js';
import { CrossDeviceSchema, PeerPathSchema, ScalingSchema } from '../model/devices.js';
import { ClocksRecordSchema, DeviceFactsSchema, RunIdentitySchema, SoftwareVersionsSchema } from './environment.js';
import { modeResultSchema } from '../model/mode.js';
import { SweepSectionSchema } from '../model/analysis.js';
import { TracedRepSchema } from './timeline.js';
import { VerificationSchema } from './verification.js';
import { WarningSchema } from './warnings.js';
import { BufferRecordSchema, ConfigRecordSchema, KernelRecordSchema, PolicyRecordSchema } from './workload.js';

// The contract between measuring and rendering. Renderers read a Result alone, so a saved JSON file redraws every
// table and picture exactly as measured. Bump RESULT_VERSION on any change that an older reader would misread, and
// teach load.ts to migrate the old version. Its parts live beside it, one file for each thing a Result is about.

export const RESULT_SCHEMA_ID = 'cuda-pipe/result';
export const RESULT_VERSION = 2;

export const RunResultSchema = z.object({
  schema: z.literal(RESULT_SCHEMA_ID),
  version: z.literal(RESULT_VERSION),
  tool: z.object({ name: z.string(), version: z.string() }),
  createdAt: z.string(),
  run: RunIdentitySchema,
  environment: z.object({
    node: z.string(),
    platform: z.string(),
    software: SoftwareVersionsSchema,
  }),
  /** Every device the run used; modes name theirs by index. */
  devices: z.array(DeviceFactsSchema).min(1),
  config: ConfigRecordSchema,
  pipeline: z.object({
    /** Items per rep where the config gave pipeline.items (then chunks range over items, not elements). */
    elements: z.number(),
    /** Added within version 2: present where the config gave pipeline.items. */
    items: z.number().optional(),
    align: z.number().int(),
    requestedChunks: z.number().int(),
    requestedStreams: z.number().int(),
    /** Added within version 2: present where the config gave pipeline.connections (CUDA_DEVICE_MAX_CONNECTIONS). */
    connections: z.number().int().optional(),
  }),
  buffers: z.array(BufferRecordSchema),
  kernels: z.array(KernelRecordSchema),
  policy: PolicyRecordSchema,
  clocks: ClocksRecordSchema,
  /** Each with the fields kinds add from their records of its reps (a host stage's `cpuStage`). */
  modes: z.array(modeResultSchema(MODE_SECTIONS)),
  /** The headline: the first overlapped mode, as `run` prints it. Every overlapped mode has its own analysis. */
  summary: z.object({
    mode: z.string(),
    serialMs: z.number(),
    overlappedMs: z.number(),
    speedup: z.number(),
    speedupError: z.number().nullable(),
    efficiency: z.number(),
  }),
  /**
   * Device memory of the buffers: the budget asked for (null for none), what the plan allocates, what cudaMemGetInfo
   * saw go (before and after allocating), and the ring of slots the chunks cycled through (null when none). Absent
   * in results written before it was measured.
   */
  deviceMemory: z
    .object({
      budgetBytes: z.number().nullable(),
      askedBytes: z.number(),
      measuredBytes: z.number(),
      ring: z.object({ slots: z.number().int(), slotElements: z.number() }).nullable(),
    })
    .optional(),
  /** Traced reps, when the run recorded any. */
  timeline: z.object({ reps: z.array(TracedRepSchema) }).nullable(),
  /** Present when the result comes from `cuda-pipe sweep`. */
  sweep: SweepSectionSchema.nullable().default(null),
  /**
   * Runs over several devices (added within version 2, absent otherwise): how peer copies ran, how the split scaled,
   * the cross-device pipeline.
   */
  peers: z.array(PeerPathSchema).optional(),
  scaling: ScalingSchema.optional(),
  crossDevice: CrossDeviceSchema.optional(),
  /** The sections each stage kind adds (src/kinds/<kind>/result.ts): a collective's NCCL `communicator`. */
  ...RESULT_SECTIONS,
  verification: VerificationSchema,
  warnings: z.array(WarningSchema),
  notes: z.array(z.string()),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** The Result's JSON Schema, published by `cuda-pipe schema --result`. */
export function resultJsonSchema(): unknown {
  return {
    $id: 'https://cuda-pipe.dev/result.schema.json',
    title: `cuda-pipe result, version ${RESULT_VERSION}`,
    ...z.toJSONSchema(RunResultSchema, { io: 'output', unrepresentable: 'any' }),
  };
}
