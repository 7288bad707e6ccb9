import { UsageError } from '../errors.js';
import { loadResults } from '../result/load.js';
import { type RunOutputTargets, writeRunOutputs } from './outputs.js';

export interface TimelineFlags extends Pick<RunOutputTargets, 'svg' | 'html' | 'trace'> {
  width?: number;
}

/**
 * `cuda-pipe timeline <result.json>`: redraws a saved run's traced reps, exactly as measured. The Gantt goes to
 * stdout; --svg, --html and --trace write their documents to files, or one of them to stdout with `-` (the Gantt
 * then moves to stderr, as `run --json -` does with its table).
 */
export async function timelineCommand(file: string, flags: TimelineFlags): Promise<0> {
  const results = loadResults(file);
  if (!results.some((r) => r.timeline !== null)) {
    throw new UsageError(`${file} holds no traced rep to draw.`, {
      hint: 'Results written by `cuda-pipe run` record one unless --no-tracing was given; files of cuda-pipe 0.1.0 have none.',
    });
  }
  await writeRunOutputs(
    results,
    { svg: flags.svg, html: flags.html, trace: flags.trace },
    { table: false, gantt: true, width: flags.width },
  );
  return 0;
}
