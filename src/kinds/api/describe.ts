import type { WorkOpBase } from '../../model/schedule.js';

// What a stage kind is, as every layer tells its ops apart: its id, the plan's op it issues, and the nature of that
// op (what it moves, whether it touches device memory, how CUPTI sees it, whether it is communication).

export type { WorkOpBase } from '../../model/schedule.js';

/**
 * What a CUPTI activity record of an op is, where CUPTI reports it, and whether memsets among its records are its time.
 */
export interface CuptiRecord {
  readonly kind: 'memcpy' | 'kernel';
  /** A library call (cuBLAS) may clear its scratch with a memset among its kernels: all of it is the call's time. */
  readonly memsets: boolean;
}

/**
 * `Id` is the kind the Result's timeline gives its ops; `O` is the plan's op it issues (one op kind may serve several
 * stages, as a copy serves H2D and D2H, told apart by `owns`).
 */
export interface KindDescription<Id extends string = string, O extends WorkOpBase = WorkOpBase> {
  readonly id: Id;
  readonly opKind: O['kind'];
  /** Whether a plan's op of `opKind` is this stage's. */
  owns(op: O): boolean;
  /** The bytes the op moves and which of a schedule's byte counts they add to; null for an op that moves none. */
  moves(op: O): { readonly count: 'h2d' | 'd2h' | 'peer' | 'collective'; readonly bytes: number } | null;
  /**
   * The work one op does, for a compute step's rate alone on whole buffers (flop and bytes read, as nvbench states
   * them); absent where the kind has no such count. `kernelBytes` counts a kernel's from its arguments' ranges.
   */
  work?(
    op: O,
    kernelBytes: (op: { kernel: string; count: number }) => number,
  ): { readonly flop: number; readonly bytes: number };
  /** Whether the op reads or writes device buffers, so a ring of device slots must order it. */
  readonly touchesDevice: boolean;
  /** What CUPTI records of the op, where CUPTI reports it. */
  readonly cupti: CuptiRecord | null;
  /** Why a rep with the kind's ops must be timed by events, CUPTI left off; absent where CUPTI may record it. */
  readonly untraced?: string;
  /** Its ops are communication between ranks (NCCL's), whose time the analysis sets against computation. */
  readonly communication?: boolean;
}
