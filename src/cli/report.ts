import { UsageError } from '../errors.js';
import { loadResults } from '../result/load.js';
import { type RunOutputTargets, writeRunOutputs } from './outputs.js';

export type ReportFlags = Pick<RunOutputTargets, 'json' | 'md' | 'svg' | 'html' | 'trace'>;

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
  await writeRunOutputs(results, { json: flags.json, md: flags.md, svg: flags.svg, html: flags.html, trace: flags.trace }, { table: true, gantt: false, sweep });
  return 0;
}
