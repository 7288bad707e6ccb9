import { analysisJsonSchema } from '../analysis/document.js';
import { cliIo } from './io.js';
import { configJsonSchema } from '../config/schema.js';
import { resultJsonSchema } from '../result/schema.js';

export async function schemaCommand(options: { result?: boolean; analysis?: boolean }): Promise<0> {
  const schema = options.analysis ? analysisJsonSchema() : options.result ? resultJsonSchema() : configJsonSchema();
  cliIo().stdout.write(JSON.stringify(schema, null, 2) + '\n');
  return 0;
}
