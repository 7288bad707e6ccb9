import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { MAX_KERNEL_SOURCE_BYTES } from '../files/limits.js';
import { readRegularFile } from '../files/read.js';
import { builtinKernelsDir } from '../paths.js';
import { type KernelSignature, parseKernelSignatures } from './signature.js';

export interface KernelSource {
  readonly path: string;
  readonly text: string;
  readonly signatures: readonly KernelSignature[];
}

export function readKernelSource(path: string): KernelSource {
  const text = readRegularFile(path, { what: 'kernel source', maxBytes: MAX_KERNEL_SOURCE_BYTES });
  return { path, text, signatures: parseKernelSignatures(text) };
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
  const builtins = readdirSync(builtinKernelsDir()).filter((n) => n.endsWith('.cu')).join(', ');
  throw new UsageError(`${where}: kernel source "${source}" not found; looked at ${tried.join(' and ')}.`, {
    hint: `Built-in kernel sources: ${builtins}.`,
  });
}

export function findKernel(source: KernelSource, entry: string, where: string): KernelSignature {
  const signature = source.signatures.find((s) => s.name === entry);
  if (signature) return signature;
  const names = source.signatures.map((s) => s.name);
  throw new UsageError(`${where}: no kernel "${entry}" in ${source.path}.`, {
    hint: names.length
      ? `Kernels found there: ${names.join(', ')}.`
      : 'No `extern "C" __global__` function was found in that file; cuda-pipe only sees kernels declared extern "C".',
  });
}
