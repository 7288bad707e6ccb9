import { UsageError } from '../../errors.js';
import type { PrioritySpec } from '../../model/schedule.js';
import type { Collective } from '../../vocabulary.js';

/** A collective step as its config entry resolved it. */
export interface CollectiveSpec {
  readonly collective: Collective;
  readonly buffer: string;
  readonly type: string;
  readonly itemSize: number;
  readonly elementBytes: number;
  /** The communication stream's priority, as the entry gave it; undefined: the device's default. */
  readonly priority?: PrioritySpec;
  /**
   * The CTAs (NCCL's channels) every collective of the run's communicators may use, as the entry gave it: NCCL's
   * minCTAs and maxCTAs both; undefined: NCCL's own choice. The communicators are the run's, so its entries agree.
   */
  readonly ctas?: number;
}

export type CollectiveOp = {
  readonly kind: 'collective';
  readonly stream: string;
  /** The step's label. */
  readonly label: string;
  readonly chunk: number | null;
  /** The chunk's first item and item count. */
  readonly first: number;
  readonly count: number;
  /** Item index in the device buffer where this chunk lives. */
  readonly deviceFirst: number;
  readonly spec: CollectiveSpec;
  /**
   * One process driving several devices issues a bucket's calls on every device between ncclGroupStart and
   * ncclGroupEnd (without the group, the first call waits for peers that this thread has not issued yet): the
   * device's call that opens the group, the one that closes it, or neither. Absent: not grouped.
   */
  readonly group?: CollectiveGroup;
};

/** Whether a plan's op is a collective: a kind's hooks see every kind's ops, and tell theirs by this. */
export const isCollectiveOp = (op: { readonly kind: string }): op is CollectiveOp => op.kind === 'collective';

/**
 * The CTAs the run's communicators are made with: what the collectives that give `ctas` agree on, undefined where none
 * does. Two counts are refused: one communicator per device serves every collective of the run.
 */
export function communicatorCtas(ops: Iterable<{ readonly kind: string }>): number | undefined {
  const asked = new Map<number, string>();
  for (const op of ops) {
    if (!isCollectiveOp(op) || op.spec.ctas === undefined || asked.has(op.spec.ctas)) continue;
    asked.set(op.spec.ctas, op.label);
  }
  if (asked.size > 1) {
    const each = [...asked].map(([ctas, label]) => `${label} ${ctas}`).join(', ');
    throw new UsageError(
      `kernels: the collectives ask for different collective.ctas (${each}), but one NCCL communicator per device serves them all.`,
      { hint: 'Give every collective entry the same ctas, or leave it out of all but one.' },
    );
  }
  return [...asked.keys()][0];
}

/** Where a call sits in its bucket's group of calls across devices. */
export interface CollectiveGroup {
  readonly opens: boolean;
  readonly closes: boolean;
}

/**
 * The per-rank message as nccl-tests counts its size: the chunk's bytes of the buffer (all-reduced whole; scattered or
 * gathered in ranks' parts).
 */
export const messageBytes = (op: Pick<CollectiveOp, 'count' | 'spec'>): number =>
  op.count * op.spec.itemSize * op.spec.elementBytes;
