// What the walk that escapes a Result's strings costs a start, within one build: `compare` and `report` of the
// committed fixtures as they are (no character to escape: the walk is skipped), against the same files with one
// string written as the JSON escape \u0041 ("A"), which takes the walk and changes nothing else. Whole processes in
// turns, NODE_EXTRA_CA_CERTS left out. Usage, from the checkout, built: node docs/measurements/2026-11-29-escape-walk/walk.mjs [ROUNDS]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const rounds = Number(process.argv[2] ?? 41);
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-walk-'));
const walked = (name) => {
  const text = readFileSync(join('test', 'fixtures', name), 'utf8');
  const out = join(dir, name);
  // The config's name, "balanced", written with its first letter escaped: "\u0062alanced" parses to the same.
  writeFileSync(out, text.replace('"name": "balanced"', '"name": "\\u0062alanced"'));
  if (readFileSync(out, 'utf8') === text) throw new Error(`${name}: no config name to escape`);
  return out;
};
const fixture = (name) => join('test', 'fixtures', name);
const commands = {
  'compare, skipped': ['compare', fixture('h100-balanced-1.json'), fixture('h100-balanced-2.json')],
  'compare, walked': ['compare', walked('h100-balanced-1.json'), walked('h100-balanced-2.json')],
  'report, skipped': ['report', fixture('h200-balanced-16-traced.json')],
  'report, walked': ['report', walked('h200-balanced-16-traced.json')],
};
const env = { ...process.env, COLUMNS: '100', NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
for (let r = 0; r <= rounds; r++)
  for (const [name, args] of Object.entries(commands)) {
    const start = performance.now();
    const run = spawnSync(process.execPath, ['bin/cuda-pipe', ...args], { env, stdio: 'ignore' });
    if (run.status !== 0) throw new Error(`${name} exited ${run.status}`);
    if (r > 0) times[name].push(performance.now() - start);
  }
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${rounds} rounds in turns, medians of whole processes, ms`);
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(18)} ${median(xs).toFixed(1)}`);
