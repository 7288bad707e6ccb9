import { NCCL_DATA_TYPE, NCCL_IN_PROGRESS, type Nccl, openNccl } from './nccl.js';
import { UsageError } from '../../errors.js';
import {
  type IssueSite,
  type KindRuntime,
  type KindRuntimeModule,
  type OpenContext,
  PENDING,
  type SchedulePart,
} from '../api/index.js';
import type { PlanOp } from '../../model/schedule.js';
import { ncclAgreement } from './agreement.js';
import { type Communicators, openCommunicators } from './communicators.js';
import { type Meet, meetingPart, ncclMeet } from './align.js';
import { type CollectiveOp, isCollectiveOp } from './spec.js';

/** What the Result's notes say of the meeting before each rep under a launcher. */
const MEETING_NOTE =
  "Each rank's reps with collectives start after a one-element all-reduce on their first stream, behind the gate: the ranks' start events are recorded together, not each when its own host finished issuing.";

// A collective on the device: libnccl, loaded once per process; the run's communicators (one per device of this
// process, or this rank's of a launch), made when the run opens and destroyed with its clean-up; under a launcher
// the ranks' agreement; and each op's call, in place on its bucket.

const API = { allreduce: 'ncclAllReduce', reducescatter: 'ncclReduceScatter', allgather: 'ncclAllGather' } as const;

export class CollectiveRuntime implements KindRuntime<CollectiveOp> {
  readonly watch: Communicators['watch'];
  readonly agreement;
  readonly record;

  constructor(
    private readonly communicators: Communicators,
    context: Pick<OpenContext<CollectiveOp>, 'rt' | 'cleanup' | 'devices' | 'signal'>,
  ) {
    this.watch = communicators.watch;
    // Under a launcher every decision that changes which collectives run is agreed with the other ranks.
    this.agreement = communicators.launched
      ? ncclAgreement(context.rt, communicators, context.devices[0] ?? 0, context.cleanup, { signal: context.signal })
      : undefined;
    const own = communicators.byDevice.get(context.devices[0] ?? 0);
    this.meet =
      communicators.launched && own ? ncclMeet(context.rt, communicators.nccl, own.comm, context.cleanup) : null;
    const notes = this.meet ? [...communicators.notes, MEETING_NOTE] : communicators.notes;
    this.record = { sections: { communicator: communicators.record }, notes };
  }

  /** Under a launcher, how the ranks meet before each rep of a schedule with collectives (./align.ts). */
  private readonly meet: Meet | null;

  prepareSchedule(_schedule: unknown, ops: readonly PlanOp[]): SchedulePart | null {
    return this.meet && ops.some(isCollectiveOp) ? meetingPart(this.meet) : null;
  }

  issue(op: CollectiveOp, site: IssueSite) {
    const { device } = site;
    const own = this.communicators.byDevice.get(device);
    if (!own)
      throw new Error(
        `${site.schedule} has collective ${op.label} on device ${device}, which has no NCCL communicator`,
      );
    const { elementBytes, type } = site.buffer(op.spec.buffer);
    const dataType = NCCL_DATA_TYPE[type];
    if (dataType === undefined) throw new Error(`collective ${op.label}: NCCL has no data type for ${type}`);
    const elements = op.count * op.spec.itemSize;
    if (elements % own.ranks !== 0) {
      throw new UsageError(
        `collective ${op.label}: a ${op.spec.collective} splits each chunk's ${elements} elements over ${own.ranks} ranks, which does not divide them.`,
        {
          hint: `Give buffer "${op.spec.buffer}" an itemSize, or the pipeline chunks, that make every chunk a multiple of ${own.ranks} elements.`,
        },
      );
    }
    const { nccl } = this.communicators;
    const call = nccl.issue({
      collective: op.spec.collective,
      buffer: site.address(op.spec.buffer, op.deviceFirst * op.spec.itemSize),
      elements,
      elementBytes,
      dataType,
      comm: own.comm,
      rank: own.rank,
      ranks: own.ranks,
      stream: site.stream,
    });
    const api = API[op.spec.collective];
    const context = `collective ${op.label}, device ${device}, rank ${own.rank} of ${own.ranks}, ${elements} ${type} elements`;
    return { issue: grouped(nccl, call, api, context, op.group ?? null), hostTag: null };
  }
}

/**
 * The op's thunk. NCCL answers with an ncclResult_t: a failure is thrown, naming the op, as a cuBLAS one is. A grouped
 * call is deferred by NCCL until the group closes, which enqueues every device's call of the bucket at once. A
 * nonblocking communicator may answer ncclInProgress (NCCL finishes the enqueue on its own thread): the thunk then
 * returns PENDING and the runner waits, without blocking the JS thread, before it issues the next op.
 */
function grouped(
  nccl: Nccl,
  call: () => number,
  api: string,
  context: string,
  group: CollectiveOp['group'] | null,
): () => number {
  const opens = group?.opens ?? false;
  const closes = group?.closes ?? false;
  const settled = (status: number, name: string) => {
    if (status === NCCL_IN_PROGRESS) return PENDING;
    if (status !== 0) throw nccl.failure(status, name, context);
    return 0;
  };
  return () => {
    if (opens) nccl.check(nccl.groupStart(), 'ncclGroupStart', context);
    const status = call();
    if (status !== 0 && status !== NCCL_IN_PROGRESS) {
      // A failed call inside a group still ends it, so that NCCL frees the group's state before cleanup destroys the
      // communicators.
      if (group) nccl.groupEnd();
      throw nccl.failure(status, api, context);
    }
    if (closes) return settled(nccl.groupEnd(), 'ncclGroupEnd');
    return group ? 0 : settled(status, api);
  };
}

/** libnccl only where a collective runs: a missing one is named when the run opens, before anything is allocated. */
export const runtime: KindRuntimeModule<CollectiveOp> = {
  load: () => void openNccl(),
  open: async (context) => new CollectiveRuntime(await openCommunicators(openNccl(), context), context),
};
