import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../src/paths.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { cliEntry } from '../helpers/cli.js';
import { runCli } from '../helpers/gpu-cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Nothing hangs it, nothing half-written is left behind: interrupts, kernels that never end, faulting kernels.
// Every child is killed after a bound, so a regression fails a test instead of stalling the suite.

const gpu = { skip: gpuSkipReason() ?? false };
const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-gpu-robust-'));
/** Lines of stderr that are an error paragraph's first line (progress lines do not start so). */
const errorParagraphs = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('cuda-pipe: '));

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  readonly msAfterSignal: number;
}

/**
 * Starts the CLI, waits for its "measuring" line on stderr and `settleMs` more, sends the signals 150 ms apart (two
 * presses of Ctrl-C; two signals sent at once can arrive as one) and waits for the end, killing it after `limitMs`.
 */
async function interrupted(
  args: readonly string[],
  signals: readonly NodeJS.Signals[],
  settleMs: number,
  limitMs = 60_000,
): Promise<Ended> {
  const child = spawn(process.execPath, [...cliEntry(), ...args], {
    cwd: packageRoot(),
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('close', (code, signal) => done({ code, signal })),
  );
  await new Promise<void>((started, failed) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/^measuring /m.test(stderr)) started();
    });
    void ended.then(() => failed(new Error(`the run ended before it started measuring: ${stderr}`)));
  });
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const sent = performance.now();
  for (const [i, signal] of signals.entries()) {
    if (i) await new Promise((resolve) => setTimeout(resolve, 150));
    child.kill(signal);
  }
  const { code, signal } = await ended;
  clearTimeout(killer);
  return { code, signal, stderr, msAfterSignal: performance.now() - sent };
}

describe('interrupts on a real device', () => {
  it(
    'Ctrl-C during the timed reps exits 130 within seconds with one line, and writes no --json file',
    gpu,
    async () => {
      const json = join(out, 'interrupted.json');
      // 100 000 fixed reps of the balanced config take minutes: only the signal can end it in time.
      const { code, signal, stderr, msAfterSignal } = await interrupted(
        ['run', '--reps', '100000', '--json', json],
        ['SIGINT'],
        2000,
      );
      assert.equal(code, 130, `${signal} ${stderr}`);
      assert.ok(msAfterSignal < 5000, `${msAfterSignal} ms after the signal`);
      assert.deepEqual(errorParagraphs(stderr), [errorParagraphs(stderr)[0]]);
      assert.match(
        stderr,
        /^cuda-pipe: Interrupted \(SIGINT\) before a rep of the .+ mode.*: the device was released and nothing was written\.$/m,
      );
      assert.equal(existsSync(json), false);
      assert.deepEqual(
        readdirSync(out).filter((name) => name.includes('interrupted')),
        [],
        'no temporary file either',
      );
    },
  );

  it('SIGTERM stops it the same way', gpu, async () => {
    const { code, stderr } = await interrupted(['run', '--reps', '100000', '--no-tracing'], ['SIGTERM'], 1000);
    assert.equal(code, 130, stderr);
    assert.match(stderr, /^cuda-pipe: Interrupted \(SIGTERM\) before a rep of /m);
  });

  it('a second Ctrl-C exits at once with 130, even while a rep never ends', gpu, async () => {
    // The checked rep of spin.yaml's overlapped mode spins: the first signal waits for a rep boundary that never
    // comes (until --timeout, 60 s), the second leaves now.
    const { code, signal, stderr, msAfterSignal } = await interrupted(
      ['run', join(fixtures, 'spin.yaml'), '--timeout', '60'],
      ['SIGINT', 'SIGINT'],
      1000,
    );
    assert.equal(code, 130, `${signal} ${stderr}`);
    assert.ok(msAfterSignal < 3000, `${msAfterSignal} ms after the first signal`);
    assert.match(
      stderr,
      /^cuda-pipe: interrupted again \(SIGINT\): exiting now, without waiting for the current rep\.$/m,
    );
  });
});

