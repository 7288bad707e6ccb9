// The failed tests of a TAP log as node's test runner writes it, for scripts/test.mjs to print again at the end of
// `npm test`. Run alone, prints those of a saved log: node scripts/tap-failures.mjs FILE
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The failed tests of a TAP log, each as its path of suite names and its diagnostic block (at most 40 lines). A suite
 * that failed only because a test in it did is left out: its test is listed.
 */
export function failures(log) {
  const lines = log.split('\n');
  const names = [];
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      names.length = subtest[1].length / 4;
      names.push(subtest[2]);
      continue;
    }
    const failed = /^( *)not ok \d+ - /.exec(line);
    if (!failed) continue;
    const indent = failed[1];
    const block = [];
    if (lines[i + 1] === `${indent}  ---`) {
      for (let j = i + 2; j < lines.length && lines[j] !== `${indent}  ...`; j++)
        block.push(lines[j].slice(indent.length));
    }
    if (block.some((b) => b.includes("failureType: 'subtestsFailed'"))) continue;
    const path = names.slice(0, indent.length / 4 + 1).join(' > ');
    const shown = block.length > 40 ? [...block.slice(0, 40), `  (${block.length - 40} more lines)`] : block;
    found.push([`# not ok: ${path}`, ...shown].join('\n'));
  }
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file] = process.argv.slice(2);
  if (!file) throw new Error('pass a TAP log: node scripts/tap-failures.mjs FILE');
  const failed = failures(readFileSync(file, 'utf8'));
  console.log(failed.length ? failed.join('\n') : 'no test failed');
}
