#!/usr/bin/env node
// Writes build/cuda-pipe-linux-x64.tar.xz: the Node.js runtime that runs this script, the compiled tool (dist/),
// production dependencies (with only koffi's linux-x64 glibc binary), kernels/, configs/ and the compiled GPU
// test suite. Unpacked anywhere on an x86-64 Linux machine with CUDA, it runs with nothing else installed:
//   cuda-pipe/bin/cuda-pipe probe
//   cuda-pipe/bin/cuda-pipe-gpu-tests
//   cuda-pipe/scripts/perf-regression
// Run through `npm run bundle`, which compiles first.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const buildDir = join(root, 'build');
const stage = join(buildDir, 'stage', 'cuda-pipe');
const archive = join(buildDir, 'cuda-pipe-linux-x64.tar.xz');
const LIMIT_BYTES = 40 * 1024 * 1024;

if (process.platform !== 'linux' || process.arch !== 'x64') {
  throw new Error(
    `the bundle carries this Node.js binary, so it must be built on linux-x64 (this is ${process.platform}-${process.arch})`,
  );
}
if (!existsSync(join(root, 'dist', 'cli', 'cuda-pipe.js')))
  throw new Error('dist/ is missing: run `npm run build` first');

rmSync(join(buildDir, 'stage'), { recursive: true, force: true });
mkdirSync(join(stage, 'bin'), { recursive: true });

cpSync(process.execPath, join(stage, 'bin', 'node'));
// The unit and property tests compiled by `npm test` need a development machine: the bundle carries the GPU suite.
// A compiled test whose source was moved or deleted stays in dist/ until `npm test`'s pretest removes it: the GPU suite
// would run it twice, or run what no longer exists, so a test is carried only where its source still is.
const hasSource = (file) =>
  !file.endsWith('.test.js') || existsSync(join(root, relative(join(root, 'dist'), file)).replace(/\.js$/, '.ts'));
cpSync(join(root, 'dist'), join(stage, 'dist'), {
  recursive: true,
  filter: (file) =>
    !/[\\/]dist[\\/]test[\\/](unit|property)([\\/]|$)/.test(file) &&
    !/[\\/]dist[\\/]src[\\/]kinds[\\/].*(?<!\.gpu)\.test\.js$/.test(file) &&
    hasSource(file),
});
// The CLI's build (dist/cli/) holds the worker pool but not its worker script, a separate entry that every worker
// thread starts by path: dist/src/kinds/host/workers/worker.js and its imports, which dist/src carries.
const WORKER_SCRIPT = join(stage, 'dist', 'src', 'kinds', 'host', 'workers', 'worker.js');
if (!existsSync(WORKER_SCRIPT))
  throw new Error(`the host stage's worker script is missing from the bundle (${relative(root, WORKER_SCRIPT)})`);
for (const item of [
  'kernels',
  'configs',
  'baselines',
  'package.json',
  'README.md',
  'scripts/perf-regression',
  'scripts/perf-regression.mjs',
  'scripts/verdict-files.mjs',
  'scripts/gpu/toolbox.sh',
]) {
  cpSync(join(root, item), join(stage, item), { recursive: true });
}
// The README's reference pages travel with it (their pictures too); the measurements they cite stay in the repository.
cpSync(join(root, 'docs'), join(stage, 'docs'), {
  recursive: true,
  filter: (file) => !/[\\/]docs[\\/]measurements([\\/]|$)/.test(file),
});
// tsc compiles the GPU tests but does not copy their kernels and configs.
cpSync(join(root, 'test', 'gpu', 'fixtures'), join(stage, 'dist', 'test', 'gpu', 'fixtures'), { recursive: true });
// The host stage's GPU tests load a user's stage module from the repository's fixtures, as a config names one.
cpSync(join(root, 'test', 'fixtures', 'workers'), join(stage, 'test', 'fixtures', 'workers'), { recursive: true });

const NATIVE_SOURCES = /\.(cc|hh|h|inc|c|cpp)$|CMakeLists\.txt$/;
/**
 * What src/traces/formats/nsys/sqlite.ts loads from sql.js (its package.json for resolving, the licence), and the
 * folder that holds them.
 */
const SQL_JS_KEPT = /^(|package\.json|LICENSE|dist|dist\/sql-wasm\.js|dist\/sql-wasm\.wasm)$/;
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.startsWith('node_modules/') || entry.dev) continue;
  const from = join(root, path);
  if (!existsSync(from)) continue; // optional packages for other platforms are not installed
  const name = path.slice('node_modules/'.length);
  if (name.startsWith('@koromix/') && name !== '@koromix/koffi-linux-x64') continue;
  cpSync(from, join(stage, path), {
    recursive: true,
    filter: (file) => {
      const rel = relative(from, file);
      if (name === 'koffi') return !/^(vendor|doc|lib)(\/|$)/.test(rel) && !NATIVE_SOURCES.test(basename(file));
      if (name === '@koromix/koffi-linux-x64') return !rel.startsWith('musl_x64');
      // sql.js is 30 MB of builds for browsers, workers and asm.js; analyze loads only the WebAssembly build for Node.
      if (name === 'sql.js') return SQL_JS_KEPT.test(rel);
      return true;
    },
  });
}

writeWrapper('cuda-pipe', '"$here/node" "$root/dist/cli/cuda-pipe.js" "$@"');
// One test file at a time: the GPU is one, and a file's spinning or timed kernels would skew another's figures.
// Every test has a deadline (a hung one fails, saying so, and the suite goes on): the longest GPU test takes about 2
// minutes.
writeWrapper(
  'cuda-pipe-gpu-tests',
  '"$here/node" --test --test-concurrency=1 --test-timeout=300000 --test-reporter=spec "$root"/dist/test/gpu/*.test.js "$root"/dist/src/kinds/*/*.gpu.test.js',
);

execFileSync('tar', ['-cf', archive, '-I', 'xz -6 -T0', '-C', dirname(stage), 'cuda-pipe'], { stdio: 'inherit' });
rmSync(join(buildDir, 'stage'), { recursive: true, force: true });
const size = statSync(archive).size;
const mib = (size / 2 ** 20).toFixed(1);
if (size > LIMIT_BYTES) throw new Error(`${archive} is ${mib} MiB, over the 40 MiB limit`);
process.stdout.write(`wrote ${relative(root, archive)} (${mib} MiB)\n`);

function writeWrapper(name, command) {
  const path = join(stage, 'bin', name);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      '# Runs cuda-pipe with the Node.js shipped beside it; nothing else needs to be installed.',
      'here=$(cd "$(dirname "$0")" && pwd)',
      'root=$(dirname "$here")',
      `exec ${command}`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
}