/**
 * Issue 38's bound: the first SIGTERM in any long phase ends the command with 130 within 2 s. Warm-up and timed reps
 * stop at the next rep boundary (a rep of balanced.yaml is a few ms); a compile is left to NVRTC's thread and the
 * process leaves without CUDA's teardown.
 */
describe('SIGTERM in each long phase on a device ends the run with 130 within 2 s', () => {
  it('during the warm-up reps', gpu, async () => {
    const { code, stderr, msAfterSignal } = await interrupted(
      ['run', '--no-verify', '--warmup', '1000000', '--reps', '3', '--no-tracing'],
      ['SIGTERM'],
      1500,
    );
    assert.equal(code, 130, stderr);
    assert.ok(msAfterSignal < 2000, `${msAfterSignal.toFixed(0)} ms after the signal`);
    assert.match(stderr, /^cuda-pipe: Interrupted \(SIGTERM\) before a rep of /m);
  });

  it('during the timed reps', gpu, async () => {
    const { code, stderr, msAfterSignal } = await interrupted(
      ['run', '--no-verify', '--warmup', '0', '--reps', '1000000', '--no-tracing'],
      ['SIGTERM'],
      1500,
    );
    assert.equal(code, 130, stderr);
    assert.ok(msAfterSignal < 2000, `${msAfterSignal.toFixed(0)} ms after the signal`);
  });

  it('while NVRTC compiles a kernel that takes it tens of seconds', gpu, async () => {
    const functions = Array.from({ length: 20 }, (_, i) => {
      const body = Array.from(
        { length: 60 },
        (_, j) => `v = v * ${(1.0001 + i * 1e-6 + j * 1e-7).toFixed(9)}f + sinf(v + ${j}.0f);`,
      ).join(' ');
      return `__device__ __noinline__ float f${i}(float v) { ${body} return v; }`;
    });
    const calls = Array.from({ length: 20 }, (_, i) => `v = f${i}(v);`).join(' ');
    const folder = mkdtempSync(join(out, 'slow-'));
    writeFileSync(
      join(folder, 'slow.cu'),
      `${functions.join('\n')}\nextern "C" __global__ void slow(float *x) { float v = x[0]; ${calls} x[0] = v; }\n`,
    );
    writeFileSync(
      join(folder, 'slow.yaml'),
      'name: slow\nbuffers:\n  x: { type: float32, count: 1Mi, role: inout }\nkernels:\n  - { name: slow, source: slow.cu, entry: slow, grid: 1, args: [{ buffer: x }] }\n',
    );
    const child = spawn(process.execPath, [...cliEntry(), 'run', join(folder, 'slow.yaml')], {
      cwd: packageRoot(),
      env: { ...process.env, NO_COLOR: '1', CUDA_PIPE_CACHE_DIR: join(folder, 'cache') },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const ended = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const sent = performance.now();
    child.kill('SIGTERM');
    const code = await ended;
    clearTimeout(killer);
    const msAfterSignal = performance.now() - sent;
    assert.doesNotMatch(stderr, /^measuring /m, 'the kernel compiled before the signal: the test needs a slower one');
    assert.equal(code, 130, stderr);
    assert.ok(msAfterSignal < 2000, `${msAfterSignal.toFixed(0)} ms after the signal`);
    assert.match(stderr, /Interrupted \(SIGTERM\) while compiling .*slow\.cu: nothing was measured\./);
  });
});

describe('kernels that never end and kernels that fault', () => {
  it(
    'a checked rep past --timeout exits 4 within bounded time, naming the kernel, chunk and stream; the GPU is usable after',
    gpu,
    () => {
      const started = performance.now();
      const { code, stderr } = runCli(
        ['run', join(fixtures, 'spin.yaml'), '--timeout', '3'],
        {},
        { timeoutMs: 60_000 },
      );
      const ms = performance.now() - started;
      assert.equal(code, 4, stderr);
      assert.ok(ms < 20_000, `${ms} ms`);
      assert.match(
        stderr,
        /^cuda-pipe: A rep of the overlapped mode \(4 chunks over 2 streams, depth-first\) ran past its deadline of 3\.0 s: kernel spinner \(spin_after_first_chunk\), chunk 1 of 4 \(elements 262144 to 524287\) on stream s1 had not finished\.$/m,
      );
      assert.equal(errorParagraphs(stderr).length, 1, stderr);
      assert.doesNotMatch(stderr, /\n\s+at /);
      // The runaway kernel died with its process: the next run has the GPU to itself.
      const next = runCli(['run', '--reps', '2', '--warmup', '1', '--no-tracing'], {}, { timeoutMs: 120_000 });
      assert.equal(next.code, 0, next.stderr);
    },
  );

  it(
    'a timed rep past its deadline (20 times the slowest rep seen) names the unfinished stream and its chunks, with either wait',
    gpu,
    () => {
      for (const wait of ['poll', 'thread']) {
        const started = performance.now();
        const { code, stderr } = runCli(
          ['run', join(fixtures, 'spin-later.yaml'), '--wait', wait],
          {},
          { timeoutMs: 60_000 },
        );
        const ms = performance.now() - started;
        assert.equal(code, 4, `${wait}: ${stderr}`);
        assert.ok(ms < 20_000, `${wait}: ${ms} ms (a worker thread blocked on the kernel must not hold the exit)`);
        assert.match(
          stderr,
          /^cuda-pipe: A rep of the overlapped mode \(4 chunks over 2 streams, depth-first\) ran past its deadline of \d+\.\d s; unfinished: stream s1 \(H2D of "x", chunks 1 and 3 of 4; kernel spinner \(spin_later\), chunks 1 and 3 of 4; D2H of "y", chunks 1 and 3 of 4\)\.$/m,
          wait,
        );
        assert.equal(errorParagraphs(stderr).length, 1, stderr);
      }
    },
  );

  it('a faulting kernel exits 4 promptly with one error paragraph, trying no more CUDA work', gpu, () => {
    const started = performance.now();
    const { code, stderr } = runCli(['run', join(fixtures, 'fault.yaml')], {}, { timeoutMs: 60_000 });
    const ms = performance.now() - started;
    assert.equal(code, 4, stderr);
    assert.ok(ms < 10_000, `${ms} ms`);
    assert.deepEqual(
      errorParagraphs(stderr).map((line) => line.replace(/ \(elements.*/, '')),
      [
        'cuda-pipe: cudaErrorIllegalAddress (700): an illegal memory access was encountered while running kernel faulty (fault_after_first_chunk), chunk 1 of 4',
      ],
    );
  });
});

describe('someone else on the GPU', () => {
  it('a run next to another cuda-pipe warns that its figures are shared, counting the other process', gpu, async () => {
    const other = spawn(process.execPath, [...cliEntry(), 'run', '--reps', '100000', '--no-tracing'], {
      cwd: packageRoot(),
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const killer = setTimeout(() => other.kill('SIGKILL'), 120_000);
    try {
      await new Promise<void>((started, failed) => {
        let stderr = '';
        other.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/^measuring /m.test(stderr)) started();
        });
        other.on('close', () => failed(new Error(`the other run ended early: ${stderr}`)));
      });
      const json = join(out, 'shared.json');
      const { code, stdout, stderr } = runCli(
        ['run', '--reps', '3', '--warmup', '1', '--no-tracing', '--json', json],
        {},
        { timeoutMs: 120_000 },
      );
      assert.equal(code, 0, stderr);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
      if (!result.clocks.sharing.checked) return void assert.match(result.clocks.sharing.note, /^not checked: /);
      assert.ok((result.clocks.sharing.otherProcesses ?? 0) >= 1, JSON.stringify(result.clocks.sharing));
      const warning = result.warnings.find((w) => w.code === 'shared-gpu');
      assert.match(
        warning?.message ?? '',
        /^\d+ other compute process(es were| was) running on the GPU during the run/,
      );
      assert.match(stdout + stderr, /other compute process/);
    } finally {
      other.kill('SIGINT');
      clearTimeout(killer);
    }
  });
});
