import { type Interval, type IntervalSet, clip, intersect, measure, subtract, union } from './intervals.js';
import type { Direction, GpuEvent, HostCall } from '../traces/events.js';
import type { StepWindow } from './steps.js';

// What one step did on one device, from its GPU events clipped to the step's span. Every share is a time over a
// time; "compute" is every kernel that is not communication (NCCL), as Holistic Trace Analysis counts it.

export interface LinkRates {
  /** GB/s (1e9 bytes/s) of each direction; null where nothing gives one. */
  readonly h2d: number | null;
  readonly d2h: number | null;
}

export type FloorBound = 'kernels' | 'h2d' | 'd2h';

export interface StepMetrics {
  readonly name: string;
  readonly startMs: number;
  readonly ms: number;
  /** Time each engine was busy over the step's span. */
  readonly busy: {
    readonly kernels: number;
    readonly h2d: number;
    readonly d2h: number;
    readonly memsets: number;
    readonly communication: number;
  };
  /** Each a share of the first party's time; null where the first party did not run. */
  readonly overlap: {
    readonly h2dWithKernel: number | null;
    readonly d2hWithKernel: number | null;
    /** Of the shorter direction's copy time, the share during which the other direction copied. */
    readonly h2dWithD2h: number | null;
    readonly copyWithKernel: number | null;
    readonly commWithCompute: number | null;
  };
  readonly copyMs: number;
  readonly exposedCopyMs: number;
  readonly commMs: number;
  readonly exposedCommMs: number;
  /** Time within the step with nothing on the GPU. */
  readonly idleMs: number;
  /** The idle gaps that end with work whose launch returned after the gap began: the GPU waited on the host. */
  readonly hostWaitMs: number;
  /**
   * Gaps between two pieces of work, shorter than KERNEL_WAIT_MS, whose work was issued in time: the GPU's own cost of
   * starting the next op (HTA's kernel wait).
   */
  readonly kernelWaitMs: number;
  /** The rest of the idle time ("other"), the part of it whose gap began while the host sat in a synchronize. */
  readonly syncWaitMs: number;
  /**
   * The rest of the idle time, after host wait, kernel wait and sync wait: the GPU had its work and waited on something
   * else (an event, a peer).
   */
  readonly otherIdleMs: number;
  readonly floor: {
    readonly ms: number;
    readonly bound: FloorBound;
    readonly kernelMs: number;
    readonly h2dMs: number | null;
    readonly d2hMs: number | null;
    readonly opCostMs: number;
  };
  /** floor / step time. */
  readonly efficiency: number;
}

/** A device's events, sorted once by start, with what every step's lookup needs. */
export interface DeviceTimeline {
  readonly events: readonly GpuEvent[];
  readonly longestMs: number;
  readonly host: readonly HostCall[];
  /**
   * The least gap between two consecutive ops of one stream where the second was issued before the first ended
   * and nothing else ran on the device meanwhile: the GPU's own cost per op, as the trace shows it. Gaps the host
   * caused (the op issued late) are left out, else a launch-bound program would give itself a high floor; so are
   * gaps other streams' work filled (4 streams taking turns leave each stream waiting on the others, which is no
   * cost of its own: a CUDA graph of 1,024 kernels on 4 streams got a per-op cost of 12.6 µs that way, and a floor
   * of 19.6 ms on a rep of 6.67). 0 where no such pair is seen.
   */
  readonly perOpMs: number;
  /** The host's synchronize calls by start, and the latest end among the first i + 1 of them (threads may overlap). */
  readonly syncs: readonly HostCall[];
  readonly syncReach: readonly number[];
}

export function deviceTimeline(events: readonly GpuEvent[], host: readonly HostCall[]): DeviceTimeline {
  const sorted = [...events].sort((a, b) => a.start - b.start || a.end - b.end);
  const lastEnd = new Map<string, number>();
  let perOpMs = Number.POSITIVE_INFINITY;
  let longestMs = 0;
  let deviceEnd = Number.NEGATIVE_INFINITY;
  for (const e of sorted) {
    longestMs = Math.max(longestMs, e.end - e.start);
    const previous = lastEnd.get(e.stream);
    if (
      previous !== undefined &&
      e.start >= previous &&
      deviceEnd <= previous &&
      e.issued !== null &&
      e.issued <= previous
    )
      perOpMs = Math.min(perOpMs, e.start - previous);
    lastEnd.set(e.stream, Math.max(previous ?? e.end, e.end));
    deviceEnd = Math.max(deviceEnd, e.end);
  }
  const calls = [...host].sort((a, b) => a.start - b.start);
  const syncs = calls.filter((c) => c.kind === 'sync');
  const syncReach: number[] = [];
  for (const sync of syncs) syncReach.push(Math.max(syncReach.at(-1) ?? Number.NEGATIVE_INFINITY, sync.end));
  return { events: sorted, longestMs, host: calls, perOpMs: Number.isFinite(perOpMs) ? perOpMs : 0, syncs, syncReach };
}

