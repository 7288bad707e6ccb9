import { analysisJsonSchema } from '../analysis/document.js';
import { cliIo } from './io.js';
import { configJsonSchema } from '../config/schema.js';
import { UsageError } from '../errors.js';
import { resultJsonSchema } from '../result/schema.js';

export async function schemaCommand(options: { result?: boolean; analysis?: boolean }): Promise<0> {
  // One document a run: two flags would have one of them ignored without a word.
  if (options.result && options.analysis) {
    throw new UsageError('--result and --analysis each print one JSON Schema; give one of them.', {
      hint: 'cuda-pipe schema --result > result.schema.json; cuda-pipe schema --analysis > analysis.schema.json',
    });
  }
  const schema = options.analysis ? analysisJsonSchema() : options.result ? resultJsonSchema() : configJsonSchema();
  cliIo().stdout.write(JSON.stringify(schema, null, 2) + '\n');
  return 0;
}
