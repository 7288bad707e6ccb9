// Where a start of `report` and `compare` goes, in phases timed inside the process: Node.js's own start (until a
// preloaded file runs), reading the CLI's chunks and their code caches, V8 taking each chunk with its cache
// (vm.Script), and the rest (running the chunks' top levels, zod building its schemas among them, the command's own
// work, and garbage collection throughout), each the median of N processes. Garbage collection is not split out:
// PerformanceObserver's gc entries arrive on a later turn of the event loop, which a command that has finished
// may not take, and --trace-gc is a V8 flag, under which V8 refuses the code cache. Issue 40
// section 3 asks for 200 ms; this says what the time is made of. The preload's own cost is small (a few wrappers), and
// a process timed whole by scripts/bench/start.mjs is the figure to quote against the target.
// Usage: node scripts/bench/start-phases.mjs [--runs N] [--bin FILE]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { COMPARE_ARGS, readFlags, REPORT_ARGS, root, startEnv } from './start-commands.mjs';

const { flag, runs } = readFlags(process.argv.slice(2));
const bin = flag('--bin', join(root, 'bin', 'cuda-pipe'));

// The preload: it wraps vm.Script and fs.readFileSync, and at exit prints one JSON line of phases.
const PRELOAD = `
const vm = require('node:vm'); const fs = require('node:fs');
const phases = { boot: performance.now(), read: 0, compile: 0, chunks: 0 };
let loading = null;
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(source, options) { const t = performance.now(); super(source, options); phases.compile += performance.now() - t; phases.chunks += 1; loading = performance.now(); }
};
const readFileSync = fs.readFileSync;
fs.readFileSync = function (file, ...rest) {
  const t = performance.now(); try { return readFileSync.call(this, file, ...rest); } finally {
    if (typeof file === 'string' && file.includes('/dist/cli/')) phases.read += performance.now() - t; }
};
process.on('exit', () => { phases.lastChunk = loading; phases.exit = performance.now(); process.stderr.write('PHASES ' + JSON.stringify(phases) + '\\n'); });
`;
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-phases-'));
const preload = join(dir, 'phases.cjs');
writeFileSync(preload, PRELOAD);

const COMMANDS = [REPORT_ARGS, COMPARE_ARGS];
const env = startEnv();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const commit = spawnSync('git', ['-C', join(dirname(bin), '..'), 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
console.log(`cuda-pipe start phases: ${relative(process.cwd(), bin) || bin} at ${commit.stdout.trim() || 'unknown'}`);
console.log(`node ${process.version}, ${runs} processes a command after one not counted; medians in ms`);
console.log('');
console.log('command    boot  read compile   rest  (of it after the last chunk)   exit  chunks');
for (const command of COMMANDS) {
  const samples = [];
  for (let i = 0; i <= runs; i++) {
    const run = spawnSync(process.execPath, ['-r', preload, bin, ...command], { env, encoding: 'utf8' });
    const line = run.stderr.split('\n').find((l) => l.startsWith('PHASES '));
    if (run.status !== 0 || !line) throw new Error(`${command.join(' ')} exited ${run.status}: ${run.stderr}`);
    if (i > 0) samples.push(JSON.parse(line.slice('PHASES '.length)));
  }
  const m = (key) => median(samples.map((s) => s[key]));
  const rest = median(samples.map((s) => s.exit - s.boot - s.read - s.compile));
  const after = median(samples.map((s) => s.exit - s.lastChunk));
  const cell = (ms, width = 6) => ms.toFixed(1).padStart(width);
  console.log(
    `${command[0].padEnd(8)} ${cell(m('boot'))}${cell(m('read'))}${cell(m('compile'), 8)}${cell(rest, 7)}${cell(after, 30)}${cell(m('exit'), 7)}${cell(m('chunks'), 8)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
