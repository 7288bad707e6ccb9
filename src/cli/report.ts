import { UsageError } from '../errors.js';
import { loadResults } from '../compare/load.js';
import { renderRunMarkdown } from '../report/markdown.js';
import { renderRunTable } from '../report/run-table.js';
import { makeStyle } from '../report/style.js';

/** Re-renders saved results exactly as measured: the renderers read nothing but the Result. */
export async function reportCommand(file: string, options: { md?: boolean }): Promise<0> {
  const results = loadResults(file);
  if (!results.length) throw new UsageError(`${file} holds no results.`);
  const style = makeStyle();
  process.stdout.write(results.map((r) => (options.md ? renderRunMarkdown(r) : renderRunTable(r, style))).join('\n\n') + '\n');
  return 0;
}
