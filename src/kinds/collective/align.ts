import { NCCL_IN_PROGRESS, type Nccl, type NcclComm } from './nccl.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import type { StreamHandle } from '../../cuda/types.js';
import { type BoundThunks, type OpenContext, PENDING, type SchedulePart, type Thunk } from '../api/index.js';

// Under a launcher each rank times its reps with its own events, and its rep begins when its own host has issued it
// (the gate opens at the end of issue): ranks a few hundred microseconds apart then time the first collective's wait
// for the late rank as their own. On two H200s a rank a GPU timed 32 all-reduces of 16 MiB at a median of 2.904 ms
// a rep against a fastest of 2.447 ms, where one process driving both timed 2.479 ms
// (docs/measurements/2026-11-28-h200x2-allreduce/). So the ranks meet on the GPU before the start event: a
// one-element all-reduce on the start's stream, behind the gate, which ends on every rank at once, and the start
// event after it. The meeting is outside the timed region.

/** A call that makes every rank's stream meet: a one-element all-reduce on `stream`; 0, PENDING, or it throws. */
export type Meet = (stream: StreamHandle) => Thunk;

/**
 * The thunks with the op just before the start event (the gate, on the start's stream) followed by a meeting of the
 * ranks there. A schedule whose start is its first op, or follows an op of another stream, has nowhere to put it
 * before the start without another op, and is left as it is.
 */
export function meetBeforeStart(
  bound: Pick<BoundThunks, 'thunks' | 'opStreams' | 'startIndex'>,
  meet: Meet,
): readonly Thunk[] {
  const { thunks, opStreams, startIndex } = bound;
  const before = startIndex - 1;
  const stream = opStreams[startIndex];
  const previous = thunks[before];
  if (before < 0 || stream === undefined || opStreams[before] !== stream || !previous) return thunks;
  const call = meet(stream);
  const out = [...thunks];
  out[before] = () => previous() || call();
  return out;
}

/** The rank's meeting call over its communicator: a one-element max of an int32 in a buffer of its own. */
export function ncclMeet(rt: CudaRuntime, nccl: Nccl, comm: NcclComm, cleanup: OpenContext['cleanup']): Meet {
  const buffer = rt.memory.malloc(4, 'the ranks\u2019 meeting before each rep');
  cleanup.push(() => rt.memory.free(buffer));
  return (stream) => () => {
    const status = nccl.maxInt32(buffer, 1, comm, stream);
    if (status === NCCL_IN_PROGRESS) return PENDING;
    if (status !== 0) throw nccl.failure(status, 'ncclAllReduce', 'the ranks meeting before a rep');
    return 0;
  };
}

/** The collective kind's part in a schedule with collectives, under a launcher: the ranks meet before its start. */
export function meetingPart(meet: Meet): SchedulePart {
  return { hostSource: () => null, bound: (schedule) => ({ thunks: meetBeforeStart(schedule, meet), rep: null }) };
}
