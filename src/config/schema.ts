import { z } from 'zod';
import { CONFIG_SECTIONS, STEP_CONFIGS } from '../kinds/index.js';
import { PrioritySchema } from '../model/schedule.js';
import { KernelSchema } from './kernel-entry.js';
import { quantity, showValue } from './quantity.js';

import {
  BUFFER_ROLES,
  DEFAULT_STREAM_OPS,
  DEFAULT_STREAMS,
  ELEMENT_TYPES,
  HOST_MEMORY_KINDS,
  ISSUE_MODES,
  ISSUE_ORDERS,
  MAX_DEVICE_INDEX,
  STREAM_KINDS,
  TOPOLOGIES,
} from '../vocabulary.js';

const InitSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('random'), seed: z.number().int().default(1) }).strict(),
    z.object({ kind: z.literal('ramp'), start: z.number().default(0), step: z.number().default(1) }).strict(),
    z.object({ kind: z.literal('constant'), value: z.number() }).strict(),
  ],
  { error: 'expected { kind: random, seed }, { kind: ramp, start, step } or { kind: constant, value }' },
);

const BufferSchema = z
  .object({
    type: z.enum(ELEMENT_TYPES).describe('element type; float16 and bfloat16 are moved as raw 16-bit values'),
    count: quantity('count')
      .optional()
      .describe('element count, e.g. 64Mi or 1000000; with pipeline.items, items × itemSize (or omit it)'),
    size: quantity('bytes').optional().describe('byte size, e.g. 256MiB; a multiple of the element size'),
    itemSize: quantity('count')
      .pipe(z.number().min(1, 'itemSize is elements per item: 1 or more'))
      .optional()
      .describe(
        'elements per item (default 1), with pipeline.items: a chunk of items covers items × itemSize elements of this buffer',
      ),
    role: z
      .enum(BUFFER_ROLES)
      .describe(
        'in: copied to the GPU; out: copied back; inout: both; scratch: device only, for data passed between kernels; resident: copied to the GPU whole, once, before timing, and read whole by every chunk',
      ),
    init: InitSchema.optional().describe(
      'initial contents of in, inout and resident buffers (default: seeded random); on a scratch buffer, its device memory is seeded once before timing (without it, scratch starts unset)',
    ),
    hostMemory: z.enum(HOST_MEMORY_KINDS).optional().describe('overrides the top-level hostMemory for this buffer'),
  })
  .strict();

// A `kernels:` entry is a kernel, or a library stage's entry (`gemm: {...}`), whose schema its stage kind owns.
const [firstStep, ...moreSteps] = STEP_CONFIGS.map((c) => c.schema);
const ComputeStepSchema = firstStep ? z.union([KernelSchema, firstStep, ...moreSteps]) : KernelSchema;

const LatencySchema = z
  .object({
    kernel: z.string().describe('a kernel of `kernels:` to launch on the latency-critical stream instead of per chunk'),
    elements: quantity('count').default(256).describe('elements each urgent launch covers (from element 0)'),
    priority: PrioritySchema.default('high'),
  })
  .strict();

