import { hostView } from '../cuda/host-view.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import type { DevicePtr, HostPtr, StreamHandle } from '../cuda/types.js';
import { CUDA_ERROR } from '../cuda/error.js';
import { DeviceFailure, Interrupted } from '../errors.js';
import type { Agreement } from '../measure/runner.js';
import type { Cleanup } from './cleanup.js';
import type { Communicators } from './communicator.js';

// The ranks of a launch agree through their own communicator: each rank's votes (one int32 each) go to the device,
// NCCL takes the largest of every rank's (a vote cast anywhere is carried everywhere), and the answer comes back,
// on a stream of its own between reps. The all-reduce is also a barrier: every rank starts its next rep within
// microseconds of the others, so that a rep's collectives do not time a partner that is still in the previous rep.

/** The most votes one agreement carries: one per layout of a sweep, one per mode of a run. */
export const MAX_VOTES = 4096;

/** How long a rank waits for the others to vote, ms: they may be finishing a long rep of their own. */
const AGREE_TIMEOUT_MS = 60_000;

export interface AgreementOptions {
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number;
}

/** This rank's agreement with the other ranks of its launch, over the communicator of its one device. */
export function ncclAgreement(rt: CudaRuntime, communicators: Communicators, device: number, cleanup: Cleanup, options: AgreementOptions = {}): Agreement {
  const own = communicators.byDevice.get(device);
  if (!own) throw new Error(`no NCCL communicator on device ${device} to agree through`);
  const bytes = MAX_VOTES * 4;
  const host = rt.memory.hostAlloc(bytes, 'pinned');
  cleanup.push(() => rt.memory.freeHost(host));
  const votes = new Int32Array(hostView(host, bytes).buffer);
  const buffer = rt.memory.malloc(bytes, 'the ranks\u2019 votes');
  cleanup.push(() => rt.memory.free(buffer));
  const stream = rt.streams.create({ nonBlocking: true });
  cleanup.push(() => rt.streams.destroy(stream));
  const timeoutMs = options.timeoutMs ?? AGREE_TIMEOUT_MS;
  const { watch, nccl } = communicators;
  return {
    async any(mine, about) {
      if (mine.length > MAX_VOTES) throw new Error(`${mine.length} votes on ${about}, more than the ${MAX_VOTES} an agreement carries`);
      const n = mine.length;
      mine.forEach((vote, i) => {
        votes[i] = vote ? 1 : 0;
      });
      const context = `agreeing on ${about}, rank ${own.rank} of ${own.ranks}`;
      enqueue(rt, buffer, host, n * 4, stream, 'h2d', context);
      const status = nccl.maxInt32(buffer, n, own.comm, stream);
      if (status !== 0 && status !== 7) throw nccl.failure(status, 'ncclAllReduce', context);
      if (status === 7) await watch.settle(`Rank ${own.rank} of ${own.ranks} ${context}`, { timeoutMs, signal: options.signal });
      enqueue(rt, host, buffer, n * 4, stream, 'd2h', context);
      await awaitStream(rt, stream, communicators, { timeoutMs, signal: options.signal, what: `Rank ${own.rank} of ${own.ranks}, ${about}, waited for the other ranks' votes` });
      return Array.from(votes.subarray(0, n), (v) => v !== 0);
    },
  };
}

/** cudaMemcpyAsync from `src` to `dst`, checked. */
function enqueue(rt: CudaRuntime, dst: DevicePtr | HostPtr, src: DevicePtr | HostPtr, bytes: number, stream: StreamHandle, direction: 'h2d' | 'd2h', context: string): void {
  const code = rt.memory.copyThunk(dst, src, bytes, direction, stream)();
  if (code !== 0) throw rt.failure(code, 'cudaMemcpyAsync', context);
}

/**
 * Polls the stream, yielding, while watching NCCL for a rank that failed; at the deadline or on a signal the
 * communicators are aborted, which ends the all-reduce on the GPU, and the run leaves without CUDA's teardown.
 */
async function awaitStream(
  rt: CudaRuntime,
  stream: StreamHandle,
  communicators: Communicators,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined; readonly what: string },
): Promise<void> {
  const { watch } = communicators;
  const started = performance.now();
  for (let polls = 0; ; polls++) {
    const code = rt.streams.queryCode(stream);
    if (code === 0) return;
    if (code !== CUDA_ERROR.notReady) throw rt.failure(code, 'cudaStreamQuery', options.what);
    if (polls % 64 === 0) {
      const failure = watch.failure();
      if (failure) {
        watch.abortAll();
        throw new DeviceFailure(`${options.what}: ${failure.message}`, { hint: failure.hint, cause: failure, contextLost: true });
      }
    }
    if (options.signal?.aborted) {
      watch.abortAll();
      throw new Interrupted(`Interrupted (${String(options.signal.reason)}): ${options.what}; NCCL's communicators were aborted and nothing was written.`, { contextLost: true });
    }
    if (performance.now() - started > options.timeoutMs) {
      watch.abortAll();
      throw new DeviceFailure(`${options.what} for ${(options.timeoutMs / 1000).toFixed(1)} s, and they did not all come; the communicators were aborted.`, {
        hint: 'Every rank must run the same config with the same flags: look at the other ranks\u2019 output for one that failed or stopped.',
        contextLost: true,
      });
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
