import { configDir } from '../config/load.js';
import type { Config, ConfigKernel, Locator } from '../config/types.js';
import { UsageError } from '../errors.js';
import { findKernel, locateKernelSource, readKernelSource } from './catalog.js';
import { describeScalarRange, scalarHint, scalarProblem } from './scalars.js';
import { ptxParam } from './ptx.js';
import type { KernelParam } from './parameters.js';
import { formatSignature, type KernelSignature } from './signature.js';
import { SCALAR_BYTES, type ScalarType } from '../vocabulary.js';

/** A kernel argument with everything needed to encode it: chunk values carry the parameter's own integer type. */
export type KernelArg =
  | { readonly kind: 'buffer'; readonly buffer: string }
  | { readonly kind: 'chunk-elements'; readonly type: ScalarType }
  | { readonly kind: 'chunk-items'; readonly type: ScalarType }
  | { readonly kind: 'chunk-offset'; readonly type: ScalarType }
  | { readonly kind: 'scalar'; readonly type: ScalarType; readonly value: number | bigint };

export interface ResolvedKernel {
  readonly label: string;
  readonly entry: string;
  readonly sourcePath: string;
  readonly sourceText: string;
  readonly signature: KernelSignature;
  readonly options: readonly string[];
  readonly block: number;
  readonly grid: ConfigKernel['grid'];
  readonly args: readonly KernelArg[];
}

const CHUNK_VALUE = {
  'chunk-elements': 'element count',
  'chunk-items': 'item count',
  'chunk-offset': 'offset',
} as const;

const INTEGER_LIMIT: Partial<Record<ScalarType, number>> = {
  int8: 2 ** 7 - 1,
  uint8: 2 ** 8 - 1,
  int16: 2 ** 15 - 1,
  uint16: 2 ** 16 - 1,
  int32: 2 ** 31 - 1,
  uint32: 2 ** 32 - 1,
  int64: Number.MAX_SAFE_INTEGER,
  uint64: Number.MAX_SAFE_INTEGER,
};

/** Finds each kernel's source and checks the config's arguments against its signature, before anything runs. */
export function resolveKernels(config: Config, locate: Locator): ResolvedKernel[] {
  return config.kernels.map((kernel, index) => {
    const where = locate(['kernels', index]);
    const sourcePath = locateKernelSource(kernel.source, configDir(config), where);
    const source = readKernelSource(sourcePath, kernel.options);
    const signature = findKernel(source, kernel.entry, where);
    const args = checkArguments(
      config,
      kernel,
      signature,
      (argIndex) => locate(['kernels', index, 'args', argIndex]),
      where,
    );
    return {
      label: kernel.label,
      entry: kernel.entry,
      sourcePath,
      sourceText: source.text,
      signature,
      options: kernel.options,
      block: kernel.block,
      grid: kernel.grid,
      args,
    };
  });
}

