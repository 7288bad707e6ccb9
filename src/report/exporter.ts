import type { RunResult } from '../result/schema.js';
import type { Style } from './style.js';

/**
 * A format run results can be written in. Each format is one module under exporters/ exporting one of these, and
 * the CLI picks them from one table; renderers read nothing but the Results.
 */
export interface RunExporter {
  /** What the format is, for help texts. */
  readonly description: string;
  /** `columns`: the width terminal output fits (report/width.ts); documents ignore it. */
  readonly render: (results: readonly RunResult[], style: Style, columns?: number) => string;
}

/** The result a picture is drawn from: the first with a traced rep, else the first. */
export function pictured(results: readonly RunResult[]): RunResult {
  const result = results.find((r) => r.timeline !== null) ?? results[0];
  if (!result) throw new RangeError('no result to draw');
  return result;
}
