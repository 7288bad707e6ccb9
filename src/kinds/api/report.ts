import type { ModeResult } from '../../model/mode.js';
import type { Interval, IntervalSet, TracedRepBase } from '../../model/timeline.js';
import type { LayoutVariant } from '../../vocabulary.js';
import type { WorkOpBase } from '../../model/schedule.js';

// How a stage kind's ops read and look in every message, plan and picture, and its own section of the reports,
// drawn from a Result alone.

/** A chalk background and foreground from the 16 colours every terminal has. */
export interface TerminalLook {
  readonly background: 'bgBlue' | 'bgGreen' | 'bgMagenta' | 'bgGray' | 'bgYellow' | 'bgCyan' | 'bgRed';
  readonly foreground: 'whiteBright' | 'black';
}

/** The engine a stage's ops occupy, as the trace draws it (one track per engine, rows ordered by `row`). */
export interface EngineLook {
  readonly row: number;
  readonly name: string;
  /** A DMA copy between host and device: on a device with one copy engine, every such stage shares it. */
  readonly hostCopy: boolean;
  /** Its ops queue for the engine behind other streams' (a DMA engine), unlike kernels, which share the SMs. */
  readonly exclusive: boolean;
}

/** Its look in every picture. `always`: a legend lists it even where no rep has one. */
export interface KindLook {
  readonly letter: string;
  readonly colour: string;
  readonly name: string;
  /** The first word of an op's label: "H2D input #3". */
  readonly prefix: string;
  readonly terminal: TerminalLook;
  readonly engine: EngineLook;
  readonly always: boolean;
  /** Whether a rate (GB/s) means something for it: bytes moved, not bytes given. */
  readonly rate: boolean;
  /**
   * What the printed plan counts its ops as (kinds with one noun are counted together), and whether every plan's
   * summary shows the count or only a plan with such ops; null: counted in the total only.
   */
  readonly noun: { readonly one: string; readonly many: string; readonly always: boolean } | null;
}

/** What describing an op needs beyond the op: the kernels' entry names, and a chunk in words. */
export interface DescribeContext {
  readonly kernels: readonly { readonly label: string; readonly entry: string }[];
  /** "chunk 3 of 16", or "whole buffers". */
  chunk(chunk: number | null): string;
}

/** What of a Result every kind's report may read, besides its own sections (`S`). */
export interface ResultView {
  readonly modes: readonly ModeResult[];
  /** The headline mode's id. */
  readonly summary: { readonly mode: string };
  readonly pipeline: { readonly elements: number; readonly items?: number | undefined };
  readonly timeline: { readonly reps: readonly TracedRepBase[] } | null;
}

/** What a report section is given beyond the Result: the core's words and analysis, and facts of the list of kinds. */
export interface ReportContext {
  /** A mode's name as every report gives it (report/labels.ts's modeLabel, for this Result). */
  modeLabel(mode: ModeResult): string;
  /** The stages whose ops are computation on the SMs (the kinds whose model resource is the kernels'). */
  readonly computeStages: readonly string[];
  /** The stages whose ops are communication between ranks (the kinds marked `communication`). */
  readonly communicationStages: readonly string[];
  /** The analysis' interval arithmetic (analysis/intervals.ts). */
  readonly intervals: {
    union(intervals: readonly Interval[]): IntervalSet;
    intersect(a: IntervalSet, b: IntervalSet): IntervalSet;
    measure(set: IntervalSet): number;
  };
}

/**
 * A kind's section of the reports: its lines, which every renderer prints, and its section's id and heading in HTML.
 */
export interface ReportSection<S = unknown> {
  readonly id: string;
  readonly title: string;
  /** Its lines, each one under its first indented by two spaces; none for a Result without the kind's facts. */
  lines(result: ResultView & S, context: ReportContext): string[];
}

/**
 * What a kind's line about an overlapped mode is given beyond the mode and its Result: the mode of the same layout
 * without one of its variants (report/toolbox.ts's `twinWithout`), which a kind may not load.
 */
export interface ModeLineContext {
  twinWithout(mode: ModeResult, variant: LayoutVariant): ModeResult | null;
}

export interface KindReport<O extends WorkOpBase = WorkOpBase, S = unknown> {
  readonly look: KindLook;
  /** The op's subject in words, without its chunk: `kernel fma (fma_loop)`, `H2D of "x"`. */
  what(op: O, context: DescribeContext): string;
  /** The op in words with its chunk, for messages and the printed plan. */
  describe(op: O, context: DescribeContext): string;
  /** The subject of an op's label on a picture, from its timeline fields. */
  subject(op: { readonly buffer: string | null; readonly kernel: string | null }): string | null;
  /** The GPU work the op runs, by label, for a failure's "kernels in flight": a kernel's or a library call's. */
  names(op: O): readonly string[];
  /** A hint for a failure while the op ran, where there is one to give. */
  readonly failureHint?: string;
  /** Its section of every report (terminal, Markdown, HTML, sweep), drawn from the Result alone. */
  readonly report?: ReportSection<S>;
  /** Its line about an overlapped mode whose layout it changed, among the toolbox's lines; null where it has none. */
  modeLine?(mode: ModeResult, result: ResultView & S, context: ModeLineContext): string | null;
}
