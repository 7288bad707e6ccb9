import { loadResults } from '../result/load.js';
import { separateRunsRule } from '../compare/rule.js';
import { compareResults, hasRegression } from '../compare/verdict.js';
import { UsageError } from '../errors.js';
import { renderCompareMarkdown, renderCompareTable } from '../report/compare.js';
import { makeStyle } from '../report/style.js';
import { fitLines, outputColumns } from '../report/width.js';
import { compareSuite } from '../report/verdict-rows.js';
import { type VerdictTargets, verdictDocuments } from './verdict-outputs.js';
import { writeDocuments } from './write-file.js';

export interface CompareOptions extends VerdictTargets {
  /** The equivalence band in percent; absent for the default (compare/rule.ts). */
  threshold?: number;
  allowDeviceChange?: boolean;
  md?: string;
  json?: string;
}

export async function compareCommand(
  baselinePath: string,
  candidatePath: string,
  options: CompareOptions,
): Promise<0 | 1> {
  const comparison = compareResults(
    loadResults(baselinePath),
    loadResults(candidatePath),
    separateRunsRule(options.threshold === undefined ? undefined : options.threshold / 100),
  );
  if (comparison.deviceDifferences.length && !options.allowDeviceChange) {
    throw new UsageError(`The results come from different devices: ${comparison.deviceDifferences.join('; ')}.`, {
      hint: 'Compare results from the same GPU model, or pass --allow-device-change to compare anyway.',
    });
  }
  if (!comparison.pairs.length) {
    throw new UsageError(
      `Nothing to compare: no config of ${candidatePath} is in ${baselinePath} (${comparison.unpaired.join('; ')}).`,
    );
  }
  const out = await writeDocuments([
    { flag: 'json', target: options.json, render: () => JSON.stringify(comparison, null, 2) + '\n' },
    { flag: 'md', target: options.md, render: () => renderCompareMarkdown(comparison) + '\n' },
    ...verdictDocuments(() => [compareSuite(comparison)], options),
  ]);
  const columns = outputColumns(out);
  out.write(fitLines(renderCompareTable(comparison, makeStyle(out), columns), columns) + '\n');
  return hasRegression(comparison) ? 1 : 0;
}
