import { UsageError } from '../errors.js';
import { markdownExporter } from '../report/exporters/markdown.js';
import { tableExporter } from '../report/exporters/table.js';
import { makeStyle } from '../report/style.js';
import { loadResults } from '../result/load.js';

/** Re-renders saved results exactly as measured: the renderers read nothing but the Result. */
export async function reportCommand(file: string, options: { md?: boolean }): Promise<0> {
  const results = loadResults(file);
  if (!results.length) throw new UsageError(`${file} holds no results.`);
  process.stdout.write((options.md ? markdownExporter : tableExporter).render(results, makeStyle()) + '\n');
  return 0;
}
