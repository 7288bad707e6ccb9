import type { RunResult } from '../result.js';
import { renderRunMarkdown } from '../report/markdown.js';
import { renderRunTable } from '../report/run-table.js';
import { makeStyle } from '../report/style.js';
import { writeOutput } from './write-file.js';

/**
 * The table goes to stdout, or to stderr when stdout carries JSON or Markdown (`-`); `--json` and `--md` go to a
 * file or to stdout.
 */
export function writeRunOutputs(result: RunResult, options: { json?: string | undefined; md?: string | undefined }): void {
  const documents: Array<[string | undefined, () => string]> = [
    [options.json, () => JSON.stringify(result, null, 2) + '\n'],
    [options.md, () => renderRunMarkdown(result) + '\n'],
  ];
  let stdoutTaken = false;
  for (const [target, render] of documents) {
    if (!target) continue;
    writeOutput(target, render());
    if (target === '-') stdoutTaken = true;
  }
  const stream = stdoutTaken ? process.stderr : process.stdout;
  stream.write(renderRunTable(result, makeStyle(stream)) + '\n');
}
