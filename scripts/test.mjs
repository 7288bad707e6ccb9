// npm test's runner: node's test runner over test/queue/'s workers, which share the compiled test files out among
// themselves (test/helpers/queue.ts), then the times each file took kept in dist/test/durations.json so that the next
// run starts the slowest first, and each file's wall and CPU milliseconds (its queue worker's, and its child
// processes') in dist/test/cpu.tsv, most CPU first. Extra arguments go to `node --test` (a reporter, say). Without a
// reporter of their own, the failed tests are printed again at the end, each with its error: a log that keeps only
// its last lines (CI's) still says which test failed and why.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { failures } from './tap-failures.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const workers = join(root, 'dist', 'test', 'queue');
const queue = mkdtempSync(join(tmpdir(), 'cuda-pipe-test-queue-'));
const files = readdirSync(workers)
  .filter((name) => name.endsWith('.test.js'))
  .map((name) => join(workers, name));

const extra = process.argv.slice(2);
const tap = join(queue, 'tap.txt');
// Node's own choice for stdout (spec on a terminal, TAP elsewhere), and TAP into a file for the summary.
const reporters = extra.some((arg) => arg.startsWith('--test-reporter'))
  ? []
  : [
      `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
    ];
const result = spawnSync(
  process.execPath,
  ['--single-threaded-gc', '--test', `--test-concurrency=${files.length}`, ...reporters, ...extra, ...files],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CUDA_PIPE_TEST_QUEUE: queue },
  },
);

const times = join(queue, 'times.tsv');
if (existsSync(times)) {
  const rows = readFileSync(times, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split('\t'));
  const durations = Object.fromEntries(rows.map(([file, ms]) => [file, Number(ms)]));
  writeFileSync(join(root, 'dist', 'test', 'durations.json'), `${JSON.stringify(durations, null, 1)}\n`);
  const cpu = (row) => Number(row[2]) + Number(row[3] || 0);
  const table = [['file', 'wall_ms', 'cpu_ms', 'children_cpu_ms'], ...rows.sort((a, b) => cpu(b) - cpu(a))];
  writeFileSync(join(root, 'dist', 'test', 'cpu.tsv'), `${table.map((row) => row.join('\t')).join('\n')}\n`);
}
if (existsSync(tap)) {
  const failed = failures(readFileSync(tap, 'utf8'));
  if (failed.length > 0) console.log(`\n# ${failed.length} failed:\n${failed.join('\n')}`);
}
rmSync(queue, { recursive: true, force: true });
process.exitCode = result.status ?? 1;
