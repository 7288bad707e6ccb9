import { join } from 'node:path';

import { REQUIRED_SYMBOLS, type RequiredSymbol } from './symbols.js';

/**
 * A CUDA library as cuda-pipe's own search finds it and checks it: the core's (libcudart, NVRTC), and those a kind
 * binds itself (the gemm kind's libcublas, the matmul kind's libcublasLt), which declare theirs beside their binding.
 */
export interface CudaLibrarySpec {
  /** The file-name stem, as messages name it: "libcudart". */
  readonly name: string;
  /** How a failed search names it: "the CUDA runtime (libcudart)". */
  readonly title: string;
  /** What installs it, for the hint of a failed search. */
  readonly install: string;
  /** The variable that names the file exactly and wins over every other place. */
  readonly override: string;
  /** Newest first: a CUDA 13 toolkit next to a CUDA 12 one should win. */
  readonly sonames: readonly string[];
  /** A function every build of it exports: a library without it is some other library. */
  readonly marker: string;
  /** Every function cuda-pipe binds from it, with the CUDA release that added each (symbols.ts). */
  readonly requires: readonly RequiredSymbol[];
}

export type CudaLibraryKind = keyof typeof REQUIRED_SYMBOLS;

/** The core's own CUDA libraries. NVRTC kept the 11.2 soname for all of 11.x. */
export const CUDA_LIBRARIES: Readonly<Record<CudaLibraryKind, CudaLibrarySpec>> = {
  cudart: {
    name: 'libcudart',
    title: 'the CUDA runtime (libcudart)',
    install: 'the CUDA toolkit or runtime',
    override: 'CUDA_PIPE_CUDART',
    sonames: ['libcudart.so.13', 'libcudart.so.12', 'libcudart.so'],
    marker: 'cudaGetDeviceCount',
    requires: REQUIRED_SYMBOLS.cudart,
  },
  nvrtc: {
    name: 'libnvrtc',
    title: 'NVRTC (libnvrtc)',
    install: "NVRTC (CUDA toolkit, or Debian's libnvrtc11.2)",
    override: 'CUDA_PIPE_NVRTC',
    sonames: ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2', 'libnvrtc.so'],
    marker: 'nvrtcVersion',
    requires: REQUIRED_SYMBOLS.nvrtc,
  },
};

/** One of the core's libraries by its kind, or a kind's library by its spec. */
export type CudaLibrary = CudaLibraryKind | CudaLibrarySpec;

export const librarySpec = (library: CudaLibrary): CudaLibrarySpec =>
  typeof library === 'string' ? CUDA_LIBRARIES[library] : library;

export interface LibraryCandidate {
  /** A file path, or a bare soname left to the dynamic loader's own search. */
  readonly path: string;
  /** Why we look there, shown when nothing loads. */
  readonly origin: string;
}

const DEFAULT_DIRS = ['/usr/local/cuda/lib64', '/usr/local/cuda/lib'];

/** Every place to try for a library, in order: the explicit override, CUDA_PATH/CUDA_HOME, the loader, defaults. */
export function libraryCandidates(library: CudaLibrary, env: NodeJS.ProcessEnv): LibraryCandidate[] {
  const spec = librarySpec(library);
  const candidates: LibraryCandidate[] = [];
  const override = env[spec.override];
  if (override) candidates.push({ path: override, origin: spec.override });
  for (const variable of ['CUDA_PATH', 'CUDA_HOME'] as const) {
    const root = env[variable];
    if (!root) continue;
    for (const sub of ['lib64', 'lib']) {
      for (const soname of spec.sonames) {
        candidates.push({ path: join(root, sub, soname), origin: variable });
      }
    }
  }
  for (const soname of spec.sonames) candidates.push({ path: soname, origin: 'dynamic loader search' });
  for (const dir of DEFAULT_DIRS) {
    for (const soname of spec.sonames) candidates.push({ path: join(dir, soname), origin: 'default location' });
  }
  return dedupe(candidates);
}

function dedupe(candidates: LibraryCandidate[]): LibraryCandidate[] {
  const seen = new Set<string>();
  return candidates.filter((c) => {
    if (seen.has(c.path)) return false;
    seen.add(c.path);
    return true;
  });
}

export interface LoadAttempt {
  readonly candidate: LibraryCandidate;
  readonly reason: string;
}

/** The paragraph shown when no candidate loaded: every place tried and the variables that steer the search. */
export function describeFailedSearch(library: CudaLibrary, attempts: readonly LoadAttempt[]): string {
  const lines = attempts.map((a) => `  ${a.candidate.path} (${a.candidate.origin}): ${shortReason(a.reason)}`);
  return `Could not load ${librarySpec(library).title}. Tried:\n${lines.join('\n')}`;
}

export function searchHint(library: CudaLibrary): string {
  const spec = librarySpec(library);
  return `Install ${spec.install}, then set CUDA_PATH to the toolkit root, or ${spec.override} to the library file itself.`;
}

function shortReason(reason: string): string {
  // dlopen's messages repeat the path; keep the part after the last colon, which says what went wrong.
  const parts = reason.split(': ');
  return (parts.length > 1 ? parts[parts.length - 1] : reason) ?? reason;
}

const SYSTEM_LIBRARY_DIRS = [
  '/lib/x86_64-linux-gnu',
  '/usr/lib/x86_64-linux-gnu',
  '/lib64',
  '/usr/lib64',
  '/lib',
  '/usr/lib',
];

/**
 * The file the loader would most likely open for `library`, found without loading it: loading NVRTC costs 3 to 40 ms,
 * which a kernel-cache hit must not pay. Bare sonames are looked up the way ld.so does for an unprivileged program:
 * LD_LIBRARY_PATH, the folders in /etc/ld.so.conf.d, then the system folders. Null when nothing is found.
 */
export function resolveLibraryFile(
  library: CudaLibrary,
  env: NodeJS.ProcessEnv,
  exists: (path: string) => boolean,
  loaderDirs: readonly string[],
): string | null {
  const dirs = [...(env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean), ...loaderDirs, ...SYSTEM_LIBRARY_DIRS];
  const findInDirs = (soname: string): string | null => dirs.map((dir) => join(dir, soname)).find(exists) ?? null;
  // The override is the only library that will be loaded when it is set, working or not (src/cuda/load.ts), so it
  // is the identity even when it is missing: a cache hit must not hide a variable that points nowhere.
  const override = env[librarySpec(library).override];
  if (override) return override.includes('/') ? override : (findInDirs(override) ?? override);
  for (const candidate of libraryCandidates(library, env)) {
    const found = candidate.path.includes('/')
      ? exists(candidate.path)
        ? candidate.path
        : null
      : findInDirs(candidate.path);
    if (found) return found;
  }
  return null;
}
