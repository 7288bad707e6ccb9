import type { CudaRuntime } from '../cuda/runtime.js';
import { type EventHandle, type HostPtr, offsetPointer, type StreamHandle } from '../cuda/types.js';
import { itemBytes } from '../config/items.js';
import type { IssuedOp } from '../kinds/index.js';
import { isWorkOp, type Op, type Plan, type Schedule } from '../plan/types.js';
import { isTraceEvent } from '../plan/trace.js';
import { checksum } from '../workers/functions.js';
import { defaultWorkers } from '../workers/pool.js';
import type { Region } from '../workers/types.js';
import type { Cleanup } from './cleanup.js';
import type { DeviceSet } from './device-set.js';
import type { Handover } from './handover.js';
import type { HostCalls } from './host-calls.js';
import { type Fill, LoaderRing, loaderSlots } from './loader.js';

// The host stage's side of binding a schedule (its `after` on the JS thread or on workers, its `before` loader):
// what a host op issues, where a loader's chunks are filled and their H2D copies read, and the events that hand
// chunks to the worker pool or free a loader's slot. The rep runner's side is host-stage-rep.ts.

export class HostStageIssue {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Pick<Plan, 'host' | 'buffers'>,
    private readonly devices: DeviceSet,
    private readonly hostCalls: HostCalls,
    private readonly cleanup: Cleanup,
  ) {}

  /** The schedule being bound, and where its host ops put their handovers. */
  private current: { readonly schedule: Schedule; readonly handovers: Array<Handover & { event: EventHandle }> } | null = null;

  /** Starts binding `schedule`: its handovers, in op order, are gathered until the next `begin`. */
  begin(schedule: Schedule): { readonly handovers: ReadonlyArray<Handover & { readonly event: EventHandle }> } {
    this.current = { schedule, handovers: [] };
    this.ring = null;
    return this.current;
  }

  /** The host op bound to its stream: a handover's event record (workers), or a host function (the JS thread). */
  call(op: { readonly chunk: number | null }, stream: StreamHandle, schedule: Schedule): IssuedOp {
    const host = this.plan.host;
    // A loader alone has nothing to run after the D2H: its host op issues nothing.
    if (host?.thread === 'workers') return { issue: host.after ? this.handoverCall(op, stream, schedule, this.handovers()) : () => 0, hostTag: null };
    const { tag, issue } = this.hostCalls.thunk(stream, this.hostAction(op, schedule));
    return { issue, hostTag: tag };
  }

  /** Where an H2D copy reads from while a loader's schedule is bound: the chunk's slot in the ring; null: the buffer's own host memory. */
  h2dSource(op: { readonly buffer: string; readonly hostOffset: number; readonly bytes: number }): HostPtr | null {
    const { ring } = this;
    const fill = ring ? ring.ring.fillAt(op.buffer, op.hostOffset, op.bytes) : null;
    return fill === null || !ring ? null : ring.address(fill, op.buffer, op.hostOffset);
  }

  /** The thunks are built: later copies read the buffers' own memory. */
  end(): void {
    this.ring = null;
  }

  private handovers(): Array<Handover & { event: EventHandle }> {
    if (!this.current) throw new Error('a host op was bound outside a schedule');
    return this.current.handovers;
  }

  /**
   * The fills of a schedule with the host stage and a `before`: one per chunk, waited for at the chunk's first op,
   * each writing its slot of the loader's ring (pinned, `slots` chunks of each input buffer, allocated here) where
   * the chunk's H2D then reads it. Null without a loader.
   */
  fills(schedule: Schedule, ops: readonly Op[]) {
    this.ring = null;
    const host = this.plan.host;
    if (host?.thread !== 'workers' || !host.before || !ops.some((op) => op.kind === 'host')) return null;
    const chunks: Array<{ chunk: number | null; regions: Region[] }> = [];
    const fillOf = new Map<number | null, number>();
    const waitAt = new Map<number, number>();
    const lastH2d = new Map<number, number>();
    ops.forEach((op, i) => {
      if (!isWorkOp(op)) return;
      let fill = fillOf.get(op.chunk);
      if (fill === undefined) {
        fill = chunks.push({ chunk: op.chunk, regions: this.chunkRegions(op, schedule, 'inputs') }) - 1;
        fillOf.set(op.chunk, fill);
        // In a traced rep the op's begin event comes first: issued before the fill finished, it would place the
        // chunk's H2D at the start of the rep on the timeline, ahead of its own fill.
        const before = ops[i - 1];
        waitAt.set(before?.kind === 'record' && before.stream === op.stream && isTraceEvent(before.event) ? i - 1 : i, fill);
      }
      if (op.kind === 'copy' && op.direction === 'h2d') lastH2d.set(fill, i);
    });
    const ring = new LoaderRing(
      loaderSlots(host.slots, host.workers ?? defaultWorkers(), chunks.length),
      chunks.map((c) => c.regions),
    );
    const bases = new Map<string, HostPtr>();
    for (const buffer of ring.slotBytes.keys()) bases.set(buffer, this.loaderMemory(buffer, Math.max(1, ring.bytes(buffer))));
    const address = (fill: number, buffer: string, place: number) => offsetPointer(bases.get(buffer) as HostPtr, ring.offset(fill, buffer, place));
    const fills: Fill[] = chunks.map(({ chunk, regions }, fill) => ({
      chunk,
      task: { fn: 'before', chunk, regions: regions.map((r) => ({ ...r, address: BigInt(address(fill, r.buffer, r.offset)) })) },
    }));
    this.ring = { ring, address };
    return { fills, waitAt, lastH2d, slots: ring.slots };
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

  /** The H2D source of a loader's copies while its schedule's thunks are built: the chunk's slot in the ring. */
  private ring: { readonly ring: LoaderRing; readonly address: (fill: number, buffer: string, place: number) => HostPtr } | null = null;

  /**
   * A loader's thunks: after the chunk's last H2D the same thunk records an event, whose completion frees the
   * chunk's slot for the fill `slots` later.
   */
  loader(ops: readonly Op[], thunks: ReadonlyArray<() => number>, loader: NonNullable<ReturnType<HostStageIssue['fills']>>, streamOf: (op: Op) => StreamHandle) {
    const { fills, waitAt, lastH2d, slots } = loader;
    const recordedAt = new Map<number, number>();
    const releasedBy = fills.map((_, fill): EventHandle | null => {
      const at = lastH2d.get(fill);
      if (at === undefined) return null;
      const event = this.rt.streams.createEvent({ timing: false });
      this.cleanup.push(() => this.rt.streams.destroyEvent(event));
      recordedAt.set(at, fill);
      return event;
    });
    const wrapped = thunks.map((issue, i) => {
      const fill = recordedAt.get(i);
      const event = fill === undefined ? null : releasedBy[fill];
      if (!event) return issue;
      const record = this.rt.streams.recordThunk(event, streamOf(ops[i] as Op));
      return () => issue() || record();
    });
    return { thunks: wrapped, loader: { fills, waitAt, recordedAt, releasedBy, slots } };
  }

  /** What a host op runs on the JS thread (thread: js): the host stage's function over the chunk's output bytes, which its D2H just wrote. */
  private hostAction(op: { readonly chunk: number | null }, schedule: Schedule): () => void {
    const host = this.plan.host;
    const fn = host?.thread === 'js' ? host.function : 'empty';
    if (fn === 'empty') return () => {};
    const buffers = this.devices.buffers();
    const windows = this.chunkRegions(op, schedule, 'outputs').flatMap((r) => buffers.hostWindows(r.buffer, r.offset, r.bytes));
    return () => {
      this.checksums.set(`${schedule.id}:${op.chunk ?? 'whole'}`, checksum(windows));
    };
  }

  /**
   * The chunk's bytes on the host of every output buffer (what its D2H wrote, and what `after` reads) or every input
   * buffer (what `before` fills and its H2D reads).
   */
  private chunkRegions(op: { readonly chunk: number | null }, schedule: Schedule, which: 'inputs' | 'outputs'): Region[] {
    const range = op.chunk === null ? schedule.ranges[0] : schedule.ranges[op.chunk];
    if (!range) throw new Error(`schedule ${schedule.id} has an op for chunk ${op.chunk}, which it does not have`);
    const buffers = this.devices.buffers();
    const chosen = which === 'outputs' ? buffers.outputs() : this.plan.buffers.filter((b) => b.role === 'in' || b.role === 'inout');
    return chosen.map((b) => {
      const offset = range.first * itemBytes(b);
      return { buffer: b.name, offset, bytes: range.count * itemBytes(b), address: BigInt(offsetPointer(buffers.binding(b.name).host, offset)) };
    });
  }

  /**
   * A host op on workers: the stream only records an event (no timing, so the record costs the stream nothing), and
   * the rep runner hands the chunk to the pool once it completed. No CPU work ever sits on a stream.
   */
  private handoverCall(op: { readonly chunk: number | null }, stream: StreamHandle, schedule: Schedule, handovers: Array<Handover & { event: EventHandle }>): () => number {
    const event = this.rt.streams.createEvent({ timing: false });
    this.cleanup.push(() => this.rt.streams.destroyEvent(event));
    handovers.push({ event, chunk: op.chunk, task: { fn: 'after', chunk: op.chunk, regions: this.chunkRegions(op, schedule, 'outputs') } });
    return this.rt.streams.recordThunk(event, stream);
  }

  /** The last checksum each host op computed, by schedule and chunk. */
  readonly checksums = new Map<string, number>();
}
