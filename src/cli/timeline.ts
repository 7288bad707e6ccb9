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
  const result = readRunResult(file);
  const documents = timelineDocuments(result, options);
  const toStdout = documents.filter((d) => d.target === '-');
  if (toStdout.length > 1) throw new Error(`Only one of --svg, --html and --trace can write to stdout (-); ${toStdout.map((d) => d.flag).join(' and ')} both ask to.`);
  const ganttStream = toStdout.length ? process.stderr : process.stdout;
  const style = terminalStyle(ganttStream);
  ganttStream.write(`${renderGantt(result, { style, columns: options.width ?? defaultColumns(ganttStream) })}\n`);
  for (const document of documents) {
    if (document.target === '-') process.stdout.write(document.render());
    else await writeFile(document.target, document.render());
  }
  return 0;
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
    throw new Error(`Cannot read ${file} as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = RunResultSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? `${first.path.join('.') || '(top level)'}: ${first.message}` : 'unknown problem';
    throw new Error(`${file} is not a cuda-pipe result of version 2 (${where}).`);
  }
  return parsed.data;
}

/** Colour only for a terminal, and never with NO_COLOR set (https://no-color.org); as report/style.ts's makeStyle. */
function terminalStyle(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): ChalkInstance {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return new Chalk({ level: noColor || !stream.isTTY ? 0 : 1 });
}
