#!/usr/bin/env node
// Scores per file, per folder and overall from one or more Stryker JSON reports (incremental files are reports too),
// as Stryker counts them: detected (killed + timed out) over valid mutants (detected + survived + no coverage).
// Usage: node scripts/mutation/summary.mjs .stryker/a.json [.stryker/b.json ...]
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { count } from './score.mjs';

const files = new Map();
for (const path of process.argv.slice(2)) {
  const report = JSON.parse(readFileSync(path, 'utf8'));
  for (const [name, file] of Object.entries(report.files)) files.set(name, file.mutants);
}
const row = (name, c) =>
  `| ${name} | ${c.valid} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} | ${c.score.toFixed(1)}% |`;
const lines = [
  '| where | mutants | killed | timed out | survived | no coverage | score |',
  '| --- | --- | --- | --- | --- | --- | --- |',
];
const folders = new Map();
for (const [name, mutants] of [...files].sort()) {
  folders.set(dirname(name), [...(folders.get(dirname(name)) ?? []), ...mutants]);
  lines.push(row(name, count(mutants)));
}
for (const [folder, mutants] of folders) lines.push(row(`**${folder}/**`, count(mutants)));
lines.push(row('**all**', count([...files.values()].flat())));
console.log(lines.join('\n'));
const survivors = [...files].flatMap(([name, mutants]) =>
  mutants
    .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
    .map(
      (m) =>
        `${name}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} ${m.status}${m.replacement !== undefined ? ` → ${JSON.stringify(m.replacement).slice(0, 80)}` : ''}`,
    ),
);
if (process.argv.includes('--survivors') || survivors.length)
  console.log(`\nSurvived or not covered (${survivors.length}):\n${survivors.join('\n')}`);
