import { mergeResults } from '../compare/merge.js';
import { UsageError } from '../errors.js';
import { renderMerge } from '../report/merge.js';
import { makeStyle } from '../report/style.js';
import { fitLines, outputColumns } from '../report/width.js';
import { concludeResult } from '../measure/conclusions.js';
import { loadResults } from '../result/load.js';
import { writeDocuments } from './write-file.js';

/**
 * `cuda-pipe merge <results...>`: the ranks' Results side by side. `--json` writes them as one array of Results,
 * each with its own `run` identity, in the order of the tables: the format every reader already takes.
 */
export async function mergeCommand(files: string[], flags: { json?: string }): Promise<0> {
  // Each rank's conclusions drawn again from its modes, as `report` draws them.
  const results = files.flatMap((file) => loadResults(file)).map(concludeResult);
  if (!results.length) throw new UsageError(`${files.join(', ')} hold${files.length === 1 ? 's' : ''} no results.`);
  const merged = mergeResults(results);
  const out = await writeDocuments([
    { flag: 'json', target: flags.json, render: () => JSON.stringify(merged.results, null, 2) + '\n' },
  ]);
  const columns = outputColumns(out);
  out.write(fitLines(renderMerge(merged, makeStyle(out), columns), columns) + '\n');
  return 0;
}
