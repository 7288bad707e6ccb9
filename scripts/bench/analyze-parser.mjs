// CPU time and peak memory of `cuda-pipe analyze` on a 1 GB PyTorch profiler trace, against Python's json.load of the
// same file (issue 40: analyze at parser speed). Run after `npm run build`, from the repository root:
//
//   node scripts/bench/analyze-parser.mjs make [--mb 1000] [--out /tmp/cuda-pipe-big/ddp-1g.pt.trace.json]
//   node scripts/bench/analyze-parser.mjs time [--runs 3] [--label after] [--file …] [--python] [--log …]
//
// `make` builds the trace from a committed one (--from, a two-GPU DDP step traced on an H200), its events repeated
// with their times moved on by the source's span each copy, correlation and External ids and flow ids renumbered,
// and ProfilerStep#N numbered on, until the text reaches --mb MB: as many kernels, launches, PyTorch ops, flows,
// copies, NCCL kernels and annotations a step as the real trace has. It is written under /tmp, never committed.
// `time` runs `node <cli> analyze <file>` (and with --python, `python3 -c 'import json; json.load(open(f))'`) under
// `/usr/bin/time -v`, --runs times, one line a run appended to --log: label, command, user and system CPU seconds,
// their sum, wall seconds, peak RSS in MiB, exit code, and the load average, since the machine is shared.
import { spawnSync } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { gunzipSync } from 'node:zlib';

const [command = 'time', ...args] = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const file = flag('out', flag('file', '/tmp/cuda-pipe-big/ddp-1g.pt.trace.json'));
const from = flag(
  'from',
  'docs/measurements/2026-11-28-h200x2-validation/second/pairs/ddp-overlap/rank0.pt.trace.json.gz',
);
const log = flag('log', 'docs/measurements/2026-11-28-analyze-parser/times.log');

async function make(mb) {
  const source = JSON.parse(gunzipSync(readFileSync(from)).toString('utf8'));
  const events = source.traceEvents;
  const once = events.filter((e) => e.ph === 'M');
  const repeated = events.filter((e) => e.ph !== 'M');
  const times = repeated.filter((e) => typeof e.ts === 'number');
  const start = Math.min(...times.map((e) => e.ts));
  const span = Math.max(...times.map((e) => e.ts + (e.dur ?? 0))) - start + 1000;
  const ids = (e) => [e.args?.correlation, e.args?.['External id'], e.id].filter((v) => typeof v === 'number');
  const idSpan = Math.max(...repeated.flatMap(ids)) + 1;
  const steps = repeated
    .map((e) => /^ProfilerStep#(\d+)$/.exec(e.name ?? ''))
    .filter(Boolean)
    .map((m) => Number(m[1]));
  const stepSpan = steps.length ? Math.max(...steps) - Math.min(...steps) + 1 : 0;
  mkdirSync(dirname(file), { recursive: true });
  const out = createWriteStream(file);
  let written = 0;
  let count = 0;
  const put = async (text) => {
    written += Buffer.byteLength(text);
    if (!out.write(text)) await new Promise((resolve) => out.once('drain', resolve));
  };
  const { traceEvents: _, ...top } = source;
  await put(`${JSON.stringify(top).slice(0, -1)},\n  "traceEvents": [\n`);
  for (const e of once) await put(`${count++ ? ',\n' : ''}  ${JSON.stringify(e)}`);
  for (let k = 0; written < mb * 1e6; k++) {
    const lines = [];
    for (const e of repeated) {
      const copy = { ...e, ...(typeof e.ts === 'number' ? { ts: e.ts + k * span } : {}) };
      if (typeof e.id === 'number') copy.id = e.id + k * idSpan;
      if (e.args) {
        copy.args = { ...e.args };
        for (const key of ['correlation', 'External id'])
          if (typeof e.args[key] === 'number') copy.args[key] = e.args[key] + k * idSpan;
      }
      const step = /^ProfilerStep#(\d+)$/.exec(e.name ?? '');
      if (step) copy.name = `ProfilerStep#${Number(step[1]) + k * stepSpan}`;
      lines.push(`${count++ ? ',\n' : ''}  ${JSON.stringify(copy)}`);
    }
    await put(lines.join(''));
  }
  await put('\n]}\n');
  await new Promise((resolve) => out.end(resolve));
  console.log(`${file}: ${statSync(file).size} bytes, ${count} events (${repeated.length} a copy of ${from})`);
}

function timed(label, argv) {
  const run = spawnSync('/usr/bin/time', ['-v', ...argv], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const field = (name) => new RegExp(`${name}: ([\\d.:]+)`).exec(run.stderr)?.[1];
  const user = Number(field('User time \\(seconds\\)'));
  const sys = Number(field('System time \\(seconds\\)'));
  const wall = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)')
    .split(':')
    .reduce((total, part) => total * 60 + Number(part), 0);
  const rssMiB = Number(field('Maximum resident set size \\(kbytes\\)')) / 1024;
  const line = [
    label,
    argv.join(' ').replace(file, '<trace>'),
    `user ${user.toFixed(2)} s`,
    `sys ${sys.toFixed(2)} s`,
    `cpu ${(user + sys).toFixed(2)} s`,
    `wall ${wall.toFixed(2)} s`,
    `peak RSS ${rssMiB.toFixed(0)} MiB`,
    `exit ${run.status}`,
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  ].join('\t');
  console.log(line);
  if (run.status !== 0) console.log(run.stderr.split('\n').slice(0, 4).join('\n'));
  mkdirSync(dirname(log), { recursive: true });
  appendFileSync(log, `${line}\n`);
}

if (command === 'make') await make(Number(flag('mb', '1000')));
else {
  const runs = Number(flag('runs', '3'));
  const label = flag('label', 'after');
  const cli = flag('cli', 'dist/cli/cuda-pipe.js');
  mkdirSync(dirname(log), { recursive: true });
  appendFileSync(log, `# ${new Date().toISOString()} ${label}: ${file}, ${statSync(file).size} bytes\n`);
  for (let i = 0; i < runs; i++) {
    timed(label, ['node', cli, 'analyze', file]);
    if (args.includes('--python'))
      timed('python', ['python3', '-c', 'import json, sys; json.load(open(sys.argv[1]))', file]);
  }
}
