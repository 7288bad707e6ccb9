// Re-judges recorded H200 Results and A/B documents by the one verdict rule (src/compare/rule.ts), beside the noise
// rule it replaced. Run from the repository root:
//   git show b15a4ce:src/compare/verdict.ts | sed "s#'\.\./#'$PWD/src/#g" > /tmp/old-verdict.ts
//   node --import tsx docs/measurements/2026-11-27-verdicts/rejudge.ts /tmp/old-verdict.ts > docs/measurements/2026-11-27-verdicts/rejudged.txt
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { logRatios, pairedEstimate, pairedMeasured } from '../../../src/compare/paired.js';
import { judge, pairedRule } from '../../../src/compare/rule.js';
import { compareResults } from '../../../src/compare/verdict.js';
import { loadDocument, loadResults } from '../../../src/result/load.js';

const root = process.cwd();
const old = (await import(process.argv[2] as string)) as { compareResults: typeof compareResults };
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%`;
const baselinePath = 'baselines/nvidia-h200/results.json';
const baseline = loadResults(baselinePath);
const M = 'docs/measurements/2026-11-23-h200-issues15-16';

console.log(`# ${baselinePath} (stored H200 baseline) against later H200 runs: noise rule (old) and the one rule (new, band ±1%, 90% Hodges-Lehmann/Moses interval)`);
console.log('file\tmode\tn base/cand\told verdict\told change (medians)\told needed\tquartiles base | cand\tnew verdict\tnew estimate (interval)\tswapped new');
const cases: Array<[string, string]> = [
  [`${M}/bound/run-copy-bound-1.json`, 'overlapped:16x4:depth-first:chunk-per-stream'],
  [`${M}/bound/run-copy-bound-2.json`, 'overlapped:16x4:depth-first:chunk-per-stream'],
  ['test/fixtures/h200-balanced-16-traced.json', 'bidirectional'],
  [`${M}/bound/run-copy-bound-2.json`, 'bidirectional'],
  [`${M}/bound-final/run-async-overlap-1.json`, 'kernel:sincos'],
  [`${M}/bound-final/run-async-overlap-1.json`, 'kernels-chunked:4x4:depth-first:chunk-per-stream'],
  [`${M}/bound/run-async-overlap-2.json`, 'kernel:sincos'],
  [`${M}/bound/run-multi-kernel-2.json`, 'overlapped:16x4:depth-first:chunk-per-stream'],
  [`${M}/bound/run-copy-bound-1.json`, 'serial'],
];
for (const [file, mode] of cases) {
  const candidate = loadResults(file);
  const [o, n, s] = [old.compareResults(baseline, candidate), compareResults(baseline, candidate), compareResults(candidate, baseline)].map((c) => c.pairs.find((p) => p.mode === mode));
  if (!o || !n || !s) throw new Error(`${mode} not in ${file}`);
  const range = (p: typeof n) => (p.interval ? `${pct(p.interval.estimate)} (${pct(p.interval.low)} to ${pct(p.interval.high)})` : 'none');
  const q = `${n.baseline.q1.toFixed(4)}-${n.baseline.q3.toFixed(4)} | ${n.candidate.q1.toFixed(4)}-${n.candidate.q3.toFixed(4)}`;
  console.log([file, mode, `${n.baseline.n}/${n.candidate.n}`, o.verdict, pct(o.change), pct(o.needed), q, n.verdict, range(n), `${s.verdict} ${range(s)}`].join('\t'));
}

console.log('\n# every pair of every H200 Result under docs/measurements and test/fixtures against the baseline: old verdict -> new verdict');
const files: string[] = [];
const walk = (dir: string) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (path.endsWith('.json')) files.push(path);
  }
};
walk(join(root, 'docs', 'measurements'));
walk(join(root, 'test', 'fixtures'));
const tally = new Map<string, number>();
let compared = 0;
for (const file of files.sort()) {
  const text = readFileSync(file, 'utf8');
  if (!text.includes('H200') || !text.includes('"modes"')) continue;
  let results: ReturnType<typeof loadResults>;
  try {
    results = loadResults(file);
  } catch {
    continue;
  }
  const [o, n] = [old.compareResults(baseline, results), compareResults(baseline, results)];
  if (!n.pairs.length) continue;
  compared++;
  n.pairs.forEach((p, i) => {
    const key = `${o.pairs[i]?.verdict} -> ${p.verdict}${p.gating ? '' : ' (info)'}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
  });
}
console.log(`${compared} files`);
for (const [key, count] of [...tally].sort()) console.log(`${key}\t${count}`);

console.log(`\n# ${M}/verdicts (bench-verdicts.sh, compute-bound at 32 MiB): compare against verdicts/baseline.json, 10 rounds each`);
console.log('experiment\tround\told exit\tnew verdict\tnew exit\tnew gating slower\tnew gating faster (estimate)');
const first = loadResults(`${M}/verdicts/baseline.json`);
for (const experiment of ['heavier3', 'base']) {
  for (let round = 1; round <= 10; round++) {
    const candidate = loadResults(`${M}/verdicts/run-${experiment}-${round}.json`);
    const [o, n] = [old.compareResults(first, candidate), compareResults(first, candidate)];
    const oldExit = o.pairs.some((p) => p.gating && p.verdict === 'slower') ? 1 : 0;
    const newExit = n.verdict === 'slower' || n.verdict === 'mixed' ? 1 : 0;
    const slower = n.pairs.filter((p) => p.gating && p.verdict === 'slower').map((p) => p.mode.split(':')[0]);
    const faster = n.pairs.filter((p) => p.gating && p.verdict === 'faster').map((p) => `${p.mode.split(':')[0]} ${pct(p.interval?.estimate ?? 0)}`);
    console.log([`compare-${experiment}`, round, oldExit, n.verdict, newExit, slower.join(',') || 'none', faster.join(', ') || 'none'].join('\t'));
  }
}

console.log('\n# the same folder\'s ab documents, their stored pairs judged again at the ±0.5% band (90% sign-test interval)');
console.log('# (the pairs stopped where the noise rule decided; under the new rule a noisy mode would have taken more pairs)');
console.log('experiment\tmode\tstored verdicts (noise rule)\tnew verdicts on the stored pairs');
for (const experiment of ['base', 'heavier1', 'heavier3']) {
  const rows = new Map<string, { old: string[]; now: string[] }>();
  for (let round = 1; round <= 10; round++) {
    const document = loadDocument(`${M}/verdicts/ab-${experiment}-${round}.json`);
    if (document.kind !== 'ab') throw new Error('not an A/B document');
    for (const mode of document.ab.modes.filter((m) => m.gating)) {
      const rule = pairedRule();
      const now = judge(pairedMeasured(pairedEstimate(logRatios(mode.aMs, mode.bMs), rule.confidence), rule.confidence), rule);
      const row = rows.get(mode.id) ?? { old: [], now: [] };
      row.old.push(mode.verdict);
      row.now.push(now);
      rows.set(mode.id, row);
    }
  }
  const count = (vs: string[]) => ['slower', 'faster', 'same', 'noisy'].map((v) => `${vs.filter((x) => x === v).length} ${v}`).join(', ');
  for (const [mode, row] of rows) console.log([`ab-${experiment}`, mode.split(':')[0], count(row.old), count(row.now)].join('\t'));
}