const PipelineSchema = z
  .object({
    chunks: z.number().int().min(1).default(16),
    streams: z.number().int().min(1).default(4),
    order: z
      .union([z.enum(ISSUE_ORDERS), z.array(z.enum(ISSUE_ORDERS)).min(1)], {
        error: (issue) => `expected depth-first or breadth-first, or a list of them, got ${showValue(issue.input)}`,
      })
      .default('depth-first')
      .describe(
        'depth-first: per chunk H2D, kernels, D2H; breadth-first: all H2Ds, then all kernels, then all D2Hs. A list measures each; the first is the headline',
      ),
    streamKind: z
      .enum(STREAM_KINDS)
      .optional()
      .describe(
        'non-blocking (default): created with cudaStreamNonBlocking; blocking: serialises with the legacy default stream; legacy-default or per-thread-default: every stream is that default stream',
      ),
    streamFlags: z
      .enum(['non-blocking', 'default'])
      .optional()
      .describe('deprecated: use streamKind (streamFlags: default meant streamKind: blocking)'),
    topology: z
      .enum(TOPOLOGIES)
      .default('chunk-per-stream')
      .describe(
        'chunk-per-stream: chunk i on stream i mod streams; stage-per-stream: one stream per stage (load, compute, store) ordered by events',
      ),
    mode: z
      .enum(ISSUE_MODES)
      .default('stream')
      .describe(
        'stream: ops issued from the host every rep; graph: also measure the overlapped body captured once as a CUDA graph and replayed',
      ),
    slots: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'device slots the chunks cycle through (a ring); default: as many as deviceMemory allows, else one per chunk',
      ),
    legacyDefaultOp: z
      .object({ chunk: z.number().int().min(0).describe('the chunk whose kernel goes on the legacy default stream') })
      .strict()
      .optional()
      .describe(
        'also measure each layout with this one kernel on the legacy default stream (cudaStreamLegacy), to show what it costs',
      ),
    defaultStreamOp: z
      .object({
        chunk: z.number().int().min(0).describe('the chunk whose op goes on a default stream'),
        op: z.enum(DEFAULT_STREAM_OPS).default('kernel').describe("kernel: the chunk's kernels; h2d: its loads"),
        stream: z
          .union([z.enum(DEFAULT_STREAMS), z.array(z.enum(DEFAULT_STREAMS)).min(1)])
          .default(['per-thread', 'legacy'])
          .describe(
            'legacy: cudaStreamLegacy, which blocking streams synchronise with; per-thread: cudaStreamPerThread, which they do not; a list measures each',
          ),
      })
      .strict()
      .optional()
      .describe(
        'also measure each layout with this one op on a default stream, each stream beside the layout without it',
      ),
    items: quantity('count')
      .pipe(z.number().min(1, 'items is a count of items per rep: 1 or more'))
      .optional()
      .describe(
        "items per rep (a batch of rows): chunks are item ranges, and each chunked buffer holds items × its itemSize elements; default: chunks range over the buffers' shared element count",
      ),
    // 0 would make every chunk boundary a multiple of nothing: the planner divides by it.
    align: quantity('count')
      .pipe(z.number().min(1, 'align is a row length in elements: 1 or more'))
      .default(1)
      .describe(
        'chunks start at multiples of this many elements (e.g. a row length); with pipeline.items, of this many items',
      ),
    priority: PrioritySchema.optional().describe("priority of the pipeline's streams (default: the device's default)"),
    connections: z
      .number()
      .int()
      .min(1)
      .max(32)
      .optional()
      .describe(
        "hardware work queues CUDA spreads the process's streams over (it sets CUDA_DEVICE_MAX_CONNECTIONS before CUDA starts; default: the environment's, else CUDA's 8). Fewer queues can keep copies from several streams from contending for the copy engine",
      ),
    handoff: z
      .object({
        after: z.string().describe('the last kernel on the first device; the kernels after it run on the second'),
      })
      .strict()
      .optional()
      .describe(
        'with two devices: one pipeline across them, each chunk handed from the first to the second by a peer copy of the buffers both halves use',
      ),
  })
  .strict();

const VerifySchema = z
  .object({
    tolerance: z
      .object({
        relative: z.number().min(0).default(0).describe('allowed |a − b| as a fraction of |expected|'),
        absolute: z.number().min(0).default(0).describe('allowed |a − b| besides the relative part'),
      })
      .strict()
      .optional()
      .describe(
        'compare float outputs as numbers, |a − b| ≤ absolute + relative × |b|, instead of byte for byte; integer outputs stay exact',
      ),
  })
  .strict()
  .describe("how every overlapped mode's outputs are compared with serial's (default: byte for byte)");

