import { UsageError } from '../errors.js';
import { loadResults } from '../result/load.js';
import { type RunOutputTargets, writeRunOutputs } from './outputs.js';

export type ReportFlags = RunOutputTargets;

/**
 * Re-renders saved results exactly as measured (the renderers read nothing but the Result): the table, and each
 * asked-for document as `run` writes it; `--json` writes a file of any version as the current one. A saved sweep
 * reads as `sweep` printed it: the heat map, the best layout with its ties and the YAML, `--md` the heat map and
 * `--svg` the chart, not the race's dozens of modes.
 */
export async function reportCommand(file: string, flags: ReportFlags): Promise<0> {
  const results = loadResults(file);
  if (!results.length) throw new UsageError(`${file} holds no results.`);
  const sweep = results.every((r) => r.sweep !== null);
  await writeRunOutputs(results, flags, { table: true, gantt: false, sweep });
  return 0;
}
