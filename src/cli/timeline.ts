import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Chalk, type ChalkInstance } from 'chalk';
import { defaultColumns, renderGantt } from '../report/gantt.js';
import { renderHtml } from '../report/html.js';
import { renderSvg } from '../report/svg.js';
import { renderTrace } from '../report/trace.js';
import { type RunResult, RunResultSchema } from '../result/schema.js';

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
  await writeTimelineOutputs(readRunResult(file), options);
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
    throw new TimelineUsageError(stdoutTaken
      ? `stdout already carries another document, so ${flags} cannot write to it (-); give a file name.`
      : `Only one of --svg, --html and --trace can write to stdout (-); ${flags} both ask to.`);
  }
  const ganttStream = stdoutTaken || toStdout.length ? process.stderr : process.stdout;
  const style = terminalStyle(ganttStream);
  ganttStream.write(`${renderGantt(result, { style, columns: options.width ?? defaultColumns(ganttStream) })}\n`);
  for (const document of documents) {
    if (document.target === '-') process.stdout.write(document.render());
    else await writeFile(document.target, document.render());
  }
}

/**
 * A mistake of the user's (a bad file, two documents on stdout). Becomes UsageError from ../errors.js (exit 2) on
 * merge; this branch imports nothing outside the v2 schema, the vocabulary and its own files.
 */
export class TimelineUsageError extends Error {
  override readonly name = 'TimelineUsageError';
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

/**
 * The Result in `file`, checked against the v2 schema. A stand-in: the real loader also migrates older versions
 * and reads files holding several results.
 */
export function readRunResult(file: string): RunResult {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TimelineUsageError(`Cannot read ${file} as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = RunResultSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? `${first.path.join('.') || '(top level)'}: ${first.message}` : 'unknown problem';
    throw new TimelineUsageError(`${file} is not a cuda-pipe result of version 2 (${where}).`);
  }
  return parsed.data;
}

/** Colour only for a terminal, and never with NO_COLOR set (https://no-color.org); as report/style.ts's makeStyle. */
function terminalStyle(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): ChalkInstance {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return new Chalk({ level: noColor || !stream.isTTY ? 0 : 1 });
}
