// `schema` (which reads no Result) from two builds of one commit, whole processes in turns: this checkout's, and one
// made in a git worktree whose node_modules is a link to this checkout's, with scripts/bundle-cli.mjs as it was before
// it took string-width's real path (the worktree's build then runs `new Intl.Segmenter()` at every start).
// Usage: node docs/measurements/2026-11-29-escape-walk/linked.mjs LINKED_BUILD_ROOT [ROUNDS]
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [linked, rounds = '25'] = process.argv.slice(2);
const eager = (root) =>
  readdirSync(join(root, 'dist', 'cli')).filter(
    (f) => f.endsWith('.js') && readFileSync(join(root, 'dist', 'cli', f), 'utf8').includes('new Intl.Segmenter();'),
  ).length;
const bins = { 'this checkout': '.', 'linked worktree': linked };
for (const [name, root] of Object.entries(bins)) console.log(`${name}: ${eager(root)} chunk(s) build the segmenter at load`);
const env = { ...process.env, COLUMNS: '100', NO_COLOR: '1' };
delete env.NODE_EXTRA_CA_CERTS;
const times = Object.fromEntries(Object.keys(bins).map((k) => [k, []]));
for (let r = 0; r <= Number(rounds); r++)
  for (const [name, root] of Object.entries(bins)) {
    const start = performance.now();
    spawnSync(process.execPath, [join(root, 'bin', 'cuda-pipe'), 'schema'], { env, stdio: 'ignore' });
    if (r > 0) times[name].push(performance.now() - start);
  }
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, xs] of Object.entries(times)) console.log(`schema, ${name}: median ${median(xs).toFixed(1)} ms of ${xs.length}`);
