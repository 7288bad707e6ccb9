import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { formatPath } from '../config/load.js';
import { type RunResult, RunResultSchema } from '../result.js';

/** A result file holds one Result, or an array of them (several configs). Anything else is a usage error. */
export function loadResults(path: string): RunResult[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`${path} is not a readable JSON file: ${reason}.`, { hint: 'Pass files written by `cuda-pipe run --json`.' });
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
