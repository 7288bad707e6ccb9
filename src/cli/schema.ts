import { configJsonSchema } from '../config/schema.js';

export async function schemaCommand(): Promise<0> {
  process.stdout.write(JSON.stringify(configJsonSchema(), null, 2) + '\n');
  return 0;
}
