import { statSync } from 'node:fs';
import { analyzeTraces } from '../analysis/analyze.js';
import type { AnalysisDocument } from '../analysis/document.js';
import { checkOneLaunch, programNote, programShape } from '../analysis/launch.js';
import { judgeSteps } from '../compare/steps.js';
import { separateRunsRule } from '../compare/rule.js';
import { UsageError } from '../errors.js';
import { parseTraceFile } from '../traces/parse.js';
import type { ParsedTrace } from '../traces/events.js';
import { ratesFromFile } from '../analysis/rates.js';
import { packageVersion } from '../paths.js';
import { renderAnalysis } from '../report/analyze.js';
import { renderAnalysisHtml } from '../report/analyze-html.js';
import { renderAnalysisMarkdown } from '../report/analyze-md.js';
import { renderAnalysisTrace } from '../report/analyze-trace.js';
import { outputColumns } from '../report/width.js';
import { cliIo } from './io.js';
import { nextTurn } from './turns.js';
import { writeDocuments } from './write-file.js';

const AB_USAGE =
  'cuda-pipe analyze --ab before.json after.json, or with several ranks a side: cuda-pipe analyze --ab A0.json A1.json -- B0.json B1.json';

/**
 * `cuda-pipe analyze <trace…>`: each trace (one per rank of one launch) read, analysed per device and step, and the
 * analysis printed; `--json` writes the document, `--md` a Markdown report, `--html` a page, `--trace` the analysed
 * events for Perfetto, each through writeDocuments as `run`'s are. Every file is read and checked before anything is
 * written, so a bad trace exits 2 with nothing half done. With --ab the traces are two sides, A before a change and B
 * after (`A -- B`, each a launch's ranks; two traces without `--` are one each), each side's devices' steps the
 * samples of `compare`'s rule, rank paired with rank.
 */
export async function analyzeCommand(
  files: string[],
  flags: {
    json?: string;
    md?: string;
    html?: string;
    trace?: string;
    rates?: string;
    ab?: boolean;
    threshold?: number;
  },
): Promise<0 | 1> {
  if (flags.threshold !== undefined && !flags.ab) throw new UsageError('--threshold is for --ab.');
  const sides = flags.ab ? abSides(files, cliIo().argv) : null;
  checkDistinctFiles(
    sides
      ? [...sides.a.map((file) => ({ file, side: ' (in A)' })), ...sides.b.map((file) => ({ file, side: ' (in B)' }))]
      : files.map((file) => ({ file, side: '' })),
  );
  const rates = flags.rates === undefined ? null : ratesFromFile(flags.rates);
  // One at a time: each holds its kept events, and reading two at once would hold two files' worth of tokens too.
  // A turn of the event loop after each, and after analysing, lets a signal end the command at once.
  const traces: ParsedTrace[] = [];
  for (const file of files) {
    traces.push(await parseTraceFile(file));
    await nextTurn();
  }
  const options = { rates, toolVersion: packageVersion() };
  let document: AnalysisDocument;
  if (!sides) {
    checkOneLaunch(traces);
    document = analyzeTraces(traces, options);
  } else {
    document = abDocument(
      traces.filter((t) => sides.a.includes(t.file)),
      traces.filter((t) => sides.b.includes(t.file)),
      options,
      flags.threshold,
    );
  }
  await nextTurn();
  const out = await writeDocuments([
    { flag: 'json', target: flags.json, render: () => `${JSON.stringify(document, null, 2)}\n` },
    { flag: 'md', target: flags.md, render: () => renderAnalysisMarkdown(document) },
    { flag: 'html', target: flags.html, render: () => renderAnalysisHtml(document) },
    { flag: 'trace', target: flags.trace, render: () => renderAnalysisTrace(document, traces) },
  ]);
  out.write(renderAnalysis(document, outputColumns(out)));
  // As `compare`: exit 1 when B is slower somewhere.
  return document.verdicts?.some((v) => v.verdict === 'slower') ? 1 : 0;
}

/**
 * A's traces and B's: those before `--` and those after it (commander hands the operands over without it, so the
 * command line, `argv`, says where it was: every argument after it is a trace), or the two traces given without one.
 */
