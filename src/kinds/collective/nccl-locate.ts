import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type BoundLibrary, LibraryOverrideError, openFirst } from '../../cuda/ffi.js';
import { EnvironmentError } from '../../errors.js';

// Where libnccl.so.2 is looked for, in its own order: the override alone, else the loader, the CUDA folders, the
// system folders and PyTorch's wheel (nccl.ts binds what this finds).

export const NCCL_OVERRIDE = 'CUDA_PIPE_NCCL';
const SONAME = 'libnccl.so.2';

export interface NcclCandidate {
  /** A file path, or the bare soname left to the dynamic loader. */
  readonly path: string;
  readonly origin: string;
}

/** What the search reads of the file system, so that tests can give it one. */
export interface SearchFs {
  exists(path: string): boolean;
  /** Entries of a folder; empty when it cannot be read. */
  list(dir: string): readonly string[];
}

const realFs: SearchFs = {
  exists: existsSync,
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
};

const SYSTEM_DIRS = ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/usr/lib'];

/** Roots under which Python keeps its packages: a virtualenv or conda first, then the user's and the system's. */
function pythonRoots(env: NodeJS.ProcessEnv): string[] {
  const roots: string[] = [];
  for (const variable of ['VIRTUAL_ENV', 'CONDA_PREFIX'] as const)
    if (env[variable]) roots.push(join(env[variable] as string, 'lib'));
  if (env.HOME) roots.push(join(env.HOME, '.local', 'lib'));
  roots.push('/usr/local/lib', '/usr/lib', '/opt/conda/lib');
  return roots;
}

/** PyTorch's NCCL (the nvidia-nccl wheel): …/python3.X/{site,dist}-packages/nvidia/nccl/lib/libnccl.so.2. */
function pytorchCandidates(env: NodeJS.ProcessEnv, fs: SearchFs): NcclCandidate[] {
  const found: NcclCandidate[] = [];
  for (const root of pythonRoots(env)) {
    for (const python of fs
      .list(root)
      .filter((name) => /^python3(\.\d+)?$/.test(name))
      .sort()
      .reverse()) {
      for (const packages of ['site-packages', 'dist-packages']) {
        const path = join(root, python, packages, 'nvidia', 'nccl', 'lib', SONAME);
        if (fs.exists(path)) found.push({ path, origin: "PyTorch's install" });
      }
    }
  }
  return found;
}

/**
 * Every place to try, in order: CUDA_PIPE_NCCL alone when set; else the dynamic loader (soname), CUDA_PATH and
 * CUDA_HOME, /usr/local/cuda, the system library folders, and PyTorch's install.
 */
export function ncclCandidates(env: NodeJS.ProcessEnv, fs: SearchFs = realFs): NcclCandidate[] {
  const override = env[NCCL_OVERRIDE];
  if (override) return [{ path: override, origin: NCCL_OVERRIDE }];
  const candidates: NcclCandidate[] = [{ path: SONAME, origin: 'dynamic loader search' }];
  for (const variable of ['CUDA_PATH', 'CUDA_HOME'] as const) {
    const root = env[variable];
    if (root) candidates.push({ path: join(root, 'lib64', SONAME), origin: variable });
  }
  candidates.push({ path: join('/usr/local/cuda/lib64', SONAME), origin: 'default location' });
  for (const dir of SYSTEM_DIRS) candidates.push({ path: join(dir, SONAME), origin: 'system library folder' });
  candidates.push(...pytorchCandidates(env, fs));
  const seen = new Set<string>();
  return candidates.filter((c) => {
    if (seen.has(c.path)) return false;
    seen.add(c.path);
    return true;
  });
}

/** The paragraph of a failed search: every place tried, and why each did not do. */
export function describeNcclSearch(attempts: readonly { candidate: NcclCandidate; reason: string }[]): string {
  const lines = attempts.map(
    (a) => `  ${a.candidate.path} (${a.candidate.origin}): ${a.reason.split(': ').pop() ?? a.reason}`,
  );
  return `Could not load NCCL (libnccl.so.2), which a collective stage needs. Tried:\n${lines.join('\n')}`;
}

const SEARCH_HINT =
  "Install NCCL (the libnccl2 package, or PyTorch's nvidia-nccl wheel), or set CUDA_PIPE_NCCL to the libnccl.so.2 file itself. " +
  'Only configs with a collective stage need it.';

/** Loads the first candidate that is NCCL (exports ncclCommInitAll); a missing one is an EnvironmentError (exit 3). */
export function loadNcclLibrary(env: NodeJS.ProcessEnv = process.env, fs: SearchFs = realFs): BoundLibrary {
  const { library, attempts } = openFirst(ncclCandidates(env, fs), (exported) =>
    exported('ncclCommInitAll') && exported('ncclCommInitRank')
      ? null
      : 'loads, but has no ncclCommInitAll (not libnccl)',
  );
  if (library) return library;
  if (env[NCCL_OVERRIDE]) {
    throw new LibraryOverrideError(
      `${NCCL_OVERRIDE}=${env[NCCL_OVERRIDE]}: ${attempts[0]?.reason ?? 'does not load'}.`,
      {
        hint: `Point ${NCCL_OVERRIDE} at the libnccl.so.2 file itself, or unset it to search the loader's path, the CUDA folders and PyTorch's install.`,
      },
    );
  }
  throw new EnvironmentError(describeNcclSearch(attempts), { hint: SEARCH_HINT });
}
