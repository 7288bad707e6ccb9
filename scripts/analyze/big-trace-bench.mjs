// Peak memory and wall time of `cuda-pipe analyze` on big synthetic PyTorch profiler (Kineto) traces, for the memory
// budget docs/analyze.md states. Run after `npx tsc`, from the repository root:
//
// node scripts/analyze/big-trace-bench.mjs [--cli dist/src/cli/main.js] [--label after] [--sizes 100,500] [--gzip 100]
//                                            [--dir /tmp/cuda-pipe-big-traces] [--log docs/measurements/.../log.txt]
//
// Each size (MB of JSON text) is written once into --dir (kept for the next run, never committed), then analysed by
// `node <cli> analyze <file>` under `/usr/bin/time -v`; one line per run (label, file, bytes, kept events, peak RSS,
// wall, exit code) is appended to the log, with the machine's load average beside it, since other work on a shared
// box moves wall times. --gzip names the sizes also written gzip-compressed.
//
// `--variants` instead times, on the 100 MB trace, three ways of reading it with stream-json, each in its own process
// under `/usr/bin/time -v`: `tokens` (the tokenizer alone, every token counted and dropped), `pick` (stream-json's
// Pick and StreamArray assembling every event whole, as its README suggests), `parse` (analyze's own reader,
// dist/src/traces/parse.js, which reads each event through the scanner and skips what no format reads).
//
// The trace is shaped like a real one: per launched kernel a cpu_op, its cudaLaunchKernel, the kernel with Kineto's
// full args, and the ac2g flow pair; an H2D copy every 10 kernels; a ProfilerStep#N on the CPU and on the GPU every
// 200 kernels. About 40% of its events are of the kinds analyze keeps (launches, kernels, copies, steps).
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const cli = flag('cli', 'dist/src/cli/main.js');
const label = flag('label', 'after');
const sizes = flag('sizes', '100,500').split(',').map(Number);
const gzipSizes = flag('gzip', '100').split(',').filter(Boolean).map(Number);
const dir = flag('dir', '/tmp/cuda-pipe-big-traces');
const log = flag('log', 'docs/measurements/2026-11-26-analyze-stream/log.txt');

const KERNEL =
  'void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)';
const STEP_KERNELS = 200;

/** The events of one launched kernel at time `ts` (µs): what a profiled PyTorch op leaves in the trace. */
function kernelEvents(i, ts) {
  const corr = 2 * i + 1;
  const events = [
    {
      ph: 'X',
      cat: 'cpu_op',
      name: 'aten::mm',
      pid: 1,
      tid: 1,
      ts,
      dur: 5.5,
      args: { 'External id': i, 'Record function id': 0, 'Sequence number': 0, 'Fwd thread id': 0, 'Ev Idx': 1 },
    },
    {
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaLaunchKernel',
      pid: 1,
      tid: 1,
      ts: ts + 1,
      dur: 3.1,
      args: { cbid: 211, correlation: corr },
    },
    { ph: 's', id: corr, pid: 1, tid: 1, ts: ts + 1, cat: 'ac2g', name: 'ac2g' },
    {
      ph: 'X',
      cat: 'kernel',
      name: KERNEL,
      pid: 0,
      tid: 13,
      ts: ts + 6,
      dur: 40.2,
      args: {
        'External id': i,
        queued: 0,
        device: 0,
        context: 1,
        stream: 13,
        correlation: corr,
        'registers per thread': 202,
        'shared memory': 49152,
        'blocks per SM': 0.97,
        'warps per SM': 7.75,
        grid: [128, 1, 1],
        block: [256, 1, 1],
        'est. achieved occupancy %': 12,
      },
    },
    { ph: 'f', id: corr, pid: 0, tid: 13, ts: ts + 6, cat: 'ac2g', name: 'ac2g', bp: 'e' },
  ];
  if (i % 10 === 0) {
    const args = {
      'External id': i,
      device: 0,
      context: 1,
      stream: 14,
      correlation: corr + 1,
      bytes: 4194304,
      'memory bandwidth (GB/s)': 52.1,
    };
    events.push({
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaMemcpyAsync',
      pid: 1,
      tid: 1,
      ts: ts + 4,
      dur: 2,
      args: { cbid: 41, correlation: corr + 1 },
    });
    events.push({
      ph: 'X',
      cat: 'gpu_memcpy',
      name: 'Memcpy HtoD (Pinned -> Device)',
      pid: 0,
      tid: 14,
      ts: ts + 6,
      dur: 30,
      args,
    });
  }
  if (i % STEP_KERNELS === 0) {
    const step = `ProfilerStep#${i / STEP_KERNELS}`;
    const dur = STEP_KERNELS * 50 - 1;
    events.push({ ph: 'X', cat: 'user_annotation', name: step, pid: 1, tid: 1, ts, dur, args: { 'External id': i } });
    events.push({
      ph: 'X',
      cat: 'gpu_user_annotation',
      name: step,
      pid: 0,
      tid: 13,
      ts: ts + 6,
      dur,
      args: { device: 0 },
    });
  }
  return events;
}