function abSides(files: readonly string[], argv: readonly string[]): { a: string[]; b: string[] } {
  const separator = argv.indexOf('--');
  const after = separator < 0 ? 0 : argv.length - separator - 1;
  if (after === 0) {
    if (files.length === 2) return { a: [files[0] as string], b: [files[1] as string] };
    throw new UsageError(
      `--ab judges two sides, A and B: ${files.length} trace${files.length === 1 ? '' : 's'} without -- between A's and B's.`,
      { hint: AB_USAGE },
    );
  }
  const a = files.slice(0, files.length - after);
  const b = files.slice(files.length - after);
  if (!a.length || !b.length)
    throw new UsageError(`--ab judges two sides, A and B: ${a.length ? 'no trace after --' : 'no trace before --'}.`, {
      hint: AB_USAGE,
    });
  if (a.length !== b.length) {
    throw new UsageError(
      `--ab pairs rank with rank: A has ${a.length} traces (${a.join(', ')}) and B ${b.length} (${b.join(', ')}).`,
      {
        hint: "Give each side every rank's trace of its launch, in any order: ranks are paired by their distributedInfo.rank, else in the order given.",
      },
    );
  }
  return { a, b };
}

/** Refuses a file given twice, under one name or two (a link, `./x`): it would be read as two ranks, or as A and B. */
function checkDistinctFiles(files: ReadonlyArray<{ readonly file: string; readonly side: string }>): void {
  const seen = new Map<string, { readonly file: string; readonly side: string }>();
  for (const given of files) {
    const { file } = given;
    let key: string;
    try {
      const stat = statSync(file);
      key = `${stat.dev}:${stat.ino}`;
    } catch {
      continue; // the reader names what is wrong with it
    }
    const first = seen.get(key);
    if (first !== undefined) {
      const sides = first.side === given.side ? first.side : `${first.side} and${given.side}`;
      const same =
        first.file === file ? `${file} is given twice${sides}` : `${first.file} and ${file} are one file${sides}`;
      throw new UsageError(`${same}: each trace is read once, as one rank of a launch (or of one side of --ab).`, {
        hint: `Give each rank's trace once. ${AB_USAGE}`,
      });
    }
    seen.set(key, given);
  }
}

/**
 * --ab's document: each side analysed as a launch of its own (its ranks' collective skew among themselves, never
 * across A and B), their devices, findings and notes together, and B's steps judged against A's, rank with rank.
 */
function abDocument(
  a: readonly ParsedTrace[],
  b: readonly ParsedTrace[],
  options: Parameters<typeof analyzeTraces>[1],
  threshold: number | undefined,
): AnalysisDocument {
  checkOneLaunch(a, "A's traces");
  checkOneLaunch(b, "B's traces");
  const before = analyzeTraces(a, options);
  const after = analyzeTraces(b, options);
  const judged = judgeSteps(
    before.devices,
    after.devices,
    separateRunsRule(threshold === undefined ? undefined : threshold / 100),
  );
  const steps = (doc: AnalysisDocument) => doc.devices.reduce((sum, d) => sum + d.steps.length, 0);
  const unlike = programNote(programShape(a, steps(before)), programShape(b, steps(after)));
  // Said where it is read first too: a verdict between two programs is not about a change.
  if (unlike) cliIo().stderr.write(`cuda-pipe: warning: ${unlike}\n`);
  const skew = (side: string, doc: AnalysisDocument) =>
    doc.collectives?.kind === 'measured'
      ? [
          `${side}'s collectives: arrival skew ${doc.collectives.skewMs.median.toFixed(3)} ms median, ${doc.collectives.skewMs.max.toFixed(3)} ms at most, over ${doc.collectives.count} calls`,
        ]
      : [];
  // The document's one `collectives` is a launch's; each side's is in a note instead.
  const { collectives: _, ...common } = before;
  return {
    ...common,
    devices: [...before.devices, ...after.devices],
    findings: [...before.findings, ...after.findings],
    notes: [
      ...new Set([
        ...(unlike ? [unlike] : []),
        ...before.notes,
        ...after.notes,
        ...skew('A', before),
        ...skew('B', after),
      ]),
    ],
    ...judged,
  };
}
