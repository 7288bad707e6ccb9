import koffi from 'koffi';

/**
 * cudaEventQuery for a worker thread: the worker of a host stage waits for its chunk's event itself, so a chunk is
 * handed over without the JS thread polling and posting it. The library is the file the JS thread loaded (dlopen
 * hands back the same mapping), and an event handle crosses threads as a plain BigInt. cudaEventQuery answers for
 * an event of any device, whatever the calling thread's current device.
 */
const queries = new Map<string, (event: bigint) => number>();

export function workerEventQuery(libraryPath: string): (event: bigint) => number {
  let query = queries.get(libraryPath);
  if (!query) {
    const fn = koffi.load(libraryPath).func('int cudaEventQuery(void *event)');
    query = (event) => fn(event) as number;
    queries.set(libraryPath, query);
  }
  return query;
}
