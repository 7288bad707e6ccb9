import { renderJUnit, renderVerdictBmf, renderVerdictCsv, renderVerdictGab } from '../report/exporters/verdicts.js';
import type { VerdictSuite } from '../report/verdict-rows.js';
import type { Document } from './write-file.js';

// The documents `compare`, `ab` and `report` of an A/B document write from verdicts, by the flag that asks for each:
// the formats CI reads (issue 39). Results' own formats are cli/outputs.ts' table.

const RENDERERS = { csv: renderVerdictCsv, bmf: renderVerdictBmf, gab: renderVerdictGab, junit: renderJUnit } as const;

export type VerdictFlag = keyof typeof RENDERERS;
export const VERDICT_FLAGS = Object.keys(RENDERERS) as VerdictFlag[];
export type VerdictTargets = Partial<Record<VerdictFlag, string | undefined>>;

/** Each asked-for verdict document, rendered only when written. */
export function verdictDocuments(suites: () => readonly VerdictSuite[], targets: VerdictTargets): Document[] {
  return VERDICT_FLAGS.map((flag) => ({ flag, target: targets[flag], render: () => RENDERERS[flag](suites()) + '\n' }));
}
