import koffi from 'koffi';
import { EnvironmentError } from '../errors.js';
import { type CudaLibraryKind, describeFailedSearch, type LibraryCandidate, libraryCandidates, type LoadAttempt, searchHint } from './locate.js';

export type NativeLibrary = ReturnType<typeof koffi.load>;

export interface LoadedLibrary {
  readonly lib: NativeLibrary;
  readonly path: string;
}

export function loadCudaLibrary(kind: CudaLibraryKind, env: NodeJS.ProcessEnv = process.env): LoadedLibrary {
  return loadFirst(kind, libraryCandidates(kind, env));
}

/** Loads the first candidate that dlopen accepts; otherwise an environment error listing every place tried. */
export function loadFirst(kind: CudaLibraryKind, candidates: readonly LibraryCandidate[]): LoadedLibrary {
  const attempts: LoadAttempt[] = [];
  for (const candidate of candidates) {
    try {
      return { lib: koffi.load(candidate.path), path: candidate.path };
    } catch (error) {
      attempts.push({ candidate, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  throw new EnvironmentError(describeFailedSearch(kind, attempts), { hint: searchHint(kind) });
}
