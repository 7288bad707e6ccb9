// Each file's latest score from several Stryker JSON reports, over a whole-scope summary (summary.mjs's Markdown):
// where focused runs measured files one group at a time, with narrowed test lists, this says where each file stands
// and what the scope would score if each file's latest figure held. It is a composite, not a run: the figures come
// from different commits and lists (a narrowed list gives a lower bound). A report counts for a file only where it
// covered some of that file's mutants; later reports win.
// Usage: node scripts/mutation/combine.mjs SUMMARY.md REPORT.json...
import { readFileSync } from 'node:fs';
import { count } from './score.mjs';

const [summary, ...reports] = process.argv.slice(2);
if (!summary || !reports.length) throw new Error('usage: combine.mjs SUMMARY.md REPORT.json...');

const pct = (s) => (100 * s.detected) / s.valid;

const latest = new Map();
for (const report of reports) {
  const { files } = JSON.parse(readFileSync(report, 'utf8'));
  for (const [file, data] of Object.entries(files)) {
    if (data.mutants.some((m) => m.status !== 'NoCoverage')) latest.set(file, { ...count(data.mutants), from: report });
  }
}

const row = /^\| (src\/[^ ]+\.ts) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+)% \|$/gm;
const lines = [
  '| file | mutants then | score then | mutants now | score now | from |',
  '| --- | --- | --- | --- | --- | --- |',
];
let valid = 0;
let detected = 0;
const under = [];
for (const [, file, n, killed, timedOut] of readFileSync(summary, 'utf8').matchAll(row)) {
  const then = { valid: Number(n), detected: Number(killed) + Number(timedOut), from: summary };
  const now = latest.get(file) ?? then;
  valid += now.valid;
  detected += now.detected;
  if (pct(now) < 80) under.push(`${file} ${pct(now).toFixed(1)}%`);
  lines.push(
    `| ${file} | ${then.valid} | ${pct(then).toFixed(1)}% | ${now.valid} | ${pct(now).toFixed(1)}% | ${now.from} |`,
  );
}
console.log(lines.join('\n'));
console.log(
  `\n${lines.length - 2} files, ${valid} mutants, ${detected} detected: ${((100 * detected) / valid).toFixed(1)}%`,
);
console.log(`${under.length} under 80%: ${under.join('; ')}`);
