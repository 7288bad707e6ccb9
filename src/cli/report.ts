import { UsageError } from '../errors.js';
import { renderAbMarkdown, renderAbTable } from '../report/ab.js';
import { renderProbe } from '../report/probe.js';
import { makeStyle } from '../report/style.js';
import { fitLines, outputColumns } from '../report/width.js';
import { concludeResult } from '../measure/conclusions.js';
import { loadDocument } from '../result/load.js';
import { OUTPUT_FLAGS, type OutputFlag, type RunOutputTargets, writeRunOutputs } from './outputs.js';
import { abSuite } from '../report/verdict-rows.js';
import { VERDICT_FLAGS, type VerdictFlag, type VerdictTargets, verdictDocuments } from './verdict-outputs.js';
import { nextTurn } from './turns.js';
import { writeDocuments } from './write-file.js';

export type ReportFlags = RunOutputTargets & VerdictTargets;

/**
 * Re-renders any saved document exactly as measured (the renderers read nothing but the document), a Result's
 * conclusions drawn again from its modes by the functions `run` draws them with (measure/conclusions.ts): Results as
 * the
 * table, and each asked-for document as `run` writes it; `--json` writes a file of any version as the current one. A
 * saved sweep reads as `sweep` printed it: the heat map, the best layout with its ties and the YAML, `--md` the heat
 * map and `--svg` the chart, not the race's dozens of modes. An A/B document reads as `ab` printed it (the table,
 * `--md`, `--json`, and its verdicts for CI: `--csv`, `--bmf`, `--gab`, `--junit`), and a probe as `probe` did (the
 * tables, `--json`).
 */
export async function reportCommand(file: string, flags: ReportFlags): Promise<0> {
  const document = loadDocument(file);
  // Reading a large Result is synchronous: a signal that came meanwhile ends the command here.
  await nextTurn();
  if (document.kind === 'ab') {
    refuseOthers(flags, ['json', 'md', ...VERDICT_FLAGS], 'an A/B document (`cuda-pipe ab --json`)');
    const { ab } = document;
    const out = await writeDocuments([
      { flag: 'json', target: flags.json, render: () => JSON.stringify(ab, null, 2) + '\n' },
      { flag: 'md', target: flags.md, render: () => renderAbMarkdown(ab) + '\n' },
      ...verdictDocuments(() => [abSuite(ab)], flags),
    ]);
    const columns = outputColumns(out);
    out.write(fitLines(renderAbTable(ab, makeStyle(out), columns), columns) + '\n');
    return 0;
  }
  if (document.kind === 'probe') {
    refuseOthers(flags, ['json'], 'a probe document (`cuda-pipe probe --json`)');
    const { probe } = document;
    const out = await writeDocuments([
      { flag: 'json', target: flags.json, render: () => JSON.stringify(probe, null, 2) + '\n' },
    ]);
    const columns = outputColumns(out);
    out.write(fitLines(renderProbe(probe, makeStyle(out), columns), columns) + '\n');
    return 0;
  }
  // Today's conclusions from the recorded measurements: the model's bound, best layout and advice, drawn again.
  const results = document.results.map(concludeResult);
  if (!results.length) throw new UsageError(`${file} holds no results.`);
  if (flags.junit !== undefined) {
    throw new UsageError(`--junit writes verdicts, and ${file} holds Results, which judge nothing by themselves.`, {
      hint: 'Compare them with a baseline: cuda-pipe compare baseline.json result.json --junit verdicts.xml (or report an ab --json file).',
    });
  }
  const sweep = results.every((r) => r.sweep !== null);
  await writeRunOutputs(results, flags, { table: true, gantt: false, sweep });
  return 0;
}

/** A document of another kind than Results has no modes or timeline to write as the other formats. */
function refuseOthers(flags: ReportFlags, allowed: ReadonlyArray<OutputFlag | VerdictFlag>, what: string): void {
  const refused = [...new Set([...OUTPUT_FLAGS, ...VERDICT_FLAGS])].filter(
    (flag) => flags[flag] !== undefined && !allowed.includes(flag),
  );
  if (!refused.length) return;
  throw new UsageError(
    `${refused.map((f) => `--${f}`).join(', ')} cannot render ${what}: it holds no run's modes or timeline.`,
    {
      hint: `For this file, report writes ${allowed.map((f) => `--${f}`).join(' and ')}.`,
    },
  );
}