/** The events that meet [start, end): a binary search bounds them by start, the longest event by end. */
export function eventsWithin(timeline: DeviceTimeline, start: number, end: number): GpuEvent[] {
  const { events } = timeline;
  const out: GpuEvent[] = [];
  for (
    let i = firstStartingAt(events, start - timeline.longestMs);
    i < events.length && events[i]!.start < end;
    i += 1
  ) {
    const e = events[i]!;
    if (e.end > start || (e.end === e.start && e.start >= start)) out.push(e);
  }
  return out;
}

function firstStartingAt(events: readonly { readonly start: number }[], time: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.start < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function stepMetrics(timeline: DeviceTimeline, window: StepWindow, rates: LinkRates): StepMetrics {
  const { start, end } = window;
  const ms = end - start;
  const inside = eventsWithin(timeline, start, end);
  // One pass sorts the events into their parties; the wider sets are unions of the narrower ones' few pieces.
  const parts = {
    compute: [] as Interval[],
    comm: [] as Interval[],
    h2d: [] as Interval[],
    d2h: [] as Interval[],
    otherCopies: [] as Interval[],
    memsets: [] as Interval[],
  };
  for (const e of inside) {
    const piece = { start: e.start, end: e.end };
    if (e.kind === 'kernel') (e.communication ? parts.comm : parts.compute).push(piece);
    else if (e.kind === 'memset') parts.memsets.push(piece);
    else if (e.direction === 'h2d') parts.h2d.push(piece);
    else if (e.direction === 'd2h') parts.d2h.push(piece);
    else parts.otherCopies.push(piece);
  }
  const set = (pieces: readonly Interval[]): IntervalSet => clip(union(pieces), start, end);
  const compute = set(parts.compute);
  const comm = set(parts.comm);
  const h2d = set(parts.h2d);
  const d2h = set(parts.d2h);
  const memsets = set(parts.memsets);
  const kernels = union([...compute, ...comm]);
  const copies = union([...h2d, ...d2h, ...set(parts.otherCopies)]);
  const all = union([...kernels, ...copies, ...memsets]);
  const idle = subtract([{ start, end }], all);
  const share = (part: IntervalSet, whole: IntervalSet): number | null =>
    measure(whole) > 0 ? measure(intersect(part, whole)) / measure(whole) : null;
  const shorter = measure(h2d) <= measure(d2h) ? h2d : d2h;
  const copyMs = measure(copies);
  const commMs = measure(comm);
  const exposedCopyMs = measure(subtract(copies, compute));
  const exposedCommMs = measure(subtract(comm, compute));
  const { hostWaitMs, kernelWaitMs, syncWaitMs, otherIdleMs } = idleByCause(timeline, idle, start, end);
  const floor = floorOf(inside, start, end, rates, timeline.perOpMs);
  return {
    name: window.name,
    startMs: start,
    ms,
    busy: {
      kernels: fraction(measure(kernels), ms),
      h2d: fraction(measure(h2d), ms),
      d2h: fraction(measure(d2h), ms),
      memsets: fraction(measure(memsets), ms),
      communication: fraction(commMs, ms),
    },
    overlap: {
      h2dWithKernel: share(compute, h2d),
      d2hWithKernel: share(compute, d2h),
      h2dWithD2h: measure(h2d) > 0 && measure(d2h) > 0 ? measure(intersect(h2d, d2h)) / measure(shorter) : null,
      copyWithKernel: share(compute, copies),
      commWithCompute: share(compute, comm),
    },
    copyMs,
    exposedCopyMs,
    commMs,
    exposedCommMs,
    idleMs: measure(idle),
    hostWaitMs,
    kernelWaitMs,
    syncWaitMs,
    otherIdleMs,
    floor,
    efficiency: ms > 0 ? floor.ms / ms : 0,
  };
}

function fraction(part: number, whole: number): number {
  return whole > 0 ? part / whole : 0;
}

function clippedSum(events: readonly GpuEvent[], start: number, end: number): number {
  return events.reduce((sum, e) => sum + Math.max(0, Math.min(e.end, end) - Math.max(e.start, start)), 0);
}

/**
 * max(summed compute kernel time, each direction's bytes over its link rate) + the per-op cost of the term that
 * bounds it. Summed, not unioned: kernels that ran side by side on several streams still each took SM time, so a
 * step whose kernels overlapped can come out below its floor (an efficiency above 1).
 */
function floorOf(
  inside: readonly GpuEvent[],
  start: number,
  end: number,
  rates: LinkRates,
  perOpMs: number,
): StepMetrics['floor'] {
  const compute = inside.filter((e) => e.kind === 'kernel' && !e.communication);
  const kernelMs = clippedSum(compute, start, end);
  const linkMs = (direction: Direction, rate: number | null) => {
    const copies = inside.filter((e) => e.direction === direction);
    if (rate === null || !copies.length) return { ms: null, ops: copies.length };
    const bytes = copies.reduce((sum, e) => sum + clippedBytes(e, start, end), 0);
    return { ms: bytes / (rate * 1e6), ops: copies.length };
  };
  const h2d = linkMs('h2d', rates.h2d);
  const d2h = linkMs('d2h', rates.d2h);
  const terms: [FloorBound, number, number][] = [
    ['kernels', kernelMs, compute.length],
    ['h2d', h2d.ms ?? 0, h2d.ops],
    ['d2h', d2h.ms ?? 0, d2h.ops],
  ];
  const [bound, termMs, ops] = terms.reduce((best, term) => (term[1] > best[1] ? term : best));
  const opCostMs = ops * perOpMs;
  return { ms: termMs + opCostMs, bound, kernelMs, h2dMs: h2d.ms, d2hMs: d2h.ms, opCostMs };
}

/** A copy's bytes in proportion to the part of it inside the step. */
function clippedBytes(e: GpuEvent, start: number, end: number): number {
  if (e.bytes === null) return 0;
  const ms = e.end - e.start;
  return ms > 0 ? (e.bytes * Math.max(0, Math.min(e.end, end) - Math.max(e.start, start))) / ms : e.bytes;
}

/**
 * Holistic Trace Analysis' threshold for kernel wait (`consecutive_kernel_delay`, default 30 in
 * hta/trace_analysis.py): documented as nanoseconds, but compared there with gaps in the trace's own unit, Kineto's
 * µs (hta/common/trace_parser.py rounds `ts` to whole µs), so in effect 30 µs, the figure taken here.
 */
export const KERNEL_WAIT_MS = 0.03;

/**
 * Each idle gap of the step, whole, under one cause, in this order: host wait (the work that ends the gap was
 * launched only after the gap began, HTA's host wait, here on the whole device rather than per stream); kernel
 * wait (a gap between two pieces of work, shorter than KERNEL_WAIT_MS); and of the rest, HTA's "other", sync wait
 * where the gap began while a host synchronize was in progress, else other. Gaps at the step's edges are never
 * kernel wait: no op on both sides.
 */
function idleByCause(
  timeline: DeviceTimeline,
  idle: IntervalSet,
  stepStart: number,
  stepEnd: number,
): Pick<StepMetrics, 'hostWaitMs' | 'kernelWaitMs' | 'syncWaitMs' | 'otherIdleMs'> {
  const out = { hostWaitMs: 0, kernelWaitMs: 0, syncWaitMs: 0, otherIdleMs: 0 };
  for (const gap of idle) {
    const ms = gap.end - gap.start;
    if (gap.end < stepEnd && endsWithLateLaunch(timeline, gap)) out.hostWaitMs += ms;
    else if (gap.start > stepStart && gap.end < stepEnd && ms < KERNEL_WAIT_MS) out.kernelWaitMs += ms;
    else if (inSynchronize(timeline, gap.start)) out.syncWaitMs += ms;
    else out.otherIdleMs += ms;
  }
  return out;
}

/** The gap ends with an event whose launch returned after the gap began. */
function endsWithLateLaunch(timeline: DeviceTimeline, gap: Interval): boolean {
  const { events } = timeline;
  for (let i = firstStartingAt(events, gap.end); i < events.length && events[i]!.start === gap.end; i += 1) {
    const issued = events[i]!.issued;
    if (issued !== null && issued > gap.start) return true;
  }
  return false;
}

/**
 * A host synchronize was in progress at `time`: the last synchronize to start at or before it, or any earlier one, ends
 * after it.
 */
function inSynchronize(timeline: DeviceTimeline, time: number): boolean {
  const { syncs, syncReach } = timeline;
  let lo = 0;
  let hi = syncs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (syncs[mid]!.start <= time) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && syncReach[lo - 1]! > time;
}
