import { isCompared } from '../../modes.js';
import type { ModeResult } from '../../model/mode.js';
import type { RunResult } from '../../result/schema.js';

/** One mode of one Result under the name a dashboard tracks it by. */
export interface ModeMetric {
  readonly name: string;
  readonly result: RunResult;
  readonly mode: ModeResult;
}

/**
 * Every compared mode of the Results that was measured to its end (issue-cost modes time the host, not the GPU, so
 * compare leaves them out and so do dashboards; a sweep's layouts dropped after a few reps as clearly slower have
 * medians of a few noisy reps, which a chart would plot as measured, so they are left out too, and `--csv` keeps them
 * with `stopped_by` `clearly-slower`), named `config/mode-id`: the id is generated from the role, so a name stays the
 * same from one
 * commit to the next while labels may be reworded. A rank adds `@rank N`; Results that would still share a name (one
 * per `--host-memory` kind, one per sweep setting) add `#2`, `#3`… in the order the command wrote them, which is fixed.
 */
export function modeMetrics(results: readonly RunResult[]): ModeMetric[] {
  const seen = new Map<string, number>();
  return results.flatMap((result) => {
    const base = `${result.config.name}${result.run.rank === null ? '' : `@rank${result.run.rank}`}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    const prefix = count === 1 ? base : `${base}#${count}`;
    const measured = result.modes.filter((mode) => isCompared(mode.role) && mode.stoppedBy !== 'clearly-slower');
    return measured.map((mode) => ({ name: `${prefix}/${mode.id}`, result, mode }));
  });
}

/**
 * The interval a dashboard draws around a median: the quartiles of the timed reps, the spread `compare` judges a change
 * against (two runs differ only when their quartiles are apart), in ms.
 */
export const modeInterval = (mode: Pick<ModeResult, 'stats'>): { readonly lowMs: number; readonly highMs: number } => ({
  lowMs: mode.stats.q1,
  highMs: mode.stats.q3,
});
