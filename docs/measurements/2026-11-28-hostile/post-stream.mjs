// How long `analyze` holds a signal off after a trace's last event: the parse of its kept events and the analysis are
// one synchronous pass each. A CPU profile of `analyze` over big-trace-bench.mjs's 100 MB trace (218,672 kept events),
// each function's inclusive seconds. Run from the repository root after `npm run build`:
//
//   node scripts/analyze/big-trace-bench.mjs --sizes 100 --gzip '' --dir /tmp/cuda-pipe-big-traces --log /dev/null
//   node docs/measurements/2026-11-28-hostile/post-stream.mjs /tmp/cuda-pipe-big-traces/kineto-100mb.json >> docs/measurements/2026-11-28-hostile/post-stream.log
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const [trace] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-prof-'));
spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, 'dist/cli/cuda-pipe.js', 'analyze', trace], { stdio: 'ignore' });
const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const inclusive = new Map();
for (const [id, us] of self) {
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const name = byId.get(at).callFrame.functionName;
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
}
const line = ['streamTrace', 'parseKineto', 'analyzeTraces', 'renderAnalysis'].map((name) => `${name} ${((inclusive.get(name) ?? 0) / 1e6).toFixed(2)} s`).join(', ');
process.stdout.write(`${new Date().toISOString()} ${trace}: ${line}; load ${loadavg()[0].toFixed(2)}\n`);
