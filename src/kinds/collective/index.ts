import { z } from 'zod';
import { PrioritySchema } from '../../model/schedule.js';
import { formatBytes } from '../../format.js';
import { COLLECTIVES, type Collective } from '../../vocabulary.js';
import type { ComputeStep, RuntimePrimitives, StageKind, StepBuffer, StepConfig } from '../api/index.js';
import { collectiveAlone } from './alone.js';
import { collectiveCalls } from './calls.js';
import { withCommStreams } from './comm-stream.js';
import { dataParallel } from './data-parallel.js';
import { bucketTerm } from './model.js';
import { reductionCheck } from './reduction.js';
import { commSection } from './report.js';
import { resultSection } from './result.js';
import { type CollectiveOp, type CollectiveSpec, messageBytes } from './spec.js';
import { NCCL_DIR } from './unique-id.js';

// An NCCL collective as a compute step: per chunk (a bucket of items, such as a bucket of layers' gradients), one
// sum over every rank, in place in one chunked buffer, as DDP reduces a bucket. The planner puts it on the
// device's communication stream, after an event recorded behind the compute that produced the bucket, and makes the
// chunk's later ops (its D2H) wait for it (./comm-stream.ts): the compute stream never waits for the network.

/**
 * NCCL's MAXCHANNELS, which a communicator's minCTAs and maxCTAs cannot pass: 64 in the NCCL 2.28 of the H200 hosts,
 * which set up channels 00/64 to 63/64 (docs/measurements/2026-11-29-h200-ctas/run-ctas2.log).
 */
const MAX_CTAS = 64;

const CollectiveEntrySchema = z
  .object({
    name: z.string().optional().describe('label used in output (default: the collective)'),
    collective: z
      .object({
        op: z
          .enum(COLLECTIVES)
          .describe(
            'allreduce (sum), reducescatter (sum; rank r keeps part r) or allgather (rank r sends part r), in place',
          ),
        buffer: z
          .string()
          .describe("a chunked buffer on the device (such as gradients, role out): each chunk's items are one call"),
        priority: PrioritySchema.optional().describe(
          "the communication stream's priority: high or low (the device's highest or lowest), or a number in the device's range; " +
            "default: the device's default. A sweep races it with --set 'kernels[N].collective.priority=high,low'",
        ),
        ctas: z
          .number()
          .int()
          .min(1)
          .max(MAX_CTAS)
          .optional()
          .describe(
            "the CTAs (NCCL's channels) each collective runs on: the communicators' minCTAs and maxCTAs (NCCL 2.14 on); " +
              "fewer leave the compute kernels more SMs and the collective less bandwidth. Default: NCCL's own choice. " +
              "A sweep races it with --set 'kernels[N].collective.ctas=4,8,16,32'",
          ),
      })
      .strict()
      .describe('an NCCL collective per chunk over every rank, on the communication stream'),
  })
  .strict();

type CollectiveEntry = z.output<typeof CollectiveEntrySchema>;

const CHUNKED = new Set(['in', 'out', 'inout', 'scratch']);

function resolve(
  entry: CollectiveEntry,
  buffers: readonly StepBuffer[],
): { spec: CollectiveSpec } | { error: string; path: (string | number)[] } {
  const { op, buffer: name, priority, ctas } = entry.collective;
  const buffer = buffers.find((b) => b.name === name);
  const path = ['collective', 'buffer'];
  if (!buffer)
    return {
      error: `collective.buffer names no buffer "${name}" (buffers: ${buffers.map((b) => b.name).join(', ')})`,
      path,
    };
  if (!CHUNKED.has(buffer.role)) {
    return {
      error: `collective.buffer: "${name}" is ${buffer.role}, but a collective reduces each chunk's bucket: give it role out (or in, inout, scratch)`,
      path,
    };
  }
  const where = `kernels: ${entry.name ?? op} collective.priority`;
  return {
    spec: {
      collective: op,
      buffer: name,
      type: buffer.type,
      itemSize: buffer.itemSize,
      elementBytes: buffer.elementBytes,
      ...(priority === undefined ? {} : { priority: { level: priority, where } }),
      ...(ctas === undefined ? {} : { ctas }),
    },
  };
}

