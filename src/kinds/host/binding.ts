import type { CudaRuntime } from '../../cuda/runtime.js';
import { type EventHandle, type HostPtr, offsetPointer, type StreamHandle } from '../../cuda/types.js';
import type { PlanOp, Plan, Schedule } from '../../model/schedule.js';
import type { BoundThunks, HostBuffers, SchedulePart } from '../api/index.js';
import type { IssuedOp, IssueSite, Thunk } from '../api/index.js';
import type { Handover } from './handover.js';
import { type Fill, LoaderRing, loaderSlots } from './loader.js';
import { HostRep, type LoaderSpec } from './rep.js';
import { checksum } from './workers/functions.js';
import { defaultWorkers } from './workers/options.js';
import type { WorkerPool } from './workers/pool.js';
import type { Region } from './workers/types.js';

// The host stage's side of binding a schedule (its `after` on the JS thread or on workers, its `before` loader):
// what a host op issues, where a loader's chunks are filled and their H2D copies read, and the events that hand
// chunks to the worker pool or free a loader's slot. Its side of each rep is rep.ts.

/** Where a chunk's bytes are: its schedule's id (for messages) and the chunks' item ranges. */
type Chunks = Pick<IssueSite, 'scheduleId' | 'ranges'>;

/** Bytes one item takes in a chunked buffer. */
const itemBytes = (b: { readonly itemSize: number; readonly elementBytes: number }) => b.itemSize * b.elementBytes;

