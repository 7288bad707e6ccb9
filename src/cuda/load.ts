import koffi from 'koffi';
import { EnvironmentError } from '../errors.js';
import { type CudaLibraryKind, type LoadAttempt, describeFailedSearch, libraryCandidates, searchHint } from './locate.js';

export type NativeLibrary = ReturnType<typeof koffi.load>;

export interface LoadedLibrary {
  readonly lib: NativeLibrary;
  readonly path: string;
}

/** Loads the first candidate that dlopen accepts; otherwise an environment error listing every place tried. */
export function loadCudaLibrary(kind: CudaLibraryKind, env: NodeJS.ProcessEnv = process.env): LoadedLibrary {
  const attempts: LoadAttempt[] = [];
  for (const candidate of libraryCandidates(kind, env)) {
    try {
      return { lib: koffi.load(candidate.path), path: candidate.path };
    } catch (error) {
      attempts.push({ candidate, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  throw new EnvironmentError(describeFailedSearch(kind, attempts), { hint: searchHint(kind) });
}
