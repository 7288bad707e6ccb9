// See scripts/perf-regression. Plain JavaScript so that it runs with the bundle's Node.js and no TypeScript loader.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const DEFAULT_CONFIGS = ['balanced', 'copy-bound', 'async-overlap', 'multi-kernel'].map((n) => join(root, 'configs', `${n}.yaml`));

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'update-baseline': { type: 'boolean', default: false },
    baselines: { type: 'string', default: join(root, 'baselines') },
    out: { type: 'string', default: join(process.cwd(), 'perf-results') },
    md: { type: 'string' },
    threshold: { type: 'string', default: '5' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(`usage: scripts/perf-regression [--update-baseline] [--baselines DIR] [--out DIR] [--md FILE] [--threshold PERCENT] [config.yaml ...]
Runs each config (default: ${DEFAULT_CONFIGS.map((c) => basename(c)).join(', ')}), writes OUT/results.json, and compares it
with BASELINES/<gpu-model>/results.json. Exit codes are cuda-pipe compare's: 0 no slowdown, 1 slower, 2 no baseline or bad files.
`);
  process.exit(0);
}

const cli = join(root, 'dist', 'src', 'cli', 'main.js');
if (!existsSync(cli)) fail(`the compiled CLI is missing at ${cli}: run \`npm ci\` (or \`npm run build\`) first`, 3);
const configs = positionals.length ? positionals.map((c) => resolve(c)) : DEFAULT_CONFIGS;
mkdirSync(values.out, { recursive: true });

const results = [];
for (const config of configs) {
  const file = join(values.out, `${basename(config, '.yaml')}.json`);
  process.stderr.write(`perf-regression: running ${config}\n`);
  const run = cudaPipe(['run', config, '--json', file]);
  if (run !== 0) fail(`cuda-pipe run ${config} exited ${run}`, run);
  results.push(JSON.parse(readFileSync(file, 'utf8')));
}
const combined = join(values.out, 'results.json');
writeFileSync(combined, JSON.stringify(results, null, 2) + '\n');

// Result version 2 lists its devices; version 1 (cuda-pipe 0.1.0) had one under environment.
const deviceName = (results[0].devices?.[0] ?? results[0].environment.device).name;
const model = deviceName.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
const baseline = join(values.baselines, model, 'results.json');
if (values['update-baseline']) {
  mkdirSync(dirname(baseline), { recursive: true });
  copyFileSync(combined, baseline);
  process.stderr.write(`perf-regression: wrote the baseline ${baseline}\n`);
  process.exit(0);
}
if (!existsSync(baseline)) fail(`no baseline for ${deviceName} at ${baseline}; record one with --update-baseline`, 2);
process.exit(cudaPipe(['compare', baseline, combined, '--threshold', values.threshold, ...(values.md ? ['--md', values.md] : [])]));

function cudaPipe(args) {
  const child = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' });
  return child.status ?? 4;
}

function fail(message, code) {
  process.stderr.write(`perf-regression: ${message}\n`);
  process.exit(code);
}
