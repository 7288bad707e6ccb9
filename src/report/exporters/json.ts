import type { RunResult } from '../../result/schema.js';
import type { RunExporter } from '../exporter.js';

/** The Result document itself: one object for one run, an array for several. */
export function renderRunJson(results: readonly RunResult[]): string {
  return JSON.stringify(results.length === 1 ? results[0] : results, null, 2);
}

export const jsonExporter: RunExporter = {
  description: 'the Result document (schema cuda-pipe/result)',
  render: renderRunJson,
};
