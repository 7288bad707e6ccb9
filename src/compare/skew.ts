import { COMMUNICATION_STAGES } from '../kinds/index.js';
import { median } from '../quantile.js';
import type { RunResult } from '../result/schema.js';
import type { TimelineOp, TracedRep } from '../result/timeline.js';
import type { Collective } from '../vocabulary.js';

// The arrival skew of the collectives between the ranks `merge` reads (./merge.ts): which rank every other one waited
// for, call by call, from the traced reps' times on the host's wall clock.

/** What the skew reads of a rank's figures (merge.ts's RankFigures). */
export interface RankSide {
  readonly result: RunResult;
  readonly host: string;
  readonly rank: number | null;
  readonly device: { readonly index: number };
}

/** One GPU's side of the collectives: a rank's Result, or one device of a Result that drove several. */
export interface Participant {
  readonly rank: RankSide;
  readonly device: number;
}

/** When one participant's stream reached a collective call, on the host's wall clock (Unix epoch ms). */
export interface Arrival {
  readonly who: Participant;
  readonly epochMs: number;
}

/** One collective call as every participant made it. */
export interface CollectiveSkew {
  readonly mode: string;
  /** The call's place among its rep's collectives, from 0: NCCL pairs the k-th call of every rank. */
  readonly order: number;
  readonly chunk: number | null;
  readonly collective: Collective;
  /** Per-rank message bytes. */
  readonly bytes: number;
  /** In participant order. */
  readonly arrivals: readonly Arrival[];
  /** Latest arrival − earliest, ms. */
  readonly skewMs: number;
  /** The latest arrival: the participant every other one waited for. */
  readonly last: Arrival;
}

export interface LastCount {
  readonly who: Participant;
  readonly count: number;
}

export interface ModeSkew {
  readonly mode: string;
  readonly calls: readonly CollectiveSkew[];
  readonly medianMs: number;
  readonly maxMs: number;
  /** How often each participant arrived last, in participant order (every participant, 0 included). */
  readonly last: readonly LastCount[];
}

export type Skew =
  | {
      readonly kind: 'measured';
      readonly participants: readonly Participant[];
      readonly modes: readonly ModeSkew[];
      /**
       * The participants that arrived last most often over every mode (several on a tie), the count, and of how many
       * calls.
       */
      readonly mostOftenLast: { readonly who: readonly Participant[]; readonly count: number; readonly of: number };
      /** Modes whose collectives could not be paired, and why. */
      readonly unpaired: readonly string[];
    }
  | { readonly kind: 'unknown'; readonly reason: string };

const rankName = (r: RankSide) => (r.rank === null ? `${r.host} GPU ${r.device.index}` : `rank ${r.rank}`);
const collectivesOf = (rep: TracedRep): TimelineOp[] => rep.ops.filter((op) => COMMUNICATION_STAGES.includes(op.kind));

/**
 * The arrival skew of each collective between the ranks of one config. A rank arrives at a collective when its
 * stream reaches the call: the op's begin event (startMs, from the rep's start event) placed on the host's wall
 * clock by originEpochMs, the time that start event was issued. Ranks of one host read one wall clock, so arrivals
 * compare across processes to within the lag between issuing each rep's start event and the GPU recording it (µs
 * on an idle stream); ranks of different hosts do not share a clock, and their skew is not computed. Calls pair by
 * mode and their order in the rep, as NCCL pairs them.
 */
