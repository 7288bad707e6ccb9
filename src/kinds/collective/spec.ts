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
