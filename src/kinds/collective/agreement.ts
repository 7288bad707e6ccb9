import { CUDA_ERROR } from '../../cuda/error.js';
import { hostView } from '../../cuda/host-view.js';
import { NCCL_IN_PROGRESS } from './nccl.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import type { DevicePtr, HostPtr, StreamHandle } from '../../cuda/types.js';
import type { Agreement, OpenContext } from '../api/index.js';
import type { Communicators } from './communicators.js';

// The ranks of a launch agree through their own communicator: each rank's votes (one int32 each) go to the device,
// NCCL takes the largest of every rank's (a vote cast anywhere is carried everywhere), and the answer comes back,
// on a stream of its own between reps. The all-reduce is also a barrier: no rank starts its next rep while a partner
// is still in the previous one. The hosts leave it a little apart, so the reps' start events meet on the GPU as well
// (./align.ts).

/** The most votes one agreement carries: one per layout of a sweep, one per mode of a run. */
export const MAX_VOTES = 4096;

/** How long a rank waits for the others to vote, ms: they may be finishing a long rep of their own. */
const AGREE_TIMEOUT_MS = 60_000;

const AGREE_HINT =
  'Every rank must run the same config with the same flags: look at the other ranks\u2019 output for one that failed or stopped.';

export interface AgreementOptions {
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number;
}

/** This rank's agreement with the other ranks of its launch, over the communicator of its one device. */
export function ncclAgreement(
  rt: CudaRuntime,
  communicators: Communicators,
  device: number,
  cleanup: OpenContext['cleanup'],
  options: AgreementOptions = {},
): Agreement {
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
      if (mine.length > MAX_VOTES)
        throw new Error(`${mine.length} votes on ${about}, more than the ${MAX_VOTES} an agreement carries`);
      const n = mine.length;
      mine.forEach((vote, i) => {
        votes[i] = vote ? 1 : 0;
      });
      const context = `agreeing on ${about}, rank ${own.rank} of ${own.ranks}`;
      enqueue(rt, buffer, host, n * 4, stream, 'h2d', context);
      const status = nccl.maxInt32(buffer, n, own.comm, stream);
      if (status !== 0 && status !== NCCL_IN_PROGRESS) throw nccl.failure(status, 'ncclAllReduce', context);
      if (status === NCCL_IN_PROGRESS)
        await watch.settle(`Rank ${own.rank} of ${own.ranks} ${context}`, { timeoutMs, signal: options.signal });
      enqueue(rt, host, buffer, n * 4, stream, 'd2h', context);
      // The other ranks may still be in a long rep of their own: the wait is theirs, within the deadline.
      await watch.settle(
        `Rank ${own.rank} of ${own.ranks}, ${about}, waited for the other ranks' votes`,
        { timeoutMs, signal: options.signal, hint: AGREE_HINT },
        () => {
          const code = rt.streams.queryCode(stream);
          if (code !== 0 && code !== CUDA_ERROR.notReady) throw rt.failure(code, 'cudaStreamQuery', context);
          return code === 0;
        },
      );
      return Array.from(votes.subarray(0, n), (v) => v !== 0);
    },
  };
}

/** cudaMemcpyAsync from `src` to `dst`, checked. */
function enqueue(
  rt: CudaRuntime,
  dst: DevicePtr | HostPtr,
  src: DevicePtr | HostPtr,
  bytes: number,
  stream: StreamHandle,
  direction: 'h2d' | 'd2h',
  context: string,
): void {
  const code = rt.memory.copyThunk(dst, src, bytes, direction, stream)();
  if (code !== 0) throw rt.failure(code, 'cudaMemcpyAsync', context);
}
