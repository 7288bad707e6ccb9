import { z } from 'zod';
import { SCALAR_TYPES } from '../vocabulary.js';
import { showValue } from './quantity.js';

// A `kernels:` entry that is a kernel (not a library stage's): its source, entry, launch shape and arguments, and
// for an argument of no known form, the words for the form the user evidently meant.

const is64BitInteger = (type: string): boolean => type === 'int64' || type === 'uint64';

// 64-bit integers may be written as strings so that values above 2^53 survive YAML. Whether a value is whole and
// within its type's range is checked against the kernel's parameter (src/kernels/scalars.ts), which knows the type
// that matters and can say so with the kernel's signature.
const scalarArg = <T extends (typeof SCALAR_TYPES)[number]>(type: T) => {
  const value = is64BitInteger(type)
    ? z.union([
        z.number(),
        z.string().regex(/^-?\d+$/, 'a 64-bit integer written as a string is digits only, such as "-12"'),
      ])
    : z.number();
  return z.object({ [type]: value } as Record<T, typeof value>).strict();
};

const ARG_FORMS =
  'expected { buffer: NAME }, { chunk: elements }, { chunk: items } or { chunk: offset }, or a typed scalar such as { float32: 1.5 } or { int32: 64 }';

/** Every branch of the argument union failed: say what is wrong with the form the user evidently meant. */
function describeBadArg(input: unknown): string {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return `${ARG_FORMS}; got ${showValue(input)}`;
  const entries = Object.entries(input);
  const [key, value] = entries[0] ?? [];
  if (entries.length !== 1 || key === undefined)
    return `${ARG_FORMS}; an argument has exactly one key, got ${showValue(input)}`;
  if (key === 'buffer') return `buffer needs a buffer name, got ${showValue(value)}`;
  if (key === 'chunk') return `chunk is elements, items or offset, got ${showValue(value)}`;
  if ((SCALAR_TYPES as readonly string[]).includes(key)) {
    if (typeof value === 'number') return `${key} needs a finite number, got ${showValue(value)}`;
    return is64BitInteger(key)
      ? `${key} needs a whole number, or a string of digits for values beyond 2^53 (such as "-12"), got ${showValue(value)}`
      : `${key} needs a number, got ${showValue(value)}`;
  }
  return `${ARG_FORMS}; got ${showValue(input)}`;
}

const ArgSchema = z.union(
  [
    z
      .object({
        buffer: z
          .string()
          .describe(
            "a buffer name: passes the device pointer to the chunk's first element of that buffer (a resident buffer's base)",
          ),
      })
      .strict(),
    z
      .object({
        chunk: z
          .enum(['elements', 'items', 'offset'])
          .describe(
            "elements: the chunk's element count, and offset: its first element's index, both in the first chunked buffer the kernel's args name (items × that buffer's itemSize); items: the chunk's item count",
          ),
      })
      .strict(),
    ...SCALAR_TYPES.map(scalarArg),
  ],
  { error: (issue) => describeBadArg(issue.input) },
);

export const KernelSchema = z
  .object({
    name: z.string().optional().describe('label used in output (default: entry)'),
    source: z.string().describe(".cu file: relative to the config's folder, else to the built-in kernels/"),
    entry: z.string().describe('the extern "C" __global__ function to launch'),
    options: z.array(z.string()).default([]).describe('extra NVRTC options, e.g. --use_fast_math'),
    block: z.number().int().min(1).max(1024).default(256),
    grid: z
      .union(
        [
          z.literal('auto'),
          z.literal('cover'),
          z.number().int().min(1, 'grid is auto, cover or a whole number of blocks (1 or more)'),
        ],
        {
          error: (issue) =>
            `expected auto, cover or a whole number of blocks (1 or more), got ${showValue(issue.input)}`,
        },
      )
      .default('auto')
      .describe(
        'auto: enough blocks to fill the GPU, for grid-stride kernels; cover: one thread per element; or a number',
      ),
    args: z.array(ArgSchema),
  })
  .strict();

export type ParsedArg = z.output<typeof ArgSchema>;
export type ParsedKernel = z.output<typeof KernelSchema>;
