import type * as Intervals from '../analysis/intervals.js';
import type { ConfigBuffer } from '../config/types.js';
import type * as Compare from '../data/compare.js';
import type { OutputMismatch, ToleranceRule } from '../data/compare.js';
import type { SpanningSpec } from '../plan/devices.js';
import type { EventSpec, Op, Plan, Schedule, StreamSpec } from '../plan/types.js';
import type { ModeResult } from '../result/mode.js';
import type { RunResult } from '../result/schema.js';
import type { LayoutVariant } from '../vocabulary.js';

// What the hooks of ./kind.ts's StageKind that see the core's plan, outputs and Result are given and give back: a
// kind's plan passes (`passes`), its report section (`report`) and its output check (`check`). A kind loads none of
// the core's code, so whatever of it a hook needs (the list's facts, a builder, a comparison) comes in through these.

/** The facts of the list of kinds a body pass reads, which the planner passes in (a kind does not load the list). */
export interface BodyPassFacts {
  /** The op kinds of a chunk's compute phase (index.ts's COMPUTE_STAGES). */
  readonly computeKinds: ReadonlySet<string>;
}

/** What a body pass returns: the body, the streams it issues on, and the events it records beyond the given ones. */
export interface PassedBody {
  readonly body: readonly Op[];
  readonly streams: readonly StreamSpec[];
  readonly events: readonly EventSpec[];
}

/** What a whole-plan pass is given beyond the plan: the pipeline's mode, and the core's builders it may not load. */
export interface PlanPassContext {
  /** The config runs its layouts as graph replays (pipeline.mode: graph). */
  readonly graph: boolean;
  /** plan/devices.ts's `spanningSchedule`: a timed region whose streams are on several devices. */
  spanning(spec: SpanningSpec): Schedule;
}

/** A kind's plan passes (`StageKind.passes`). */
export interface KindPasses {
  /** Over each one-device schedule's body as it is made (plan/schedules.ts's timedSchedule). */
  body?(schedule: { readonly body: readonly Op[]; readonly streams: readonly StreamSpec[]; readonly device: number }, facts: BodyPassFacts): PassedBody;
  /**
   * Over the one-device plan, to run it on several devices: where a plan holds ops of a kind with this pass, the
   * devices run as it lays them out instead of splitting the input.
   */
  plan?(plan: Plan, devices: readonly number[], context: PlanPassContext): Plan;
}

/**
 * A kind's check of serial's outputs against a reference rep of its own (an all-reduce's sum: every layout reduces,
 * so comparing layouts with serial would pass a call that did nothing). It runs where the plan has a reference.
 */
export interface OutputCheck {
  /** The reference: serial changed so that its outputs are what the check compares with; undefined where serial needs none. */
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
  layoutDependent?(body: readonly Op[]): boolean;
}

/** The Result's record of a kind's output check. */
export type CheckRecord = NonNullable<RunResult['verification']['reduction']>;

/** What the list knows of an op's kind, for a check: whether it is a compute step, and which buffers it may write. */
export interface CheckFacts {
  compute(op: Op): boolean;
  /** Null: any (kind.ts's `writes`); an ordering op writes none. */
  writes(op: Op): readonly string[] | null;
}

/** data/compare.ts's comparisons of one window, which the verifier passes in. */
export interface Comparisons {
  readonly compareOutput: typeof Compare.compareOutput;
  readonly compareWithin: typeof Compare.compareWithin;
}

/** A kind's section of the reports: its lines, which every renderer prints, and its section's id and heading in HTML. */
export interface ReportSection {
  readonly id: string;
  readonly title: string;
  /** Its lines, each one under its first indented by two spaces; none for a Result without the kind's facts. */
  lines(result: RunResult, context: ReportContext): string[];
}

/** What a report section is given beyond the Result: the core's words and analysis, and facts of the list of kinds. */
export interface ReportContext {
  /** A mode's name as every report gives it (report/labels.ts's modeLabel, for this Result). */
  modeLabel(mode: ModeResult): string;
  /** The stages whose ops are computation on the SMs (index.ts's SM_STAGES). */
  readonly computeStages: readonly string[];
  /** The stages whose ops are communication between ranks (index.ts's COMMUNICATION_STAGES). */
  readonly communicationStages: readonly string[];
  /** The analysis' interval arithmetic (analysis/intervals.ts). */
  readonly intervals: Pick<typeof Intervals, 'union' | 'intersect' | 'measure'>;
}

/**
 * What a kind's line about an overlapped mode is given beyond the mode and its Result: the mode of the same layout
 * without one of its variants (report/toolbox.ts's `twinWithout`), which a kind may not load.
 */
export interface ModeLineContext {
  twinWithout(mode: ModeResult, variant: LayoutVariant): ModeResult | null;
}
