import { writeFileSync } from 'node:fs';
import type { RunExporter } from '../report/exporter.js';
import { jsonExporter } from '../report/exporters/json.js';
import { markdownExporter } from '../report/exporters/markdown.js';
import { tableExporter } from '../report/exporters/table.js';
import { makeStyle } from '../report/style.js';
import type { RunResult } from '../result/schema.js';

/** Every format a run's results can be written in, by the flag that asks for it (`--json <file|->`). */
export const RUN_OUTPUTS = { json: jsonExporter, md: markdownExporter } as const satisfies Record<string, RunExporter>;

export type RunOutputTargets = Partial<Record<keyof typeof RUN_OUTPUTS, string | undefined>>;

/**
 * Each asked-for format goes to its file, or to stdout for `-`; the table goes to stdout, or to stderr when stdout
 * already carries a document.
 */
export function writeRunOutputs(results: readonly RunResult[], targets: RunOutputTargets): void {
  let stdoutTaken = false;
  for (const [flag, exporter] of Object.entries(RUN_OUTPUTS) as Array<[keyof typeof RUN_OUTPUTS, RunExporter]>) {
    const target = targets[flag];
    if (!target) continue;
    const text = exporter.render(results, makeStyle(process.stdout)) + '\n';
    if (target === '-') {
      process.stdout.write(text);
      stdoutTaken = true;
    } else {
      writeFileSync(target, text);
    }
  }
  const stream = stdoutTaken ? process.stderr : process.stdout;
  stream.write(tableExporter.render(results, makeStyle(stream)) + '\n');
}
