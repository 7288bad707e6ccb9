// Issue 38's waits, timed from the shell's side: how long after SIGTERM (or SIGINT) each command ends and with which
// exit code, and how long a refusal takes. Run from a checkout's root, with its CLI built (`npm run build`):
//
//   node docs/measurements/2026-11-28-hostile/signals.mjs <label> [<checkout>] >> docs/measurements/2026-11-28-hostile/signals.log
//
// <checkout> is the repository whose bin/cuda-pipe runs (default: this one); the before run used b15a4ce's. The inputs
// are made in /tmp/cuda-pipe-hostile-inputs once: the gzip bombs, a 60 MB trace, a 48 MB Result, a slow kernel.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const [label = 'after', checkout = '.'] = process.argv.slice(2);
const bin = join(resolve(checkout), 'bin', 'cuda-pipe');
const inputs = '/tmp/cuda-pipe-hostile-inputs';
mkdirSync(inputs, { recursive: true });
const MiB = 1024 * 1024;

/** gzip members concatenate: one 16 MiB block compressed once, repeated, makes a GiB from about a MB. */
function bomb(name, head, block, repeats, tail) {
  const path = join(inputs, name);
  if (!existsSync(path)) {
    const member = gzipSync(block, { level: 9 });
    writeFileSync(path, Buffer.concat([gzipSync(head), ...Array.from({ length: repeats }, () => member), gzipSync(tail)]));
  }
  return path;
}
const event = '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"device":0,"stream":7,"correlation":1}},';
const spaceBomb = bomb('space.json.gz', '{"traceEvents": [', Buffer.alloc(16 * MiB, 0x20), 320, ']}');
const eventBomb = bomb('events.json.gz', '{"schemaVersion":1,"traceEvents":[', Buffer.from(event.repeat(Math.floor((16 * MiB) / event.length))), 64, '{"ph":"i","name":"e","pid":0,"ts":1}]}');
const trace = join(inputs, 'big.json');
if (!existsSync(trace)) {
  const kernel = (i) => `{"ph":"X","cat":"kernel","name":"void gemm_kernel<float, 128>(Params)","pid":0,"tid":7,"ts":${1e6 + i * 10},"dur":8,"args":{"device":0,"stream":7,"correlation":${i},"grid":[128,1,1]}}`;
  const launch = (i) => `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":${1e6 + i * 10 - 3},"dur":2,"args":{"correlation":${i}}}`;
  writeFileSync(trace, `{"schemaVersion":1,"traceEvents":[${Array.from({ length: 240_000 }, (_, i) => `${kernel(i)},${launch(i)}`).join(',\n')}]}`);
}
const result = join(inputs, 'large.json');
if (!existsSync(result)) {
  const parsed = JSON.parse(readFileSync('test/fixtures/h200-balanced-16-traced.json', 'utf8'));
  parsed.notes = Array.from({ length: 48 }, (_, i) => `note ${i} ${'x'.repeat(1 << 20)}`);
  writeFileSync(result, JSON.stringify(parsed));
}
const kernel = join(inputs, 'slow.cu');
if (!existsSync(kernel)) {
  const fns = Array.from({ length: 20 }, (_, i) => `__device__ __noinline__ float f${i}(float v) { ${Array.from({ length: 60 }, (_, j) => `v = v * ${(1.0001 + i * 1e-6 + j * 1e-7).toFixed(9)}f + sinf(v + ${j}.0f);`).join(' ')} return v; }`);
  writeFileSync(kernel, `${fns.join('\n')}\nextern "C" __global__ void slow(float *x) { float v = x[0]; ${Array.from({ length: 20 }, (_, i) => `v = f${i}(v);`).join(' ')} x[0] = v; }\n`);
}

/**
 * Runs `args`, stdout into a pipe nobody reads unless `read` (so a long output waits rather than ends the command), sends `signal`
 * `atMs` after the start (none when null), and kills it `limitS` after the start; reports the exit and the times.
 */
function run(what, args, { signal = 'SIGTERM', atMs = null, limitS = 90, read = false } = {}) {
  return new Promise((done) => {
    const started = performance.now();
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', CUDA_PIPE_CACHE_DIR: join(inputs, `cache-${label}-${Date.now()}`) } });
    let stderr = '';
    let sent = null;
    let peakKb = 0;
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const rss = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {}
    }, 50);
    if (atMs !== null)
      setTimeout(() => {
        sent = performance.now();
        child.kill(signal);
      }, atMs);
    const killer = setTimeout(() => child.kill('SIGKILL'), limitS * 1000);
    child.on('exit', (code, sig) => {
      const end = performance.now();
      clearInterval(rss);
      clearTimeout(killer);
      const after = sent === null ? '' : ` ${signal} at ${(atMs / 1000).toFixed(1)} s, ended ${((end - sent) / 1000).toFixed(2)} s after it;`;
      const how = sig ? `killed by ${sig}` : `exit ${code}`;
      const first = stderr.split('\n').find((line) => line.startsWith('cuda-pipe:')) ?? '';
      process.stdout.write(`${label}\t${what}\t${how};${after} ${((end - started) / 1000).toFixed(2)} s in all, peak RSS ${(peakKb / 1024).toFixed(0)} MiB, load ${loadavg()[0].toFixed(2)}\t${first.slice(0, 220)}\n`);
      done();
    });
    if (read) child.stdout.resume();
    else child.stdout.pause();
  });
}

await run('plan: run --dry-run --ops --chunks 1000000, SIGTERM at 1.5 s (the issue\'s)', ['run', '--dry-run', '--ops', '--chunks', '1000000'], { atMs: 1500 });
await run('plan: run --dry-run --chunks 1000000, SIGINT at 4 s', ['run', '--dry-run', '--chunks', '1000000'], { signal: 'SIGINT', atMs: 4000 });
const most = label === 'before' ? '65536' : '16384';
for (const atMs of [500, 1000, 1500]) await run(`plan: run --dry-run --ops --chunks ${most}, SIGTERM at ${atMs / 1000} s`, ['run', '--dry-run', '--ops', '--chunks', most], { atMs });
await run(`plan: run --dry-run --chunks ${most}, no signal`, ['run', '--dry-run', '--chunks', most]);
await run(`plan: run --dry-run --ops --chunks ${most} > pipe read to its end, no signal`, ['run', '--dry-run', '--ops', '--chunks', most], { read: true });
await run('plan: sweep --dry-run --chunks 10000000 (killed at 30 s)', ['sweep', '--dry-run', '--chunks', '10000000'], { limitS: 30 });
await run('plan: sweep --dry-run --chunks 1000000000000 (killed at 30 s)', ['sweep', '--dry-run', '--chunks', '1000000000000'], { limitS: 30 });
await run('compile: kernels --check slow.cu (40 s of NVRTC), SIGTERM at 2 s', ['kernels', '--check', kernel], { atMs: 2000 });
await run('write: report 48 MB Result --json, SIGTERM at 1.5 s', ['report', result, '--json', join(inputs, `out-${label}.json`)], { atMs: 1500 });
for (const atMs of [1000, 3000]) await run(`analyze: 60 MB trace, SIGTERM at ${atMs / 1000} s`, ['analyze', trace], { atMs });
await run('gzip bomb: 5.2 GiB of whitespace from 5 MB', ['analyze', spaceBomb], { limitS: 120 });
await run('gzip bomb: 1 GiB of one kernel event from 4 MB', ['analyze', eventBomb], { limitS: 120 });
