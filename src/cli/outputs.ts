import type { RunExporter } from '../report/exporter.js';
import { cliIo } from './io.js';
import { bmfExporter } from '../report/exporters/bmf.js';
import { csvExporter } from '../report/exporters/csv.js';
import { gabExporter } from '../report/exporters/gab.js';
import { jsonExporter } from '../report/exporters/json.js';
import { markdownExporter } from '../report/exporters/markdown.js';
import { sweepMarkdownExporter, sweepTableExporter } from '../report/exporters/sweep.js';
import { tableExporter, verboseTableExporter } from '../report/exporters/table.js';
import { renderGantt } from '../report/gantt.js';
import { htmlExporter } from '../report/html.js';
import { makeStyle } from '../report/style.js';
import { fitLines, outputColumns } from '../report/width.js';
import { svgExporter } from '../report/svg.js';
import { sweepChartExporter } from '../report/sweep-chart.js';
import { traceExporter } from '../report/trace.js';
import { pictured } from '../report/exporter.js';
import { summaryFirst } from '../report/results-summary.js';
import type { RunResult } from '../result/schema.js';
import { checkDocuments, writeDocuments } from './write-file.js';

/**
 * Every document results can be written as, by the flag that asks for it (`--json <file|->`): each format's run
 * exporter, and where a sweep's results draw another (its heat map as Markdown, its chart), the sweep's. `run`,
 * `report`, `timeline` and `sweep` all write from this one table.
 */
const OUTPUTS = {
  json: { run: jsonExporter },
  md: { run: markdownExporter, sweep: sweepMarkdownExporter },
  svg: { run: svgExporter, sweep: sweepChartExporter },
  html: { run: htmlExporter },
  trace: { run: traceExporter },
  csv: { run: csvExporter },
  bmf: { run: bmfExporter },
  gab: { run: gabExporter },
} as const satisfies Record<string, { run: RunExporter; sweep?: RunExporter }>;

/**
 * The terminal's view of results: the run table (with the model's working under --verbose), after a line per Result
 * where there are several, or a sweep's heat maps, best layout and YAML.
 */
const terminalExporter = (sweep: boolean, verbose: boolean): RunExporter =>
  sweep ? sweepTableExporter : summaryFirst(verbose ? verboseTableExporter : tableExporter);

export type OutputFlag = keyof typeof OUTPUTS;
export const OUTPUT_FLAGS = Object.keys(OUTPUTS) as OutputFlag[];

export type RunOutputTargets = Partial<Record<OutputFlag, string | undefined>>;

const exporterOf = (flag: OutputFlag, sweep: boolean): RunExporter => {
  const formats: { run: RunExporter; sweep?: RunExporter } = OUTPUTS[flag];
  return (sweep ? formats.sweep : undefined) ?? formats.run;
};

/** Fails on a clash between output targets before anything is measured. */
export const checkOutputs = (targets: RunOutputTargets): void =>
  checkDocuments(OUTPUT_FLAGS.map((flag) => ({ flag, target: targets[flag] })));

export interface TerminalViews {
  /** The run table (run, report). */
  readonly table: boolean;
  /** The Gantt chart of the traced reps (run --timeline, timeline). */
  readonly gantt: boolean;
  readonly width?: number | undefined;
  /** The results are a sweep's: its heat map, best layout and YAML for the table, its documents for the files. */
  readonly sweep?: boolean;
  /** Everything the run table holds; by default the program's --verbose, which comes before or after the command. */
  readonly verbose?: boolean;
}

/**
 * Each asked-for document goes to its file, or to stdout for `-` (one at most); the terminal views go to stdout, or
 * to stderr when stdout carries a document.
 */
export async function writeRunOutputs(
  results: readonly RunResult[],
  targets: RunOutputTargets,
  views: TerminalViews,
): Promise<void> {
  const sweep = views.sweep ?? false;
  const stream = await writeDocuments(
    OUTPUT_FLAGS.map((flag) => ({
      flag,
      target: targets[flag],
      render: () => exporterOf(flag, sweep).render(results, makeStyle(cliIo().stdout)) + '\n',
    })),
  );
  const style = makeStyle(stream);
  const columns = outputColumns(stream);
  // --verbose is the program's option, read from the command line as the top-level catch reads it: every command has
  // it.
  const verbose = views.verbose ?? cliIo().argv.includes('--verbose');
  if (views.table)
    stream.write(fitLines(terminalExporter(sweep, verbose).render(results, style, columns), columns) + '\n');
  if (views.gantt) stream.write(renderGantt(pictured(results), { style, columns: views.width ?? columns }) + '\n');
}
