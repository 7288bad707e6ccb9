import { readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import koffi from 'koffi';
import { EnvironmentError } from '../errors.js';
import { describeFileError } from '../files/errno.js';
import { notRegularFile } from '../files/read.js';
import {
  CUDA_LIBRARIES,
  type CudaLibrary,
  type CudaLibraryKind,
  type CudaLibrarySpec,
  describeFailedSearch,
  type LibraryCandidate,
  libraryCandidates,
  librarySpec,
  searchHint,
} from './locate.js';
import { describeMissing, missingSymbols } from './symbols.js';

export type NativeLibrary = ReturnType<typeof koffi.load>;

export interface LoadedLibrary {
  readonly lib: NativeLibrary;
  readonly path: string;
}

/** The file each library was loaded from, by name, for messages that must say which runtime said "no driver". */
const loadedPaths = new Map<string, string>();

/** The file a library kind was loaded from: the mapped file itself when the loader was given a bare soname. */
export function loadedLibraryPath(kind: CudaLibraryKind): string | null {
  const { name } = CUDA_LIBRARIES[kind];
  const path = loadedPaths.get(name);
  if (path === undefined) return null;
  return path.includes('/') ? path : (mappedFile(name) ?? path);
}

/** The first file mapped into this process whose name starts with `prefix.so`, from /proc/self/maps (Linux). */
function mappedFile(prefix: string): string | null {
  try {
    for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
      const file = line.slice(line.indexOf('/'));
      if (line.includes('/') && basename(file).startsWith(`${prefix}.so`)) return file;
    }
  } catch {
    // Not Linux, or /proc is not mounted: the soname is all we can say.
  }
  return null;
}

/** A variable such as CUDA_PIPE_CUDART names a file that is not the library it should be. */
export class LibraryOverrideError extends EnvironmentError {}

/**
 * The library named by its override variable when that is set (and nothing else: a variable set by hand that
 * does not work is an error, not a hint), else the first candidate that loads and is the right library.
 */
export function loadCudaLibrary(library: CudaLibrary, env: NodeJS.ProcessEnv = process.env): LoadedLibrary {
  const spec = librarySpec(library);
  const override = env[spec.override];
  const loaded = override ? loadOverride(spec, override) : loadFirst(spec, libraryCandidates(spec, env));
  loadedPaths.set(spec.name, loaded.path);
  return loaded;
}

/** Loads the first candidate that dlopen accepts and that exports the library's marker function. */
export function loadFirst(library: CudaLibrary, candidates: readonly LibraryCandidate[]): LoadedLibrary {
  const spec = librarySpec(library);
  const { loaded, attempts } = firstLoadable(candidates, (lib) => {
    if (!exports(lib, spec.marker)) return `loads, but has no ${spec.marker} (not ${spec.name})`;
    // An older CUDA found first must not hide a newer one further down the list.
    const missing = missingSymbols(spec.requires, (name) => exports(lib, name));
    return missing.length ? `loads, but ${describeMissing(spec.name, spec.requires, missing)}` : null;
  });
  if (loaded) return loaded;
  throw new EnvironmentError(describeFailedSearch(spec, attempts), { hint: searchHint(spec) });
}

/**
 * The first candidate that dlopen accepts and in which `fault` finds nothing wrong, and why each one before it was
 * passed over (dlopen's message, or the fault). Every library cuda-pipe searches for is searched this way.
 */
export function firstLoadable<C extends { readonly path: string }>(
  candidates: readonly C[],
  fault: (lib: NativeLibrary) => string | null,
  env: NodeJS.ProcessEnv = process.env,
): { loaded: { lib: NativeLibrary; path: string } | null; attempts: { candidate: C; reason: string }[] } {
  const attempts: { candidate: C; reason: string }[] = [];
  for (const candidate of candidates) {
    // dlopen opens a FIFO and blocks until a writer comes, on the JS thread, where no signal handler can run.
    const unfit = unfitLibraryFile(candidate.path, env);
    if (unfit) {
      attempts.push({ candidate, reason: unfit });
      continue;
    }
    let lib: NativeLibrary;
    try {
      lib = koffi.load(candidate.path);
    } catch (error) {
      attempts.push({ candidate, reason: error instanceof Error ? error.message : String(error) });
      continue;
    }
    const reason = fault(lib);
    if (reason === null) return { loaded: { lib, path: candidate.path }, attempts };
    attempts.push({ candidate, reason });
  }
  return { loaded: null, attempts };
}

/**
 * Why a candidate must not reach dlopen: a path that is not a regular file, or a bare soname whose first match in
 * LD_LIBRARY_PATH (where the loader looks first for a program without RPATH) is not one. Null when dlopen may try.
 * A missing path is left to dlopen, whose message says the same.
 */
export function unfitLibraryFile(path: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (path.includes('/')) {
    const unfit = notRegularFile(path);
    return unfit === null || unfit === 'no such file' ? null : `${unfit}, so not a shared library`;
  }
  for (const dir of (env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean)) {
    const unfit = notRegularFile(join(dir, path));
    if (unfit === 'no such file' || unfit === 'a part of the path is not a folder') continue;
    return unfit === null ? null : `${join(dir, path)} (LD_LIBRARY_PATH) ${unfit}, so not a shared library`;
  }
  return null;
}

function loadOverride(spec: CudaLibrarySpec, path: string): LoadedLibrary {
  const { override: variable, name } = spec;
  const fail = (found: string): LibraryOverrideError =>
    new LibraryOverrideError(`${variable}=${path}: ${found}.`, {
      hint:
        `Point ${variable} at the ${name} file itself (for example /usr/local/cuda/lib64/${name}.so.13), ` +
        "or unset it to search CUDA_PATH, CUDA_HOME, the loader's path and /usr/local/cuda.",
    });
  // A bare name ("libcudart.so.12") is the loader's to find; a path can be checked before dlopen muddles the reason.
  if (path.includes('/')) {
    try {
      const stats = statSync(path);
      if (stats.isDirectory()) throw fail('is a folder, not a library file');
      if (!stats.isFile()) throw fail('is not a regular file, so not a shared library');
    } catch (error) {
      if (error instanceof LibraryOverrideError) throw error;
      throw fail(`${describeFileError(error)} there`);
    }
  } else {
    const unfit = unfitLibraryFile(path);
    if (unfit) throw fail(unfit);
  }
  let lib: NativeLibrary;
  try {
    lib = koffi.load(path);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(
      /^Failed to load shared library: /,
      '',
    );
    throw fail(`not a shared library that can be loaded (${reason})`);
  }
  if (!exports(lib, spec.marker)) throw fail(`a shared library without ${spec.marker}, so not ${name}`);
  const missing = missingSymbols(spec.requires, (symbol) => exports(lib, symbol));
  if (missing.length) throw fail(`a ${name} that ${describeMissing(name, spec.requires, missing)}`);
  return { lib, path };
}

/** Whether the library exports the symbol (koffi throws for one it lacks). */
export function exports(lib: NativeLibrary, symbol: string): boolean {
  try {
    lib.symbol(symbol);
    return true;
  } catch {
    return false;
  }
}

/** Whether the NVIDIA driver's library loads at all: the first thing to know when the runtime finds no driver. */
export function driverLibraryLoads(): boolean {
  try {
    koffi.load('libcuda.so.1');
    return true;
  } catch {
    return false;
  }
}
