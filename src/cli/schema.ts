import { cliIo } from './io.js';
import { UsageError } from '../errors.js';
import { renderSchemaOutline } from '../report/schema-outline.js';
import { outputColumns } from '../report/width.js';

type Which = 'config' | 'result' | 'analysis';

// The three JSON Schemas, as the CLI's bundle holds them: made from the compiled sources when it is built
// (scripts/bundle-cli.mjs), so that `schema` loads neither zod nor the kinds whose fragments they hold (most of its
// start). Run from the sources (the tests, where a fixture kind or format may be in a list), made from them here.
declare const CUDA_PIPE_SCHEMAS: string | undefined;

async function jsonSchema(which: Which): Promise<unknown> {
  if (typeof CUDA_PIPE_SCHEMAS === 'string') return (JSON.parse(CUDA_PIPE_SCHEMAS) as Record<Which, unknown>)[which];
  if (which === 'analysis') return (await import('../analysis/document.js')).analysisJsonSchema();
  if (which === 'result') return (await import('../result/schema.js')).resultJsonSchema();
  return (await import('../config/schema.js')).configJsonSchema();
}

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
  const schema = await jsonSchema(options.analysis ? 'analysis' : options.result ? 'result' : 'config');
  const out = cliIo().stdout;
  const command = `cuda-pipe schema${options.analysis ? ' --analysis' : options.result ? ' --result' : ''}`;
  out.write(
    out.isTTY
      ? `${renderSchemaOutline(schema, command, outputColumns(out))}\n`
      : JSON.stringify(schema, null, 2) + '\n',
  );
  return 0;
}
