import { UsageError } from '../errors.js';
import { MAX_RESULT_BYTES } from '../files/limits.js';
import { readRegularFile } from '../files/read.js';
import { formatPath } from '../config/load.js';
import { type RunResult, RunResultSchema } from '../result.js';

/** A result file holds one Result, or an array of them (several configs). Anything else is a usage error. */
export function loadResults(path: string): RunResult[] {
  const hint = 'Pass files written by `cuda-pipe run --json`.';
  const text = readRegularFile(path, { what: 'result file', maxBytes: MAX_RESULT_BYTES, hint });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not a JSON file: ${(error as Error).message}.`, { hint });
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  return items.map((item, index) => {
    const result = RunResultSchema.safeParse(item);
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    const where = [...(Array.isArray(parsed) ? [index] : []), ...(issue?.path ?? [])].filter((p): p is string | number => typeof p !== 'symbol');
    throw new UsageError(`${path} is not a cuda-pipe result: ${formatPath(where) || 'document'}: ${issue?.message ?? 'invalid'}.`, {
      hint: 'Pass files written by `cuda-pipe run --json` (schema cuda-pipe/result, version 1).',
    });
  });
}
