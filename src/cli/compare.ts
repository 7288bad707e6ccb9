import { loadResults } from '../result/load.js';
import { compareResults, hasRegression } from '../compare/verdict.js';
import { UsageError } from '../errors.js';
import { renderCompareMarkdown, renderCompareTable } from '../report/compare.js';
import { makeStyle } from '../report/style.js';
import { writeOutput } from './write-file.js';

export interface CompareOptions {
  threshold: number;
  allowDeviceChange?: boolean;
  md?: string;
  json?: boolean;
}

export async function compareCommand(baselinePath: string, candidatePath: string, options: CompareOptions): Promise<0 | 1> {
  const comparison = compareResults(loadResults(baselinePath), loadResults(candidatePath), options.threshold / 100);
  if (comparison.deviceDifferences.length && !options.allowDeviceChange) {
    throw new UsageError(`The results come from different devices: ${comparison.deviceDifferences.join('; ')}.`, {
      hint: 'Compare results from the same GPU model, or pass --allow-device-change to compare anyway.',
    });
  }
  if (!comparison.pairs.length) {
    throw new UsageError(`Nothing to compare: no config of ${candidatePath} is in ${baselinePath} (${comparison.unpaired.join('; ')}).`);
  }
  if (options.json) {
    process.stdout.write(JSON.stringify(comparison, null, 2) + '\n');
  } else if (options.md === '-') {
    writeOutput('-', renderCompareMarkdown(comparison) + '\n');
  } else {
    if (options.md) writeOutput(options.md, renderCompareMarkdown(comparison) + '\n');
    process.stdout.write(renderCompareTable(comparison, makeStyle()) + '\n');
  }
  return hasRegression(comparison) ? 1 : 0;
}
