import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../../errors.js';
import type { ConfigHost, HostFn } from '../../model/buffers.js';
import { HOST_FUNCTIONS, HOST_THREADS } from '../../vocabulary.js';
import type { ConfigSection, SectionContext } from '../api/index.js';

// The host stage's section of the config (`host:`): its schema, which config/schema.ts composes in where the key has
// always been, and its rules, which the config's loader calls with the section's value (the contract's `section`).

const HostFnSchema = z.union([
  z.literal('checksum').describe("the sum of the chunk's output bytes as 32-bit words"),
  z
    .object({ cost: z.object({ msPerMiB: z.number().positive() }).strict() })
    .strict()
    .describe('a fixed CPU cost per MiB of the chunk (a model of post-processing)'),
  z
    .object({
      module: z.string().min(1).describe('an ES module, relative to the config file'),
      export: z.string().min(1).default('default').describe('the exported function, called with the chunk'),
    })
    .strict()
    .describe("a user's function, loaded in every worker"),
]);

const HostStageSchema = z
  .object({
    thread: z
      .enum(HOST_THREADS)
      .optional()
      .describe(
        'workers (default): a pool of worker threads fed by events; js: cudaLaunchHostFunc on the JS thread, the stream waiting',
      ),
    workers: z
      .number()
      .int()
      .min(1)
      .max(256)
      .optional()
      .describe('worker threads (default: the cores less two, at most 8)'),
    after: HostFnSchema.optional().describe("what the workers run over each chunk's output bytes after its D2H"),
    before: z
      .union([
        HostFnSchema,
        z
          .object({ decode: z.object({ msPerMiB: z.number().min(0) }).strict() })
          .strict()
          .describe("writes each input buffer's seeded pattern into the chunk, after a CPU cost per MiB"),
      ])
      .optional()
      .describe(
        "a loader: what the workers run over each chunk's input bytes in pinned memory before its H2D is issued",
      ),
    slots: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('with before: chunks filled ahead of the GPU (default 2 × workers, at most the chunks)'),
    function: z
      .enum(HOST_FUNCTIONS)
      .optional()
      .describe(
        "the old form, and the function of thread: js. checksum: sums the chunk's output bytes on the host; empty: returns at once (the bare callback cost)",
      ),
    name: z
      .string()
      .regex(/^[A-Za-z_][\w-]*$/)
      .optional()
      .describe('label in output (default: the function)'),
  })
  .strict();

type ParsedHost = z.output<typeof HostStageSchema>;

/**
 * The host stage. `function:` alone is the old form: `function: checksum` now runs on the workers (`after:
 * checksum`), `function: empty` (the bare callback cost) stays on the JS thread; both say so in a note.
 */
function readHost(host: ParsedHost | undefined, context: SectionContext): ConfigHost | null {
  if (!host) return null;
  const { buffers, path } = context;
  const where = (field: string) => context.locate([field]);
  const thread = host.thread ?? (host.function === 'empty' && host.after === undefined ? 'js' : 'workers');
  if (thread === 'js') {
    const misplaced = (['after', 'before', 'workers', 'slots'] as const).find((field) => host[field] !== undefined);
    if (misplaced)
      throw new UsageError(
        `${where(misplaced)}: thread: js runs \`function\` on the JS thread; before, after, workers and slots belong to thread: workers.`,
      );
    if (!host.function)
      throw new UsageError(`${where('thread')}: thread: js needs function: checksum or function: empty.`);
    if (host.thread === undefined)
      context.note(
        `${where('function')}: function: empty runs on the JS thread through cudaLaunchHostFunc (the bare callback cost); say thread: js to silence this note.`,
      );
    return { name: host.name ?? host.function, thread: 'js', function: host.function };
  }
  if (host.function !== undefined && host.after !== undefined)
    throw new UsageError(`${where('function')}: give after (the workers' function) or the old function, not both.`);
  if (host.function === 'empty')
    throw new UsageError(
      `${where('function')}: function: empty is the bare callback of thread: js; the workers run after: checksum, cost or a module.`,
    );
  if (host.function === 'checksum')
    context.note(
      `${where('function')}: host: { function: checksum } is the old form; it now runs on worker threads as after: checksum.`,
    );
  const after = host.function === 'checksum' ? { kind: 'checksum' as const } : readHostFn(host.after, path);
  const before = readHostFn(host.before, path);
  if (!after && !before) {
    throw new UsageError(
      `${where('after')}: a host stage on workers needs before (a loader) or after: checksum, { cost: { msPerMiB } } or { module: ./file.mjs, export: name }.`,
    );
  }
  if (host.slots !== undefined && !before)
    throw new UsageError(`${where('slots')}: slots are the loader's: give before as well.`);
  // A loader fills the chunks of the buffers copied in; with none, it would fill nothing and time nothing.
  if (before && !buffers.some((b) => b.role === 'in' || b.role === 'inout')) {
    throw new UsageError(
      `${where('before')}: a loader (before) fills each chunk of the in and inout buffers before its H2D, and this config has none.`,
      {
        hint: 'Give a buffer role: in (or inout), or use after: for work on the chunks copied out.',
      },
    );
  }
  const named = (after ?? before) as HostFn;
  const name = host.name ?? (named.kind === 'module' ? named.export : named.kind);
  return {
    name,
    thread: 'workers',
    workers: host.workers ?? null,
    before: before ?? null,
    slots: host.slots ?? null,
    after: after ?? null,
  };
}

function readHostFn(fn: ParsedHost['before'], path: string | null): HostFn | undefined {
  if (fn === undefined) return undefined;
  if (fn === 'checksum') return { kind: 'checksum' };
  if ('cost' in fn) return { kind: 'cost', msPerMiB: fn.cost.msPerMiB };
  if ('decode' in fn) return { kind: 'decode', msPerMiB: fn.decode.msPerMiB };
  return { kind: 'module', path: resolve(path ? dirname(path) : process.cwd(), fn.module), export: fn.export };
}

/** The host stage's section of the config: `host:`, a CPU stage beside the GPU's. */
export const hostSection: ConfigSection<ParsedHost | undefined, ConfigHost | null> = {
  key: 'host',
  schema: HostStageSchema.optional().describe(
    "a CPU stage after each chunk's D2H, on worker threads (or on the JS thread with thread: js)",
  ),
  read: readHost,
};
