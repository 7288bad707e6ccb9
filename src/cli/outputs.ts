import type { RunExporter } from '../report/exporter.js';
import { jsonExporter } from '../report/exporters/json.js';
import { markdownExporter } from '../report/exporters/markdown.js';
import { sweepMarkdownExporter, sweepTableExporter } from '../report/exporters/sweep.js';
import { tableExporter } from '../report/exporters/table.js';
import { defaultColumns, renderGantt } from '../report/gantt.js';
import { htmlExporter } from '../report/html.js';
import { makeStyle } from '../report/style.js';
import { svgExporter } from '../report/svg.js';
import { sweepChartExporter } from '../report/sweep-chart.js';
import { traceExporter } from '../report/trace.js';
import { pictured } from '../report/exporter.js';
import type { RunResult } from '../result/schema.js';
import { writeDocuments } from './write-file.js';

/** Every document a run's results can be written as, by the flag that asks for it (`--json <file|->`). */
export const RUN_OUTPUTS = {
  json: jsonExporter,
  md: markdownExporter,
  svg: svgExporter,
  html: htmlExporter,
  trace: traceExporter,
} as const satisfies Record<string, RunExporter>;

export type RunOutputTargets = Partial<Record<keyof typeof RUN_OUTPUTS, string | undefined>>;

/** A saved sweep's documents: its heat map as Markdown and its chart in place of a run's tables and timeline. */
const SWEEP_REPORT_OUTPUTS = { ...RUN_OUTPUTS, md: sweepMarkdownExporter, svg: sweepChartExporter } as const satisfies typeof RUN_OUTPUTS;

export interface TerminalViews {
  /** The run table (run, report). */
  readonly table: boolean;
  /** The Gantt chart of the traced reps (run --timeline, timeline). */
  readonly gantt: boolean;
  readonly width?: number | undefined;
  /** The results are a sweep's: its heat map, best layout and YAML for the table, its documents for the files. */
  readonly sweep?: boolean;
}

/**
 * Each asked-for document goes to its file, or to stdout for `-` (one at most); the terminal views go to stdout, or
 * to stderr when stdout carries a document.
 */
export function writeRunOutputs(results: readonly RunResult[], targets: RunOutputTargets, views: TerminalViews): void {
  const outputs = views.sweep ? SWEEP_REPORT_OUTPUTS : RUN_OUTPUTS;
  const stream = writeDocuments((Object.entries(outputs) as Array<[keyof typeof RUN_OUTPUTS, RunExporter]>).map(([flag, exporter]) => ({
    flag, target: targets[flag], render: () => exporter.render(results, makeStyle(process.stdout)) + '\n',
  })));
  const style = makeStyle(stream);
  if (views.table) stream.write((views.sweep ? sweepTableExporter : tableExporter).render(results, style) + '\n');
  if (views.gantt) stream.write(renderGantt(pictured(results), { style, columns: views.width ?? defaultColumns(stream) }) + '\n');
}