export function collectiveSkew(ranks: readonly RankSide[]): Skew | null {
  const hasCollectives = (r: RankSide) =>
    r.result.modes.some((m) => m.collective !== undefined) ||
    (r.result.timeline?.reps ?? []).some((rep) => collectivesOf(rep).length > 0);
  if (ranks.length < 2 && (ranks[0]?.result.devices.length ?? 0) < 2) return null;
  if (!ranks.some(hasCollectives)) return null;
  const hosts = [...new Set(ranks.map((r) => r.host))];
  if (hosts.length > 1) {
    return {
      kind: 'unknown',
      reason: `the ranks ran on ${hosts.length} hosts (${hosts.join(', ')}), whose wall clocks are not one clock`,
    };
  }
  const untraced = ranks.filter((r) => !(r.result.timeline?.reps ?? []).some((rep) => collectivesOf(rep).length > 0));
  if (untraced.length) {
    return {
      kind: 'unknown',
      reason: `${untraced.map(rankName).join(', ')} traced no collective (run without --no-tracing)`,
    };
  }
  const undated = ranks.filter((r) =>
    (r.result.timeline?.reps ?? []).some((rep) => collectivesOf(rep).length > 0 && rep.originEpochMs === undefined),
  );
  if (undated.length) {
    return {
      kind: 'unknown',
      reason: `the traced reps of ${undated.map(rankName).join(', ')} do not say when they started on the host's clock (written before cuda-pipe recorded it)`,
    };
  }
  // Each device of a Result is a participant: a process that drove several GPUs traced one rep per device.
  const reps = ranks.flatMap((rank) =>
    (rank.result.timeline?.reps ?? []).filter((rep) => collectivesOf(rep).length > 0).map((rep) => ({ rank, rep })),
  );
  const participants: Participant[] = [];
  for (const { rank, rep } of reps) {
    if (!participants.some((p) => p.rank === rank && p.device === rep.device))
      participants.push({ rank, device: rep.device });
  }
  participants.sort((a, b) => ranks.indexOf(a.rank) - ranks.indexOf(b.rank) || a.device - b.device);
  if (participants.length < 2) return null;
  const modes: ModeSkew[] = [];
  const unpaired: string[] = [];
  for (const mode of [...new Set(reps.map(({ rep }) => rep.mode))]) {
    const sides = participants.map((who) => ({
      who,
      rep: reps.find(({ rank, rep }) => rank === who.rank && rep.device === who.device && rep.mode === mode)?.rep,
    }));
    const missing = sides.filter((s) => s.rep === undefined);
    if (missing.length) {
      unpaired.push(`${mode}: not traced by ${missing.map((s) => participantName(s.who)).join(', ')}`);
      continue;
    }
    const calls = sides.map((s) => ({
      who: s.who,
      origin: (s.rep as TracedRep).originEpochMs as number,
      ops: collectivesOf(s.rep as TracedRep),
    }));
    const counts = [...new Set(calls.map((c) => c.ops.length))];
    if (counts.length > 1) {
      unpaired.push(
        `${mode}: the ranks traced ${calls.map((c) => `${c.ops.length} (${participantName(c.who)})`).join(', ')} collectives, which do not pair`,
      );
      continue;
    }
    const first = calls[0] as (typeof calls)[number];
    const mismatch = first.ops.findIndex((op, k) =>
      calls.some((c) => c.ops[k]?.chunk !== op.chunk || c.ops[k]?.collective !== op.collective),
    );
    if (mismatch !== -1) {
      unpaired.push(
        `${mode}: the ranks' collective ${mismatch + 1} is of different buckets or calls, so the sequences do not pair`,
      );
      continue;
    }
    const skews = first.ops.map((op, order): CollectiveSkew => {
      const arrivals = calls.map((c) => ({ who: c.who, epochMs: c.origin + (c.ops[order] as TimelineOp).startMs }));
      const last = arrivals.reduce((late, a) => (a.epochMs > late.epochMs ? a : late));
      const earliest = Math.min(...arrivals.map((a) => a.epochMs));
      return {
        mode,
        order,
        chunk: op.chunk,
        collective: op.collective ?? 'allreduce',
        bytes: op.bytes,
        arrivals,
        skewMs: last.epochMs - earliest,
        last,
      };
    });
    modes.push({
      mode,
      calls: skews,
      medianMs: median(skews.map((s) => s.skewMs)),
      maxMs: Math.max(...skews.map((s) => s.skewMs)),
      last: participants.map((who) => ({ who, count: skews.filter((s) => s.last.who === who).length })),
    });
  }
  if (!modes.length) return { kind: 'unknown', reason: unpaired.join('; ') };
  const totals = participants.map((who) => ({
    who,
    count: modes.reduce((sum, m) => sum + (m.last.find((l) => l.who === who)?.count ?? 0), 0),
  }));
  const most = Math.max(...totals.map((t) => t.count));
  return {
    kind: 'measured',
    participants,
    modes,
    mostOftenLast: {
      who: totals.filter((t) => t.count === most).map((t) => t.who),
      count: most,
      of: modes.reduce((sum, m) => sum + m.calls.length, 0),
    },
    unpaired,
  };
}

/** A participant in words: its rank (its host and GPU without one), and its GPU too where its Result drove several. */
export function participantName(p: Participant): string {
  if (p.rank.rank === null) return `${p.rank.host} GPU ${p.device}`;
  return p.rank.result.devices.length > 1 ? `rank ${p.rank.rank} GPU ${p.device}` : `rank ${p.rank.rank}`;
}