const collectiveConfig: StepConfig<CollectiveEntry> = {
  key: 'collective',
  schema: CollectiveEntrySchema,
  label: (entry) => entry.name ?? entry.collective.op,
  resolve,
};

/** The device call a collective issues through (exec/ keeps each device's communicator). */
const WORDS: Readonly<Record<Collective, string>> = {
  allreduce: 'all-reduce',
  reducescatter: 'reduce-scatter',
  allgather: 'all-gather',
};

const what = (op: CollectiveOp) =>
  `${WORDS[op.spec.collective]} ${op.label} of "${op.spec.buffer}" (NCCL, sum${op.spec.ctas === undefined ? '' : `, ${op.spec.ctas} CTAs`})`;

export const collective: StageKind<'collective', CollectiveOp, RuntimePrimitives, typeof resultSection> = {
  id: 'collective',
  opKind: 'collective',
  phase: 'compute',
  planStep: (step: ComputeStep, w) => [
    {
      kind: 'collective',
      stream: w.stream,
      label: step.label,
      chunk: w.chunk,
      first: w.range.first,
      count: w.range.count,
      deviceFirst: w.deviceFirst,
      spec: step.spec as CollectiveSpec,
    },
  ],
  config: collectiveConfig as StepConfig<unknown>,
  moves: (op) => ({ count: 'collective', bytes: messageBytes(op) }),
  owns: () => true,
  touchesDevice: true,
  // NCCL launches its own kernels (ncclDevKernel_*), each carrying the correlation id of the call.
  cupti: { kind: 'kernel', memsets: false },
  // Its term beside the GPU's in the overlap bound: the bucket model (./buckets.ts) at the layout's chunks as buckets,
  // from the collective alone measured beside it (./model.ts).
  term: bucketTerm,
  // A sum over more than two ranks depends on NCCL's order of additions, which may differ per message size: the
  // reduced buffer takes verify.tolerance where the config gives one.
  verify: 'tolerance',
  writes: (op) => [op.spec.buffer],
  names: (op) => [op.label],
  look: {
    letter: 'N',
    colour: '#e63946',
    name: 'collective (NCCL)',
    prefix: 'NCCL',
    always: false,
    rate: true,
    noun: { one: 'NCCL collective', many: 'NCCL collectives', always: false },
    terminal: { background: 'bgRed', foreground: 'whiteBright' },
    // Its kernels share the SMs, but what a picture must show is when communication ran: a row of its own.
    engine: { row: 3500, name: 'communication', hostCopy: false, exclusive: false },
  },
  what,
  describe: (op, c) =>
    `${what(op)}, ${c.chunk(op.chunk)} (items ${op.first} to ${op.first + op.count - 1}, ${formatBytes(messageBytes(op))} per rank)`,
  timeline: (op) => ({
    buffer: op.spec.buffer,
    kernel: op.label,
    bytes: messageBytes(op),
    collective: op.spec.collective,
  }),
  subject: (op) => op.kernel,
  communication: true,
  // CUPTI records the CUDA calls of every thread, NCCL's own threads among them, and hands its buffers out through
  // callbacks that koffi runs on the JS thread; with both, a traced rep of ddp.yaml never ended on two H100s
  // (CUDA_PIPE_CUPTI pointed nowhere, it ended: docs/measurements/2026-11-26-h100x2-cupti/).
  untraced:
    "a rep with NCCL collectives: CUPTI's buffer callbacks, which run on the JS thread, and NCCL's own threads did not end a traced rep together on two GPUs",
  result: resultSection,
  flags: [NCCL_DIR],
  environment: [['CUDA_PIPE_NCCL', 'the libnccl.so.2 file for collectives, exactly (nothing else is tried)']],
  runtime: async () => (await import('./runtime.js')).runtime,
  failureHint:
    'Every rank must run the same config with the same chunks; run with NCCL_DEBUG=WARN to see what NCCL saw.',
  passes: { body: withCommStreams, plan: dataParallel, alone: collectiveAlone },
  report: commSection,
  check: reductionCheck,
  modeFields: collectiveCalls,
};
