// npm test's pretest: type-check and compile to dist/ (then build the CLI from it into dist/cli/), check the layering
// (twice: every import, then folder cycles among the imports that load code) and run Biome, all at once. On two
// cores the type-check holds one core for most of the time while dependency-cruiser and Biome, which read the
// sources and not dist/, fit beside it on the other. tsc builds incrementally, so a run after a small change
// compiles only what the change touched; its build info lies in dist/test/unit/, which the bundle leaves out.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const buildInfo = join(dist, 'test', 'unit', 'tsconfig.tsbuildinfo');
const passedStamp = join(dist, 'test', 'unit', 'tsc-passed.stamp');

const filesUnder = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath ?? e.path, e.name))
    : [];

// What the runner (scripts/test.mjs) keeps from the last run: the times that order the next run, slowest first.
const runnerRecords = [join(dist, 'test', 'durations.json'), join(dist, 'test', 'cpu.tsv')];

// A compiled test whose source was deleted or renamed would still run under `node --test dist/test/*/*.test.js`:
// remove every file in dist/test that no file in test/ compiles to (x.ts gives x.js; an imported .json is copied).
for (const file of filesUnder(join(dist, 'test'))) {
  const source = join(root, relative(dist, file));
  const kept = [buildInfo, passedStamp, ...runnerRecords].includes(file);
  if (!kept && !existsSync(source.replace(/\.js$/, '.ts')) && !existsSync(source)) rmSync(file);
}

// tsc's build info records what it emitted, not whether the output is still there: where a compiled file is missing
// (dist/ cleaned by hand, say), drop the build info so that tsc emits everything again.
const sources = [
  ...filesUnder(join(root, 'src')),
  ...filesUnder(join(root, 'test')),
  ...readdirSync(join(root, 'scripts')).map((name) => join(root, 'scripts', name)),
].filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
if (sources.some((file) => !existsSync(join(dist, relative(root, file)).replace(/\.ts$/, '.js'))))
  rmSync(buildInfo, { force: true });

// Even with nothing to compile, tsc reads the whole program to find that out: 4 s of the loop on two cores. A stamp
// written after a type-check that passed lets the next run skip it when no source, tsconfig or installed package is
// newer; a failed check writes none, so its errors show again on the next run.
const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : Number.POSITIVE_INFINITY);
const inputs = [
  ...sources,
  join(root, 'tsconfig.json'),
  join(root, 'package-lock.json'),
  join(root, 'node_modules', '.package-lock.json'),
];
const typeChecked =
  existsSync(buildInfo) &&
  existsSync(passedStamp) &&
  inputs.every((file) => mtime(file) <= statSync(passedStamp).mtimeMs);

const bin = (name) => join(root, 'node_modules', '.bin', name);
const depcruiseCache = (folder) => ['--cache', folder, '--cache-strategy', 'content'];
const steps = [
  ...(typeChecked
    ? []
    : [['tsc', [bin('tsc'), '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', buildInfo]]]),
  // The package scripts' commands, run directly (npm adds half a second each), dependency-cruiser with its cache
  // (node_modules/.cache), which halves it when few files changed. The cache tells changed files by their contents,
  // not by asking git (its default): `npm test` must pass on a copy of the tree without .git, a tarball or a
  // `git archive` (issue 39), and reading the files is no slower than git's status here.
  [
    'layers',
    [
      bin('depcruise'),
      'src',
      '--config',
      '.dependency-cruiser.cjs',
      ...depcruiseCache(join('node_modules', '.cache', 'dependency-cruiser')),
    ],
  ],
  [
    'folder cycles',
    [
      bin('depcruise'),
      'src',
      '--config',
      '.dependency-cruiser-runtime.cjs',
      ...depcruiseCache(join('node_modules', '.cache', 'dependency-cruiser-runtime')),
    ],
  ],
  ['lint', [bin('biome'), 'check', '--error-on-warnings', 'src', 'test', 'scripts']],
];

// Each step's output is held and printed whole when it ends, so that the three do not interleave.
const run = ([name, [command, ...args]]) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => resolve({ name, ok: false, output: `${error.message}\n` }));
    child.on('close', (code, signal) =>
      resolve({ name, ok: code === 0, output: Buffer.concat(output).toString(), why: signal ?? `exit ${code}` }),
    );
  });

// The CLI's build (dist/cli/, scripts/bundle-cli.mjs), which the tests start, is made from dist/src once tsc wrote it.
const bundleCli = ['cli bundle', [process.execPath, join(root, 'scripts', 'bundle-cli.mjs')]];
const runSteps = async (step) => {
  const ran = await run(step);
  return step[0] === 'tsc' && ran.ok ? [ran, await run(bundleCli)] : [ran];
};
if (typeChecked) steps.push(bundleCli);

let failed = false;
const startedMs = Date.now();
for (const step of (await Promise.all(steps.map(runSteps))).flat()) {
  process.stdout.write(step.output);
  if (!step.ok) {
    failed = true;
    console.error(`pretest: ${step.name} failed (${step.why})`);
  }
  // Stamped with the time the check began: a source saved while tsc ran is newer, and is checked next time.
  if (step.name === 'tsc' && step.ok) {
    writeFileSync(passedStamp, '');
    utimesSync(passedStamp, startedMs / 1000, startedMs / 1000);
  }
}
if (typeChecked) console.log('pretest: no source changed since the last type-check passed: tsc skipped');
process.exit(failed ? 1 : 0);
