import type { ConfigBuffer } from '../../model/buffers.js';
import type { OutputCheckRecord, OutputMismatch, ToleranceRule } from '../../model/outputs.js';
import type { PlanOp, Schedule, WorkOpBase } from '../../model/schedule.js';

// How the outputs a kind's ops write are verified: against serial's (every kind), and where that cannot tell whether
// its ops did their work, by a check of its own against a reference rep.

/** What the list knows of an op's kind, for a check: whether it is a compute step, and which buffers it may write. */
export interface CheckFacts {
  compute(op: PlanOp): boolean;
  /** Null: any (a kind's `writes`); an ordering op writes none. */
  writes(op: PlanOp): readonly string[] | null;
}

/** data/compare.ts's comparisons of one window, which the verifier passes in. */
export interface Comparisons {
  compareOutput(
    buffer: ConfigBuffer,
    expected: Uint8Array,
    actual: Uint8Array,
    candidatePoison: number,
  ): OutputMismatch | null;
  compareWithin(
    buffer: ConfigBuffer,
    expected: Uint8Array,
    actual: Uint8Array,
    candidatePoison: number,
    tolerance: ToleranceRule,
  ): { mismatch: OutputMismatch | null; largest: { readonly absolute: number; readonly relative: number } };
}

/** The Result's record of a kind's output check (`verification.reduction`). */
export type CheckRecord = OutputCheckRecord;

/**
 * A kind's check of serial's outputs against a reference rep of its own (an all-reduce's sum: every layout reduces,
 * so comparing layouts with serial would pass a call that did nothing). It runs where the plan has a reference.
 */
export interface OutputCheck {
  /**
   * The reference: serial changed so that its outputs are what the check compares with; undefined where serial needs
   * none.
   */
  reference(serial: Schedule): Schedule | undefined;
  /** The outputs of serial the check decides; `facts` tells what the list knows of an op's kind. */
  outputs(serial: Pick<Schedule, 'body'>, outputs: readonly ConfigBuffer[], facts: CheckFacts): ConfigBuffer[];
  /**
   * Serial's outputs (`checked`) against the reference's, window by window, over `ranks` ranks: the mismatches (a
   * first element per buffer) and the Result's record of the check (`verification.reduction`).
   */
  compare(
    buffers: readonly ConfigBuffer[],
    checked: ReadonlyMap<string, readonly Uint8Array[]>,
    reference: ReadonlyMap<string, readonly Uint8Array[]>,
    ranks: number,
    tolerance: ToleranceRule | null,
    poison: number,
    comparisons: Comparisons,
  ): { readonly mismatches: OutputMismatch[]; readonly record: CheckRecord };
  /**
   * Whether a body's outputs depend on its layout (a reduce-scatter leaves part r of each bucket on rank r): each
   * layout is then compared with its own rep serialised, not with serial.
   */
  layoutDependent?(body: readonly PlanOp[]): boolean;
}

export interface KindCheck<O extends WorkOpBase = WorkOpBase> {
  /**
   * How the outputs it writes are verified against serial's: `exact`, byte for byte whatever the config says;
   * `tolerance`, as numbers within the config's verify.tolerance where it gives one (a kernel's or a library's sums may
   * change with the algorithm or the order a layout gets), byte for byte otherwise.
   */
  readonly verify: 'exact' | 'tolerance';
  /** The device buffers the op writes, where the kind knows them; null: any (a kernel's arguments say no direction). */
  writes(op: O): readonly string[] | null;
  /** Its check of the outputs, where comparing each layout with serial cannot tell whether its ops did their work. */
  readonly check?: OutputCheck;
}
