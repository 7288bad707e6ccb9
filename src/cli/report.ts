import { UsageError } from '../errors.js';
import { markdownExporter } from '../report/exporters/markdown.js';
import { tableExporter } from '../report/exporters/table.js';
import { makeStyle } from '../report/style.js';
import { loadResults } from '../result/load.js';
import { type RunOutputTargets, writeRunOutputs } from './outputs.js';

export interface ReportFlags extends Pick<RunOutputTargets, 'svg' | 'html' | 'trace'> {
  md?: boolean;
}

/** Re-renders saved results exactly as measured: the renderers read nothing but the Result. */
export async function reportCommand(file: string, flags: ReportFlags): Promise<0> {
  const results = loadResults(file);
  if (!results.length) throw new UsageError(`${file} holds no results.`);
  if (flags.md) {
    process.stdout.write(markdownExporter.render(results, makeStyle()) + '\n');
    return 0;
  }
  writeRunOutputs(results, { svg: flags.svg, html: flags.html, trace: flags.trace }, { table: true, gantt: false });
  return 0;
}
