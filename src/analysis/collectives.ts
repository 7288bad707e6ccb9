import { median } from '../quantile.js';
import type { CollectiveSkew, Participant } from './document.js';
import type { GpuEvent } from '../traces/events.js';

// The arrival skew of each collective between ranks, from their traces' NCCL kernels, in `merge`'s words: a rank
// arrives at a collective when its kernel starts; the skew is the latest arrival − the earliest; the last to arrive
// is the one every other rank waited for. NCCL pairs the k-th call of every rank, so collectives are matched by
// order: within a step (by name), the k-th NCCL kernel of one name on one rank with the k-th of that name on every
// other. Ranks whose steps hold different NCCL kernels (names or counts) are not matched at all: a wrong pairing
// would report a skew that never was.

/** One GPU's side: a trace's device with NCCL kernels, and which step each kernel's start falls in. */
export interface CollectiveSide {
  readonly who: Participant;
  /** NCCL kernels, any order. */
  readonly kernels: readonly GpuEvent[];
  /** The device's steps (GPU spans); a kernel in none is matched under NO_STEP. */
  readonly steps: ReadonlyArray<{ readonly name: string; readonly start: number; readonly end: number }>;
}

export const NO_STEP = '(outside the steps)';

/** Null with fewer than two sides: there is nothing to be skewed against. */
export function collectiveSkew(sides: readonly CollectiveSide[]): CollectiveSkew | null {
  if (sides.length < 2) return null;
  const sequences = sides.map(sequenceOf);
  const reason = mismatch(sides, sequences);
  if (reason) return { kind: 'unknown', participants: sides.map((s) => s.who), reason };
  const first = sequences[0]!;
  const calls = [...first.keys()].map((key) => {
    const [step, name, order] = key.split('\0') as [string, string, string];
    const startsMs = sequences.map((seq) => seq.get(key)!);
    const earliest = Math.min(...startsMs);
    const latest = Math.max(...startsMs);
    // A tie for last (a skew of 0 to the trace's µs) names no one: the first listed would be blamed for nothing.
    const last = latest > earliest ? startsMs.indexOf(latest) : null;
    return { step, name, order: Number(order), startsMs, skewMs: latest - earliest, last };
  });
  const skews = calls.map((c) => c.skewMs);
  const lastArriving = sides.map((side, i) => {
    const count = calls.filter((c) => c.last === i).length;
    const late = calls.map((c) => c.startsMs[i]! - Math.min(...c.startsMs));
    return {
      ...side.who,
      count,
      share: calls.length ? count / calls.length : 0,
      lateMs: { median: late.length ? median(late) : 0, max: Math.max(0, ...late) },
    };
  });
  const most = Math.max(...lastArriving.map((l) => l.count));
  return {
    kind: 'measured',
    participants: sides.map((s) => s.who),
    count: calls.length,
    skewMs: { median: skews.length ? median(skews) : 0, max: Math.max(0, ...skews) },
    lastArriving,
    mostOftenLast: {
      who:
        most > 0
          ? lastArriving.filter((l) => l.count === most).map(({ file, rank, device }) => ({ file, rank, device }))
          : [],
      count: most,
      of: calls.length,
    },
    calls,
  };
}

/**
 * Each NCCL kernel's key (step, name, its order among that step's kernels of that name) → its start, in start order.
 */
function sequenceOf(side: CollectiveSide): Map<string, number> {
  const steps = [...side.steps].sort((a, b) => a.start - b.start);
  const seen = new Map<string, number>();
  const out = new Map<string, number>();
  for (const k of [...side.kernels].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const step = steps.find((s) => s.start <= k.start && k.start < s.end)?.name ?? NO_STEP;
    const group = `${step}\0${k.name}`;
    const order = seen.get(group) ?? 0;
    seen.set(group, order + 1);
    out.set(`${group}\0${order}`, k.start);
  }
  return out;
}

/** Why the sides' collectives do not pair, naming the first difference; null when every side has the same keys. */
function mismatch(sides: readonly CollectiveSide[], sequences: readonly Map<string, number>[]): string | null {
  const counts = sequences.map(groupCounts);
  const groups = [...new Set(counts.flatMap((c) => [...c.keys()]))].sort();
  for (const group of groups) {
    const per = counts.map((c) => c.get(group) ?? 0);
    if (per.every((n) => n === per[0])) continue;
    const [step, name] = group.split('\0') as [string, string];
    const who = sides.map((s, i) => `${per[i]} on ${participantName(s.who)}`).join(', ');
    return `the ranks' NCCL kernels do not pair: ${name} in ${step} ran ${who}`;
  }
  return null;
}

function groupCounts(sequence: Map<string, number>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of sequence.keys()) {
    const group = key.slice(0, key.lastIndexOf('\0'));
    counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  return counts;
}

/** A side in words: its rank (and GPU where a trace drove several), else its file's GPU. */
export function participantName(p: Participant): string {
  return p.rank === null ? `${p.file} GPU ${p.device}` : `rank ${p.rank} GPU ${p.device}`;
}
