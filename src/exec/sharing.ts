import type { SharingRecord } from '../result/environment.js';

/** What NVML listed on the GPU at one moment; null when it could not say. */
export type ProcessListing = { readonly pids: readonly number[]; readonly count: number } | null;

/**
 * Compute processes on the GPU other than this one. NVML lists this process too (it has a context by the time we
 * ask), by its PID, or, inside a PID namespace such as a container's, by a number this process cannot know: then
 * one of the unknown entries is taken to be this process.
 */
export function otherProcesses(
  listing: { readonly pids: readonly number[]; readonly count: number },
  ownPid: number,
): number {
  const unlisted = Math.max(0, listing.count - listing.pids.length);
  const others = listing.pids.filter((pid) => pid !== ownPid).length + unlisted;
  return Math.max(0, listing.pids.includes(ownPid) ? others : others - 1);
}

/** The Result's record of the listings taken during a run (before and after measuring): the most seen at once. */
export function sharingRecord(
  listings: readonly ProcessListing[],
  ownPid: number,
  unavailable: string | null,
): SharingRecord {
  if (unavailable !== null) return { checked: false, otherProcesses: null, note: `not checked: ${unavailable}` };
  if (!listings.length || listings.some((l) => l === null)) {
    return {
      checked: false,
      otherProcesses: null,
      note: 'not checked: NVML could not list the compute processes on the GPU',
    };
  }
  const most = Math.max(...listings.map((l) => otherProcesses(l as NonNullable<ProcessListing>, ownPid)));
  return {
    checked: true,
    otherProcesses: most,
    note: 'compute processes listed through NVML before and after measuring',
  };
}