export class HostBinding {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Pick<Plan, 'host' | 'buffers'>,
    private readonly buffers: HostBuffers,
    private readonly cleanup: { push(release: () => void): void },
    private readonly pool: WorkerPool | null,
  ) {}

  /** Where the host ops of the schedule being prepared put their handovers, in op order; null outside a prepare. */
  private handovers: Array<Handover & { event: EventHandle }> | null = null;

  /** The host op bound to its stream: a handover's event record (workers), or a host function (the JS thread). */
  call(op: { readonly chunk: number | null }, site: IssueSite): IssuedOp {
    const host = this.plan.host;
    // A loader alone has nothing to run after the D2H: its host op issues nothing.
    if (host?.thread === 'workers') return { issue: host.after ? this.handoverCall(op, site) : () => 0, hostTag: null };
    return site.hostCall(this.hostAction(op, site));
  }

  /**
   * A schedule the runner prepares, with the host stage on workers: its handovers are gathered as its ops are bound,
   * and with a loader, its fills planned and its ring allocated first, so that its H2D copies read the ring.
   */
  prepare(schedule: Schedule, ops: readonly PlanOp[]): SchedulePart | null {
    if (this.plan.host?.thread !== 'workers') return null;
    const handovers: Array<Handover & { event: EventHandle }> = [];
    this.handovers = handovers;
    const fills = this.fills(schedule, ops);
    return {
      hostSource: (copy) => {
        const fill = fills ? fills.ring.fillAt(copy.buffer, copy.hostOffset, copy.bytes) : null;
        return fill === null || !fills ? null : fills.address(fill, copy.buffer, copy.hostOffset);
      },
      bound: (bound) => {
        this.handovers = null;
        const loader = fills ? this.loader(bound, fills) : null;
        const thunks = loader?.thunks ?? bound.thunks;
        if (!this.pool || (!handovers.length && !loader)) return { thunks, rep: null };
        return {
          thunks,
          rep: new HostRep(this.rt, this.pool, {
            schedule: schedule.id,
            ops: bound.ops,
            handovers,
            loader: loader?.loader ?? null,
            start: bound.start,
            end: bound.end,
            startIndex: bound.startIndex,
          }),
        };
      },
    };
  }

  /**
   * The fills of a schedule with the host stage and a `before`: one per chunk, waited for at the chunk's first op,
   * each writing its slot of the loader's ring (pinned, `slots` chunks of each input buffer, allocated here) where
   * the chunk's H2D then reads it. Null without a loader.
   */
  private fills(schedule: Schedule, ops: readonly PlanOp[]) {
    const host = this.plan.host;
    if (host?.thread !== 'workers' || !host.before || !ops.some((op) => op.kind === 'host')) return null;
    const chunks: Array<{ chunk: number | null; regions: Region[] }> = [];
    const fillOf = new Map<number | null, number>();
    /** Each fill's chunk's first op. */
    const firstOp = new Map<number, number>();
    const lastH2d = new Map<number, number>();
    const where = { scheduleId: schedule.id, ranges: schedule.ranges };
    ops.forEach((op, i) => {
      // Work ops have a chunk (the model's WorkOpBase); ordering and timing ops have none.
      if (!('chunk' in op)) return;
      let fill = fillOf.get(op.chunk);
      if (fill === undefined) {
        fill = chunks.push({ chunk: op.chunk, regions: this.chunkRegions(op, where, 'inputs') }) - 1;
        fillOf.set(op.chunk, fill);
        firstOp.set(fill, i);
      }
      if (op.kind === 'copy' && 'direction' in op && op.direction === 'h2d') lastH2d.set(fill, i);
    });
    const ring = new LoaderRing(
      loaderSlots(host.slots, host.workers ?? defaultWorkers(), chunks.length),
      chunks.map((c) => c.regions),
    );
    const bases = new Map<string, HostPtr>();
    for (const buffer of ring.slotBytes.keys())
      bases.set(buffer, this.loaderMemory(buffer, Math.max(1, ring.bytes(buffer))));
    const address = (fill: number, buffer: string, place: number) =>
      offsetPointer(bases.get(buffer) as HostPtr, ring.offset(fill, buffer, place));
    const fills: Fill[] = chunks.map(({ chunk, regions }, fill) => ({
      chunk,
      task: {
        fn: 'before',
        chunk,
        regions: regions.map((r) => ({ ...r, address: BigInt(address(fill, r.buffer, r.offset)) })),
      },
    }));
    return { fills, firstOp, lastH2d, slots: ring.slots, ring, address };
  }

  /** Each input buffer's pinned memory for loader rings, the largest asked for so far. */
  private readonly loaderPinned = new Map<string, { readonly base: HostPtr; readonly bytes: number }>();

  /**
   * Pinned memory for a schedule's ring of one input buffer. Schedules share it: one runner's reps never overlap, and a
   * rep's fills start with the rep, so no two rings are in use at once. A ring larger than any before gets a new block
   * (the smaller ones stay with the schedules that were prepared on them until cleanup), so a sweep's many layouts do
   * not pin a ring each.
   */
  private loaderMemory(buffer: string, bytes: number): HostPtr {
    const held = this.loaderPinned.get(buffer);
    if (held && held.bytes >= bytes) return held.base;
    const base = this.rt.memory.hostAlloc(bytes, 'pinned');
    this.cleanup.push(() => this.rt.memory.freeHost(base));
    this.loaderPinned.set(buffer, { base, bytes });
    return base;
  }

  /**
   * A loader's thunks: after the chunk's last H2D the same thunk records an event, whose completion frees the
   * chunk's slot for the fill `slots` later.
   */
  private loader(
    bound: BoundThunks,
    planned: NonNullable<ReturnType<HostBinding['fills']>>,
  ): { thunks: Thunk[]; loader: LoaderSpec } {
    const { fills, firstOp, lastH2d, slots } = planned;
    // In a traced rep the op's begin event comes first: issued before the fill finished, it would place the chunk's
    // H2D at the start of the rep on the timeline, ahead of its own fill.
    const waitAt = new Map([...firstOp].map(([fill, i]) => [bound.issueBegins(i), fill]));
    const recordedAt = new Map<number, number>();
    const releasedBy = fills.map((_, fill): EventHandle | null => {
      const at = lastH2d.get(fill);
      if (at === undefined) return null;
      const event = this.rt.streams.createEvent({ timing: false });
      this.cleanup.push(() => this.rt.streams.destroyEvent(event));
      recordedAt.set(at, fill);
      return event;
    });
    const wrapped = bound.thunks.map((issue, i) => {
      const fill = recordedAt.get(i);
      const event = fill === undefined ? null : releasedBy[fill];
      if (!event) return issue;
      const record = this.rt.streams.recordThunk(event, bound.opStreams[i] as StreamHandle);
      return () => issue() || record();
    });
    return { thunks: wrapped, loader: { fills, waitAt, recordedAt, releasedBy, slots } };
  }

  /**
   * What a host op runs on the JS thread (thread: js): the host stage's function over the chunk's output bytes, which
   * its D2H just wrote.
   */
  private hostAction(op: { readonly chunk: number | null }, where: Chunks): () => void {
    const host = this.plan.host;
    const fn = host?.thread === 'js' ? host.function : 'empty';
    if (fn === 'empty') return () => {};
    const windows = this.chunkRegions(op, where, 'outputs').flatMap((r) =>
      this.buffers.windows(r.buffer, r.offset, r.bytes),
    );
    return () => {
      this.checksums.set(`${where.scheduleId}:${op.chunk ?? 'whole'}`, checksum(windows));
    };
  }

  /**
   * The chunk's bytes on the host of every output buffer (what its D2H wrote, and what `after` reads) or every input
   * buffer (what `before` fills and its H2D reads).
   */
  private chunkRegions(op: { readonly chunk: number | null }, where: Chunks, which: 'inputs' | 'outputs'): Region[] {
    const range = op.chunk === null ? where.ranges[0] : where.ranges[op.chunk];
    if (!range) throw new Error(`schedule ${where.scheduleId} has an op for chunk ${op.chunk}, which it does not have`);
    const chosen =
      which === 'outputs'
        ? this.buffers.outputs()
        : this.plan.buffers.filter((b) => b.role === 'in' || b.role === 'inout');
    return chosen.map((b) => {
      const offset = range.first * itemBytes(b);
      return {
        buffer: b.name,
        offset,
        bytes: range.count * itemBytes(b),
        address: BigInt(offsetPointer(this.buffers.host(b.name), offset)),
      };
    });
  }

  /**
   * A host op on workers: the stream only records an event (no timing, so the record costs the stream nothing), and
   * the rep hands the chunk to the pool once it completed. No CPU work ever sits on a stream.
   */
  private handoverCall(op: { readonly chunk: number | null }, site: IssueSite): Thunk {
    const { handovers } = this;
    if (!handovers) throw new Error('a host op was bound outside a schedule');
    const event = this.rt.streams.createEvent({ timing: false });
    this.cleanup.push(() => this.rt.streams.destroyEvent(event));
    handovers.push({
      event,
      chunk: op.chunk,
      task: { fn: 'after', chunk: op.chunk, regions: this.chunkRegions(op, site, 'outputs') },
    });
    return this.rt.streams.recordThunk(event, site.stream);
  }

  /** The last checksum each host op computed, by schedule and chunk. */
  readonly checksums = new Map<string, number>();
}
