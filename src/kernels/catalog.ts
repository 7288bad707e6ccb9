import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { MAX_KERNEL_SOURCE_BYTES } from '../files/limits.js';
import { readRegularFile } from '../files/read.js';
import { builtinKernelsDir } from '../paths.js';
import { type ExcludedKernel, type KernelSignature, scanKernels } from './signature.js';

export interface KernelSource {
  readonly path: string;
  readonly text: string;
  readonly signatures: readonly KernelSignature[];
  /** Kernels declared only in #if branches these options rule out. */
  readonly excluded: readonly ExcludedKernel[];
}

/** A kernel source and its kernels as NVRTC sees them with `options` (its -D and -U decide #if branches). */
export function readKernelSource(path: string, options: readonly string[] = []): KernelSource {
  const text = readRegularFile(path, { what: 'kernel source', maxBytes: MAX_KERNEL_SOURCE_BYTES });
  // NVRTC takes the source as a C string: it would compile the part before a NUL and never see the rest.
  const nul = text.indexOf('\0');
  if (nul >= 0) {
    throw new UsageError(
      `Cannot read kernel source ${path}: it holds a NUL byte at line ${text.slice(0, nul).split('\n').length}, so it is not CUDA source text.`,
      {
        hint: 'Pass the .cu file itself, not a binary or a file in a UTF-16 encoding.',
      },
    );
  }
  return { path, text, ...scanKernels(text, options) };
}

/** Every .cu file directly under a folder, sorted by name. */
export function listKernelSources(dir: string = builtinKernelsDir()): KernelSource[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cu'))
    .sort()
    .map((name) => readKernelSource(join(dir, name)));
}

/** A config's `source`: absolute as given, else the config file's folder first, then the built-in kernels/. */
export function locateKernelSource(source: string, configDir: string | null, where: string): string {
  if (isAbsolute(source)) {
    if (existsSync(source)) return source;
    throw new UsageError(`${where}: kernel source ${source} does not exist.`);
  }
  const tried = [...(configDir ? [resolve(configDir, source)] : []), join(builtinKernelsDir(), source)];
  const found = tried.find((path) => existsSync(path));
  if (found) return found;
  const builtins = readdirSync(builtinKernelsDir())
    .filter((n) => n.endsWith('.cu'))
    .join(', ');
  throw new UsageError(`${where}: kernel source "${source}" not found; looked at ${tried.join(' and ')}.`, {
    hint: `Built-in kernel sources: ${builtins}.`,
  });
}

export function findKernel(source: KernelSource, entry: string, where: string): KernelSignature {
  const signature = source.signatures.find((s) => s.name === entry);
  if (signature?.ambiguity) {
    throw new UsageError(`${where}: kernel "${entry}" in ${source.path} cannot be checked: ${signature.ambiguity}.`, {
      hint: "Declare the kernel once, or make the condition depend only on macros the config's options define (-DNAME).",
    });
  }
  if (signature) return signature;
  const names = source.signatures.map((s) => s.name);
  const hidden = source.excluded.find((k) => k.name === entry);
  throw new UsageError(
    `${where}: no kernel "${entry}" in ${source.path}` +
      (hidden
        ? ` as the compiler sees it: it is declared at line ${hidden.line} under ${hidden.conditions.join(', ')}, which these options rule out.`
        : '.'),
    {
      hint: hidden
        ? "Define the macro in the kernel's options (options: [-DNAME]), or change the condition."
        : names.length
          ? `Kernels found there: ${names.join(', ')}.`
          : 'No `extern "C" __global__` function was found in that file; cuda-pipe only sees kernels declared extern "C".',
    },
  );
}
