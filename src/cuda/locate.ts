import { join } from 'node:path';

export type CudaLibraryKind = 'cudart' | 'nvrtc' | 'cublas';

export interface LibraryCandidate {
  /** A file path, or a bare soname left to the dynamic loader's own search. */
  readonly path: string;
  /** Why we look there, shown when nothing loads. */
  readonly origin: string;
}

/** Environment variables that name one library file exactly and win over every other place. */
export const LIBRARY_OVERRIDE: Record<CudaLibraryKind, string> = {
  cudart: 'CUDA_PIPE_CUDART',
  nvrtc: 'CUDA_PIPE_NVRTC',
  cublas: 'CUDA_PIPE_CUBLAS',
};

// Newest first: a CUDA 13 toolkit next to a CUDA 12 one should win. NVRTC kept the 11.2 soname for all of 11.x.
const SONAMES: Record<CudaLibraryKind, readonly string[]> = {
  cudart: ['libcudart.so.13', 'libcudart.so.12', 'libcudart.so'],
  nvrtc: ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2', 'libnvrtc.so'],
  cublas: ['libcublas.so.13', 'libcublas.so.12', 'libcublas.so'],
};

/** The library's file-name stem, as messages name it. */
export const LIBRARY_NAME: Record<CudaLibraryKind, string> = { cudart: 'libcudart', nvrtc: 'libnvrtc', cublas: 'libcublas' };

/** How messages name each library. */
const LIBRARY_TITLE: Record<CudaLibraryKind, string> = {
  cudart: 'the CUDA runtime (libcudart)',
  nvrtc: 'NVRTC (libnvrtc)',
  cublas: 'cuBLAS (libcublas)',
};

const PACKAGE_HINT: Record<CudaLibraryKind, string> = {
  cudart: 'the CUDA toolkit or runtime',
  nvrtc: "NVRTC (CUDA toolkit, or Debian's libnvrtc11.2)",
  cublas: 'cuBLAS (CUDA toolkit, or the libcublas package of the same CUDA major version as libcudart)',
};

const DEFAULT_DIRS = ['/usr/local/cuda/lib64', '/usr/local/cuda/lib'];

/** Every place to try for a library, in order: the explicit override, CUDA_PATH/CUDA_HOME, the loader, defaults. */
export function libraryCandidates(kind: CudaLibraryKind, env: NodeJS.ProcessEnv): LibraryCandidate[] {
  const candidates: LibraryCandidate[] = [];
  const override = env[LIBRARY_OVERRIDE[kind]];
  if (override) candidates.push({ path: override, origin: LIBRARY_OVERRIDE[kind] });
  for (const variable of ['CUDA_PATH', 'CUDA_HOME'] as const) {
    const root = env[variable];
    if (!root) continue;
    for (const sub of ['lib64', 'lib']) {
      for (const soname of SONAMES[kind]) {
        candidates.push({ path: join(root, sub, soname), origin: variable });
      }
    }
  }
  for (const soname of SONAMES[kind]) candidates.push({ path: soname, origin: 'dynamic loader search' });
  for (const dir of DEFAULT_DIRS) {
    for (const soname of SONAMES[kind]) candidates.push({ path: join(dir, soname), origin: 'default location' });
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
export function describeFailedSearch(kind: CudaLibraryKind, attempts: readonly LoadAttempt[]): string {
  const lines = attempts.map((a) => `  ${a.candidate.path} (${a.candidate.origin}): ${shortReason(a.reason)}`);
  return `Could not load ${LIBRARY_TITLE[kind]}. Tried:\n${lines.join('\n')}`;
}

export function searchHint(kind: CudaLibraryKind): string {
  return `Install ${PACKAGE_HINT[kind]}, then set CUDA_PATH to the toolkit root, or ${LIBRARY_OVERRIDE[kind]} to the library file itself.`;
}

function shortReason(reason: string): string {
  // dlopen's messages repeat the path; keep the part after the last colon, which says what went wrong.
  const parts = reason.split(': ');
  return (parts.length > 1 ? parts[parts.length - 1] : reason) ?? reason;
}

const SYSTEM_LIBRARY_DIRS = ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib'];

/**
 * The file the loader would most likely open for `kind`, found without loading it: loading NVRTC costs 3 to 40 ms,
 * which a kernel-cache hit must not pay. Bare sonames are looked up the way ld.so does for an unprivileged program:
 * LD_LIBRARY_PATH, the folders in /etc/ld.so.conf.d, then the system folders. Null when nothing is found.
 */
export function resolveLibraryFile(kind: CudaLibraryKind, env: NodeJS.ProcessEnv, exists: (path: string) => boolean, loaderDirs: readonly string[]): string | null {
  const dirs = [...(env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean), ...loaderDirs, ...SYSTEM_LIBRARY_DIRS];
  const findInDirs = (soname: string): string | null => dirs.map((dir) => join(dir, soname)).find(exists) ?? null;
  // The override is the only library that will be loaded when it is set, working or not (src/cuda/load.ts), so it
  // is the identity even when it is missing: a cache hit must not hide a variable that points nowhere.
  const override = env[LIBRARY_OVERRIDE[kind]];
  if (override) return override.includes('/') ? override : (findInDirs(override) ?? override);
  for (const candidate of libraryCandidates(kind, env)) {
    const found = candidate.path.includes('/') ? (exists(candidate.path) ? candidate.path : null) : findInDirs(candidate.path);
    if (found) return found;
  }
  return null;
}
