import { analysisJsonSchema } from '../analysis/document.js';
import { cliIo } from './io.js';
import { configJsonSchema } from '../config/schema.js';
import { UsageError } from '../errors.js';
import { renderSchemaOutline } from '../report/schema-outline.js';
import { outputColumns } from '../report/width.js';
import { resultJsonSchema } from '../result/schema.js';

/**
 * The JSON Schema, whole, where stdout is a pipe or a file (`schema > cuda-pipe.schema.json`, an editor's setting);
 * at a terminal, its fields as an outline that fits the width, since a JSON string cannot wrap.
 */
export async function schemaCommand(options: { result?: boolean; analysis?: boolean }): Promise<0> {
  // One document a run: two flags would have one of them ignored without a word.
  if (options.result && options.analysis) {
    throw new UsageError('--result and --analysis each print one JSON Schema; give one of them.', {
      hint: 'cuda-pipe schema --result > result.schema.json; cuda-pipe schema --analysis > analysis.schema.json',
    });
  }
  const schema = options.analysis ? analysisJsonSchema() : options.result ? resultJsonSchema() : configJsonSchema();
  const out = cliIo().stdout;
  const command = `cuda-pipe schema${options.analysis ? ' --analysis' : options.result ? ' --result' : ''}`;
  out.write(out.isTTY ? `${renderSchemaOutline(schema, command, outputColumns(out))}\n` : JSON.stringify(schema, null, 2) + '\n');
  return 0;
}