const RepetitionsSchema = z
  .object({
    warmup: z.number().int().min(0).default(3).describe('warm-up reps, not kept'),
    warmupTime: z.number().min(0).default(0).describe('keep warming up for at least this many milliseconds'),
    reps: z.number().int().min(1).optional().describe('an exact number of timed reps, instead of the noise rule'),
    minReps: z.number().int().min(2).default(10).describe('timed reps before the noise rule may stop'),
    maxReps: z.number().int().min(2).default(2000),
    maxNoise: z.number().positive().default(0.5).describe('noise target in percent (1.4826 · MAD / median)'),
    maxTime: z.number().positive().default(3).describe('seconds of timed reps per mode at most'),
  })
  .strict();

/** Values one sweep axis may list: each is measured (a setting is a whole sweep of layouts), so thousands never end. */
export const MAX_SWEEP_VALUES = 64;
const axisLimit = `a sweep axis lists at most ${MAX_SWEEP_VALUES} values`;

const SweepSchema = z
  .object({
    streams: z
      .array(z.number().int().min(1))
      .min(1)
      .max(MAX_SWEEP_VALUES, axisLimit)
      .optional()
      .describe('stream counts to measure'),
    chunks: z
      .array(z.number().int().min(1))
      .min(1)
      .max(MAX_SWEEP_VALUES, axisLimit)
      .optional()
      .describe('chunk counts to measure'),
    order: z.array(z.enum(ISSUE_ORDERS)).min(1).optional().describe('issue orders to measure'),
    set: z
      .record(
        z.string(),
        z
          .array(z.union([z.number(), z.string()]))
          .min(1)
          .max(MAX_SWEEP_VALUES, axisLimit),
      )
      .optional()
      .describe(
        'any scalar of the config by its path, and the values to measure it at: "kernels[0].args[3].int32": [530, 1060]',
      ),
    maxTime: z
      .number()
      .positive()
      .optional()
      .describe('seconds for the whole sweep of layouts, per setting (default 40)'),
  })
  .strict()
  .describe('what `cuda-pipe sweep` measures; `run` ignores it');

export const ConfigSchema = z
  .object({
    name: z.string().optional(),
    description: z.string().optional(),
    device: z.number().int().min(0).max(MAX_DEVICE_INDEX).default(0),
    devices: z
      .union([z.literal('all'), z.array(z.number().int().min(0).max(MAX_DEVICE_INDEX)).min(1)], {
        error: (issue) => `expected all or a list of device indexes such as [0, 1], got ${showValue(issue.input)}`,
      })
      .optional()
      .describe(
        'several GPUs in one run: the input split across them, each running the layout over its share; with pipeline.handoff, one pipeline across two',
      ),
    hostMemory: z.enum(HOST_MEMORY_KINDS).default('pinned').describe('host memory for every buffer without its own'),
    buffers: z
      .record(z.string().regex(/^[A-Za-z_][\w-]*$/, 'buffer names are letters, digits, _ and -'), BufferSchema)
      .refine((b) => Object.keys(b).length > 0, 'at least one buffer is needed'),
    kernels: z
      .array(ComputeStepSchema)
      .min(1, 'at least one kernel is needed')
      .describe(
        'the compute stage, in order, per chunk: each entry a kernel, or a library stage such as { gemm: {...} }',
      ),
    pipeline: PipelineSchema.default(() => PipelineSchema.parse({})),
    latency: LatencySchema.optional().describe(
      "a latency-critical stream: after each chunk's load, one small kernel; measured with and without priorities",
    ),
    // Each kind's own section (the host stage's `host:`), where its key has always been.
    ...CONFIG_SECTIONS,
    deviceMemory: quantity('bytes')
      .optional()
      .describe(
        'device memory budget for the buffers, e.g. 1GiB: chunks then cycle through a ring of device slots that fits it',
      ),
    verify: VerifySchema.optional(),
    repetitions: RepetitionsSchema.default(() => RepetitionsSchema.parse({})),
    sweep: SweepSchema.optional(),
  })
  .strict();

export type ConfigInput = z.input<typeof ConfigSchema>;
export type ParsedConfig = z.output<typeof ConfigSchema>;

export function configJsonSchema(): unknown {
  return {
    $id: 'https://cuda-pipe.dev/config.schema.json',
    title: 'cuda-pipe pipeline config',
    ...z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }),
  };
}
