import { analyzeTraces } from '../analysis/analyze.js';
import { judgeSteps } from '../compare/steps.js';
import { separateRunsRule } from '../compare/rule.js';
import { UsageError } from '../errors.js';
import { parseTraceFile } from '../analyze/parse.js';
import type { ParsedTrace } from '../analysis/events.js';
import { ratesFromFile } from '../analysis/rates.js';
import { packageVersion } from '../paths.js';
import { renderAnalysis } from '../report/analyze.js';
import { renderAnalysisHtml } from '../report/analyze-html.js';
import { renderAnalysisMarkdown } from '../report/analyze-md.js';
import { renderAnalysisTrace } from '../report/analyze-trace.js';
import { outputColumns } from '../report/width.js';
import { writeDocuments } from './write-file.js';

/**
 * `cuda-pipe analyze <trace…>`: each trace (one per rank) read, analysed per device and step, and the analysis
 * printed; `--json` writes the document, `--md` a Markdown report, `--html` a page, `--trace` the analysed events
 * for Perfetto, each through writeDocuments as `run`'s are. Every file is read and checked before anything is
 * written, so a bad trace exits 2 with nothing half done. With --ab the two traces are A and B, their steps the
 * samples of `compare`'s rule.
 */
export async function analyzeCommand(
  files: string[],
  flags: { json?: string; md?: string; html?: string; trace?: string; rates?: string; ab?: boolean; threshold?: number },
): Promise<0 | 1> {
  if (flags.ab && files.length !== 2) throw new UsageError(`--ab judges two traces, A and B, not ${files.length}.`, { hint: 'cuda-pipe analyze before.json after.json --ab' });
  if (flags.threshold !== undefined && !flags.ab) throw new UsageError('--threshold is for --ab.');
  const rates = flags.rates === undefined ? null : ratesFromFile(flags.rates);
  // One at a time: each holds its kept events, and reading two at once would hold two files' worth of tokens too.
  const traces: ParsedTrace[] = [];
  for (const file of files) traces.push(await parseTraceFile(file));
  const analysed = analyzeTraces(traces, { rates, toolVersion: packageVersion() });
  const judged = flags.ab
    ? judgeSteps(
        analysed.devices.filter((d) => d.file === files[0]),
        analysed.devices.filter((d) => d.file === files[1]),
        separateRunsRule(flags.threshold === undefined ? undefined : flags.threshold / 100),
      )
    : undefined;
  const verdicts = judged?.verdicts;
  const document = judged ? { ...analysed, ...judged } : analysed;
  const out = await writeDocuments([
    { flag: 'json', target: flags.json, render: () => `${JSON.stringify(document, null, 2)}\n` },
    { flag: 'md', target: flags.md, render: () => renderAnalysisMarkdown(document) },
    { flag: 'html', target: flags.html, render: () => renderAnalysisHtml(document) },
    { flag: 'trace', target: flags.trace, render: () => renderAnalysisTrace(document, traces) },
  ]);
  out.write(renderAnalysis(document, outputColumns(out)));
  // As `compare`: exit 1 when B is slower somewhere.
  return verdicts?.some((v) => v.verdict === 'slower') ? 1 : 0;
}
