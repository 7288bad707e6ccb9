import { writeFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { defaultColumns, renderGantt } from '../report/gantt.js';
import { renderHtml } from '../report/html.js';
import { renderSvg } from '../report/svg.js';
import { renderTrace } from '../report/trace.js';
import { makeStyle } from '../report/style.js';
import { loadResults } from '../result/load.js';
import type { RunResult } from '../result/schema.js';

// `cuda-pipe timeline <result.json>`: redraws a saved run's traced reps. The terminal Gantt goes to stdout; --svg,
// --html and --trace write their documents to files, or one of them to stdout with `-` (the Gantt then moves to
// stderr, as `run --json -` does with its table).

export interface TimelineOptions {
  svg?: string;
  html?: string;
  trace?: string;
  width?: number;
}

export async function timelineCommand(file: string, options: TimelineOptions): Promise<0> {
  const results = loadResults(file);
  const traced = results.find((r) => r.timeline !== null);
  if (!traced) {
    throw new UsageError(`${file} holds no traced rep to draw.`, {
      hint: 'Results written by `cuda-pipe run` record one unless --no-trace was given; files of cuda-pipe 0.1.0 have none.',
    });
  }
  await writeTimelineOutputs(traced, options);
  return 0;
}

/**
 * The Gantt and the documents `options` ask for. `run --timeline` calls this after its own outputs, saying whether
 * one of them (`--json -`, `--md -`) already holds stdout: then the Gantt goes to stderr and no document may use `-`.
 */
export async function writeTimelineOutputs(result: RunResult, options: TimelineOptions, stdoutTaken = false): Promise<void> {
  const documents = timelineDocuments(result, options);
  const toStdout = documents.filter((d) => d.target === '-');
  if (toStdout.length > (stdoutTaken ? 0 : 1)) {
    const flags = toStdout.map((d) => d.flag).join(' and ');
    throw new UsageError(stdoutTaken
      ? `stdout already carries another document, so ${flags} cannot write to it (-); give a file name.`
      : `Only one of --svg, --html and --trace can write to stdout (-); ${flags} both ask to.`);
  }
  const ganttStream = stdoutTaken || toStdout.length ? process.stderr : process.stdout;
  const style = makeStyle(ganttStream);
  ganttStream.write(`${renderGantt(result, { style, columns: options.width ?? defaultColumns(ganttStream) })}\n`);
  for (const document of documents) {
    if (document.target === '-') process.stdout.write(document.render());
    else await writeFile(document.target, document.render());
  }
}

export interface TimelineDocument {
  readonly flag: '--svg' | '--html' | '--trace';
  /** A path, or '-' for stdout. */
  readonly target: string;
  readonly render: () => string;
}

/** The documents the options ask for, rendered only when written. */
export function timelineDocuments(result: RunResult, options: TimelineOptions): TimelineDocument[] {
  const all: [TimelineDocument['flag'], string | undefined, () => string][] = [
    ['--svg', options.svg, () => renderSvg(result)],
    ['--html', options.html, () => renderHtml(result)],
    ['--trace', options.trace, () => renderTrace(result)],
  ];
  return all.flatMap(([flag, target, render]) => (target ? [{ flag, target, render }] : []));
}
