import { analyzeTraces } from '../analyze/analyze.js';
import { parseTraceFile } from '../analyze/parse.js';
import { ratesFromFile } from '../analyze/rates.js';
import { packageVersion } from '../paths.js';
import { renderAnalysis } from '../report/analyze.js';
import { outputColumns } from '../report/width.js';
import { writeDocuments } from './write-file.js';

/**
 * `cuda-pipe analyze <trace…>`: each trace (one per rank) read, analysed per device and step, and the analysis
 * printed; `--json` writes the document. Every file is read and checked before anything is written, so a bad trace
 * exits 2 with nothing half done.
 */
export async function analyzeCommand(files: string[], flags: { json?: string; rates?: string }): Promise<0> {
  const rates = flags.rates === undefined ? null : ratesFromFile(flags.rates);
  const traces = files.map((file) => parseTraceFile(file));
  const document = analyzeTraces(traces, { rates, toolVersion: packageVersion() });
  const out = await writeDocuments([{ flag: 'json', target: flags.json, render: () => `${JSON.stringify(document, null, 2)}\n` }]);
  out.write(renderAnalysis(document, outputColumns(out)));
  return 0;
}