function checkArguments(
  config: Config,
  kernel: ConfigKernel,
  signature: KernelSignature,
  argWhere: (index: number) => string,
  where: string,
): KernelArg[] {
  const named = `kernel "${kernel.label}" (${formatSignature(signature)})`;
  if (kernel.args.length !== signature.params.length) {
    throw new UsageError(
      `${where}: ${named} takes ${signature.params.length} arguments, the config gives ${kernel.args.length}.`,
    );
  }
  return kernel.args.map((arg, index): KernelArg => {
    const param = signature.params[index];
    if (!param) throw new UsageError(`${argWhere(index)}: ${named} has no argument ${index + 1}.`);
    const which = `${argWhere(index)}: ${named}, argument ${index + 1} (${param.text})`;
    if (arg.kind === 'buffer') {
      if (param.kind !== 'pointer')
        throw new UsageError(`${which} is a scalar, but the config passes buffer "${arg.buffer}".`);
      if (param.depth !== 1) {
        throw new UsageError(
          `${which} is a pointer to pointers, but a buffer is passed as a pointer to its elements.`,
          {
            hint: 'Declare the parameter with one * (float *x, or float x[]) to take a buffer.',
          },
        );
      }
      const buffer = config.buffers.find((b) => b.name === arg.buffer);
      if (buffer && param.pointee !== 'any' && param.pointee !== null && param.pointee !== buffer.type) {
        throw new UsageError(`${which} points to ${param.pointee}, but buffer "${buffer.name}" holds ${buffer.type}.`);
      }
      return arg;
    }
    if (param.kind !== 'scalar') {
      const given = arg.kind === 'scalar' ? `a ${arg.type} scalar` : `the chunk's ${CHUNK_VALUE[arg.kind]}`;
      throw new UsageError(`${which} is a pointer, but the config passes ${given}.`, {
        hint: 'Pass a buffer: { buffer: NAME }.',
      });
    }
    if (param.type === null)
      throw new UsageError(
        `${which} has a type cuda-pipe cannot pass (only plain integer and floating-point scalars).`,
      );
    if (arg.kind === 'scalar') {
      if (arg.type !== param.type)
        throw new UsageError(`${which} is ${param.type}, but the config gives a ${arg.type}.`, {
          hint: scalarHint(param.type, arg.value),
        });
      const problem = scalarProblem(param.type, arg.value);
      if (problem) {
        throw new UsageError(`${which} is ${param.type}, which takes ${describeScalarRange(param.type)}; ${problem}.`, {
          hint: scalarHint(param.type, arg.value),
        });
      }
      return arg;
    }
    const limit = INTEGER_LIMIT[param.type];
    if (limit === undefined)
      throw new UsageError(
        `${which} is ${param.type}; the chunk's ${CHUNK_VALUE[arg.kind]} needs an integer parameter.`,
      );
    const largest =
      arg.kind === 'chunk-items'
        ? config.elements
        : Math.max(...config.buffers.filter((b) => b.role !== 'resident').map((b) => b.elements));
    if (largest > limit)
      throw new UsageError(
        `${which} is ${param.type}, too small for up to ${largest} ${arg.kind === 'chunk-items' ? 'items' : 'elements'}.`,
        {
          hint: 'Declare the parameter as unsigned long long (or size_t).',
        },
      );
    return { kind: arg.kind, type: param.type };
  });
}

/** What a parameter must be in the PTX: its size, and whether it is a float; null for a type cuda-pipe never passes. */
function expectedPtx(param: KernelParam): { bytes: number; float: boolean } | null {
  if (param.kind === 'pointer') return { bytes: 8, float: false };
  if (param.type === null) return null;
  return { bytes: SCALAR_BYTES[param.type], float: param.type === 'float32' || param.type === 'float64' };
}

/**
 * The compiler's word against the source's: the kernel NVRTC emitted must exist and take parameters of the sizes and
 * kinds its signature was read as (PTX cannot tell float* from float**: that comes from the source alone). A macro,
 * a typedef or a header the reader did not follow cannot then pass the wrong bytes to a kernel.
 */
export function checkCompiledKernel(
  kernel: ResolvedKernel,
  entries: Readonly<Record<string, readonly string[]>>,
): void {
  const named = `kernel "${kernel.label}" (${formatSignature(kernel.signature)}) in ${kernel.sourcePath}`;
  const hint =
    'The parameters were read from the source without expanding macros or headers: declare them with plain C types (float *, unsigned long long, ...) to use the kernel.';
  const ptx = entries[kernel.entry];
  if (!ptx) {
    throw new UsageError(
      `${named}: NVRTC compiled no kernel "${kernel.entry}" from it with options [${kernel.options.join(' ')}]` +
        `${Object.keys(entries).length ? `; it compiled ${Object.keys(entries).join(', ')}` : ''}.`,
      { hint },
    );
  }
  if (ptx.length !== kernel.signature.params.length) {
    throw new UsageError(
      `${named}: the source reads as ${kernel.signature.params.length} parameters, but NVRTC compiled ${ptx.length} (${ptx.join(', ')}).`,
      { hint },
    );
  }
  kernel.signature.params.forEach((param, index) => {
    const expected = expectedPtx(param);
    const compiled = ptxParam(ptx[index] as string);
    if (
      !expected ||
      (expected.bytes === compiled.bytes && (expected.float === compiled.float || compiled.type.startsWith('b')))
    )
      return;
    throw new UsageError(
      `${named}: parameter ${index + 1} (${param.text}) reads as ${expected.bytes} bytes${expected.float ? ' of float' : ''}, ` +
        `but NVRTC compiled it as .${compiled.type} (${Number.isNaN(compiled.bytes) ? 'unknown size' : `${compiled.bytes} bytes`}).`,
      { hint },
    );
  });
}
