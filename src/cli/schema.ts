import { configJsonSchema } from '../config/schema.js';
import { resultJsonSchema } from '../result/schema.js';

export async function schemaCommand(options: { result?: boolean }): Promise<0> {
  process.stdout.write(JSON.stringify(options.result ? resultJsonSchema() : configJsonSchema(), null, 2) + '\n');
  return 0;
}
