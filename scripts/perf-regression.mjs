// See scripts/perf-regression. Plain JavaScript so that it runs with the bundle's Node.js and no TypeScript loader.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { joinVerdictFiles } from './verdict-files.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const DEFAULT_CONFIGS = ['balanced', 'copy-bound', 'async-overlap', 'multi-kernel'].map((n) =>
  join('configs', `${n}.yaml`),
);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    ab: { type: 'string' },
    'update-baseline': { type: 'boolean', default: false },
    baselines: { type: 'string', default: join(root, 'baselines') },
    out: { type: 'string', default: join(process.cwd(), 'perf-results') },
    md: { type: 'string' },
    junit: { type: 'string' },
    csv: { type: 'string' },
    bmf: { type: 'string' },
    gab: { type: 'string' },
    threshold: { type: 'string' },
    'max-time': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(`usage: scripts/perf-regression --ab BASE [--out DIR] [--md FILE] [FORMATS] [--threshold PERCENT] [--max-time SECONDS]
                               [config.yaml ...]
       scripts/perf-regression [--update-baseline] [--baselines DIR] [--out DIR] [--md FILE] [FORMATS] [--threshold PERCENT]
                               [config.yaml ...]
--ab BASE: BASE is a checkout of the base revision. Each config (default: ${DEFAULT_CONFIGS.join(', ')}, paths relative to
  each tree's root) runs as \`cuda-pipe ab\`: the base revision's config and kernels (A) against this tree's (B), compiled
  and allocated once, their reps interleaved on this GPU. Only the modes a user acts on are judged; writes OUT/ab-<config>.json.
Without --ab: runs each config, writes OUT/results.json and compares it with BASELINES/<gpu-model>/results.json (the
  stored history; machines of one model still differ by several per cent, so prefer --ab as a gate).
--threshold PERCENT: the equivalence band ±δ of the one verdict rule (default 0.5 for ab's pairs, 1 for compare):
  same only when the 90% interval of the change lies inside it, slower when the interval is clear of no change and
  the estimate passes it, otherwise noisy (docs/measuring.md).
FORMATS: --junit FILE (JUnit XML: a test case per gated mode, failed when slower), --csv FILE, --bmf FILE (Bencher),
  --gab FILE (github-action-benchmark): every config's verdicts in one file each, as cuda-pipe compare and ab write them.
Exit codes are cuda-pipe compare's: 0 no slowdown, 1 slower (or mixed), 2 no baseline or bad files, 3 no GPU (the first
  config that finds none ends the gate: every other would find none too).
`);
  process.exit(0);
}

const cli = join(root, 'dist', 'cli', 'cuda-pipe.js');
if (!existsSync(cli)) fail(`the compiled CLI is missing at ${cli}: run \`npm ci\` (or \`npm run build\`) first`, 3);
const configs = positionals.length ? positionals : DEFAULT_CONFIGS;
mkdirSync(values.out, { recursive: true });
const shared = [...(values.threshold ? ['--threshold', values.threshold] : [])];
// The verdicts' formats for CI (cuda-pipe compare and ab write each; the A/B mode joins its configs' files into one).
const FORMATS = { junit: 'junit.xml', csv: 'csv', bmf: 'bmf.json', gab: 'gab.json' };
const asked = Object.keys(FORMATS).filter((format) => values[format] !== undefined);

if (values.ab) process.exit(abMode(resolve(values.ab)));

