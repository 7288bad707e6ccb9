import { intersect, measure, union } from '../analysis/intervals.js';
import { COMMUNICATION_STAGES, kindReports, type ReportContext, SM_STAGES } from '../kinds/index.js';
import type { RunResult } from '../result/schema.js';
import { modeLabel } from './labels.js';

// The kinds' sections of every report (the contract's `report`). A kind may not load the core, so the report gives each
// what it reads: the list's facts, the analysis' interval arithmetic, and the mode labels every report uses.

/** What a section reads beyond its Result and the mode labels. */
export const REPORT_FACTS: Omit<ReportContext, 'modeLabel'> = {
  computeStages: SM_STAGES,
  communicationStages: COMMUNICATION_STAGES,
  intervals: { union, intersect, measure },
};

/** A section's context for one Result. */
export const reportContext = (result: RunResult): ReportContext => ({
  ...REPORT_FACTS,
  modeLabel: (mode) => modeLabel(mode, result),
});

/** The sections with something to say of this Result, in the list's order. */
export const kindSections = (result: RunResult) => kindReports(result, reportContext(result));

/** Their lines, section after section, for the renderers that print them as text. */
export const kindLines = (result: RunResult): string[] => kindSections(result).flatMap((section) => section.lines);