/** Writes a trace of about `mb` MB of JSON text; returns the number of events kept by analyze's kinds. */
async function writeTrace(path, mb) {
  const out = createWriteStream(`${path}.part`);
  let written = 0;
  let kept = 0;
  const put = async (text) => {
    written += text.length;
    if (!out.write(text)) await new Promise((resolve) => out.once('drain', resolve));
  };
  await put('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "synthetic"}], "traceEvents": [\n');
  for (let i = 0; written < mb * 1e6; i++) {
    const events = kernelEvents(i, 1e12 + i * 50);
    kept += events.filter((e) => e.ph === 'X' && e.cat !== 'cpu_op').length;
    await put(`${i === 0 ? '' : ',\n'}${events.map((e) => JSON.stringify(e)).join(',\n')}`);
  }
  await put('\n], "distributedInfo": {"rank": 0, "world_size": 1}, "traceName": "synthetic"}\n');
  await new Promise((resolve) => out.end(resolve));
  renameSync(`${path}.part`, path);
  writeFileSync(`${path}.kept`, `${kept}\n`);
  return kept;
}

/** The trace of `mb` MB, written unless it is there from an earlier run. */
async function trace(mb) {
  const path = join(dir, `kineto-${mb}mb.json`);
  if (!existsSync(path)) await writeTrace(path, mb);
  return path;
}

async function gzipped(path) {
  const gz = `${path}.gz`;
  if (!existsSync(gz)) {
    await pipeline(createReadStream(path), createGzip({ level: 6 }), createWriteStream(`${gz}.part`));
    renameSync(`${gz}.part`, gz);
  }
  return gz;
}

function measure(path) {
  const run = spawnSync('/usr/bin/time', ['-v', process.execPath, cli, 'analyze', path], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const field = (name) => new RegExp(`${name}: (.+)`).exec(run.stderr)?.[1]?.trim();
  const [min, sec] = (field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)') ?? '0:0').split(':').map(Number);
  const firstError =
    run.status === 0 ? '' : (run.stderr.split('\n').find((l) => l.includes('Cannot')) ?? run.stderr.slice(0, 200));
  return {
    rssMiB: Number(field('Maximum resident set size \\(kbytes\\)')) / 1024,
    wallS: min * 60 + sec,
    cpuS: Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)')),
    code: run.status,
    firstError,
  };
}

/** One way of reading `path`, run in this process: see --variants above. */
async function variant(name, path) {
  const { createRequire } = await import('node:module');
  const require = createRequire(join(process.cwd(), 'package.json'));
  const { parser } = require('stream-json');
  let count = 0;
  if (name === 'parse') {
    const { parseTraceFile } = await import(join(process.cwd(), 'dist', 'src', 'traces', 'parse.js'));
    count = (await parseTraceFile(path)).gpu.length;
  } else if (name === 'tokens') {
    const tokens = parser({ packValues: true, streamValues: false });
    tokens.on('data', () => count++);
    await pipeline(createReadStream(path, { highWaterMark: 1024 * 1024 }), tokens);
  } else {
    const { pick } = require('stream-json/filters/Pick');
    const { streamArray } = require('stream-json/streamers/StreamArray');
    const items = streamArray();
    items.on('data', () => count++);
    await pipeline(
      createReadStream(path, { highWaterMark: 1024 * 1024 }),
      parser({ packValues: true, streamValues: false }),
      pick({ filter: 'traceEvents' }),
      items,
    );
  }
  console.log(`${name} ${count}`);
}

if (args[0] === '--run-variant') {
  await variant(args[1], args[2]);
  process.exit(0);
}

if (args.includes('--variants')) {
  const path = await trace(100);
  for (const name of ['tokens', 'pick', 'parse']) {
    const run = spawnSync(
      '/usr/bin/time',
      ['-v', process.execPath, import.meta.filename, '--run-variant', name, path],
      { encoding: 'utf8' },
    );
    const field = (f) => new RegExp(`${f}: (.+)`).exec(run.stderr)?.[1]?.trim();
    const cpu = Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)'));
    const line = `${new Date().toISOString()} variant=${name} file=${path} counted=${run.stdout.trim().split(' ')[1]} peak-rss-mib=${(Number(field('Maximum resident set size \\(kbytes\\)')) / 1024).toFixed(0)} cpu-s=${cpu.toFixed(2)} exit=${run.status} load-before=${loadavg()[0].toFixed(2)}`;
    console.log(line);
    appendFileSync(log, `${line}\n`);
  }
  process.exit(0);
}

mkdirSync(dir, { recursive: true });
const files = [];
for (const mb of sizes) {
  const path = await trace(mb);
  files.push(path);
  if (gzipSizes.includes(mb)) files.push(await gzipped(path));
}
for (const path of files) {
  const keptFile = `${path.replace(/\.gz$/, '')}.kept`;
  const kept = existsSync(keptFile) ? Number(readFileSync(keptFile, 'utf8').trim().split('\n')[0]) : NaN;
  const load = loadavg()[0].toFixed(2);
  const m = measure(path);
  const line = [
    new Date().toISOString(),
    `label=${label}`,
    `file=${path}`,
    `bytes=${statSync(path).size}`,
    `kept-events=${kept}`,
    `peak-rss-mib=${m.rssMiB.toFixed(0)}`,
    `wall-s=${m.wallS.toFixed(2)}`,
    `cpu-s=${m.cpuS.toFixed(2)}`,
    `exit=${m.code}`,
    `load-before=${load}`,
    ...(m.firstError ? [`error=${JSON.stringify(m.firstError.slice(0, 300))}`] : []),
  ].join(' ');
  console.log(line);
  appendFileSync(log, `${line}\n`);
}