const results = [];
for (const config of configs.map((c) => (isAbsolute(c) || existsSync(c) ? resolve(c) : join(root, c)))) {
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
const model = deviceName
  .toLowerCase()
  .replace(/[^a-z0-9]+/g, '-')
  .replace(/^-|-$/g, '');
const baseline = join(values.baselines, model, 'results.json');
if (values['update-baseline']) {
  mkdirSync(dirname(baseline), { recursive: true });
  copyFileSync(combined, baseline);
  process.stderr.write(`perf-regression: wrote the baseline ${baseline}\n`);
  process.exit(0);
}
if (!existsSync(baseline)) fail(`no baseline for ${deviceName} at ${baseline}; record one with --update-baseline`, 2);
process.exit(
  cudaPipe([
    'compare',
    baseline,
    combined,
    ...shared,
    ...(values.md ? ['--md', values.md] : []),
    ...asked.flatMap((f) => [`--${f}`, values[f]]),
  ]),
);

/**
 * Each side's configs are staged in a folder of their own with that side's kernel sources beside them: a config
 * looks for `source: x.cu` beside itself before the installed kernels, so A runs the base revision's kernels and B
 * this tree's, whichever cuda-pipe runs them.
 */
function stage(tree, side) {
  const folder = join(values.out, 'ab', side);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  if (existsSync(join(tree, 'configs'))) cpSync(join(tree, 'configs'), folder, { recursive: true });
  const kernels = join(tree, 'kernels');
  if (existsSync(kernels)) {
    for (const name of readdirSync(kernels).filter((n) => n.endsWith('.cu') || n.endsWith('.cuh'))) {
      if (!existsSync(join(folder, name))) copyFileSync(join(kernels, name), join(folder, name));
    }
  }
  return (config) => {
    const source = join(tree, config);
    if (!existsSync(source)) return null;
    const inConfigs = relative(join(tree, 'configs'), source);
    if (!inConfigs.startsWith('..') && !isAbsolute(inConfigs)) return join(folder, inConfigs);
    // A config outside configs/ is staged beside the others, so that it finds the same kernels.
    const staged = join(folder, basename(config));
    copyFileSync(source, staged);
    return staged;
  };
}

function abMode(base) {
  if (!existsSync(base))
    fail(
      `--ab ${base}: no such folder; check the base revision out there first (git worktree add ${base} <base-sha>)`,
      2,
    );
  const [a, b] = [stage(base, 'base'), stage(root, 'head')];
  const reports = [];
  const codes = [];
  const written = Object.fromEntries(asked.map((format) => [format, []]));
  let noGpu = false;
  for (const config of configs) {
    const [pathA, pathB] = [a(config), b(config)];
    if (!pathB) fail(`${config} is not in this tree (${root})`, 2);
    if (!pathA) {
      process.stderr.write(`perf-regression: ${config} is new since the base revision: nothing to gate it against\n`);
      reports.push(`### ${config}: new since the base revision, not gated\n`);
      continue;
    }
    if (noGpu) {
      reports.push(`### ${config}: not run, cuda-pipe could not run here (exit 3 above)\n`);
      continue;
    }
    const name = basename(config, '.yaml');
    const md = join(values.out, `ab-${name}.md`);
    const files = Object.fromEntries(
      asked.map((format) => [format, join(values.out, `ab-${name}.${FORMATS[format]}`)]),
    );
    process.stderr.write(`perf-regression: ab ${config} (base against head, interleaved)\n`);
    const code = cudaPipe([
      'ab',
      pathA,
      pathB,
      '--json',
      join(values.out, `ab-${name}.json`),
      '--md',
      md,
      ...shared,
      ...(values['max-time'] ? ['--max-time', values['max-time']] : []),
      ...asked.flatMap((format) => [`--${format}`, files[format]]),
    ]);
    if (existsSync(md)) reports.push(readFileSync(md, 'utf8'));
    for (const format of asked)
      if (existsSync(files[format])) written[format].push(readFileSync(files[format], 'utf8'));
    codes.push(code);
    // No driver, no device, no libcudart: the same for every config, so its paragraph is printed once, not per config.
    if (code === 3) {
      noGpu = true;
      const left = configs.length - configs.indexOf(config) - 1;
      if (left)
        process.stderr.write(
          `perf-regression: ${left} more config${left === 1 ? '' : 's'} not run: cuda-pipe cannot run here (above)\n`,
        );
    }
  }
  if (values.md) writeFileSync(values.md, reports.join('\n'));
  for (const format of asked) writeFileSync(values[format], joinVerdictFiles(format, written[format]));
  // A failure to measure outranks a slowdown: the gate could not judge.
  return codes.find((c) => c > 1) ?? (codes.includes(1) ? 1 : 0);
}

function cudaPipe(args) {
  const child = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' });
  return child.status ?? 4;
}

function fail(message, code) {
  process.stderr.write(`perf-regression: ${message}\n`);
  process.exit(code);
}
