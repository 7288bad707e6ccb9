import assert from 'node:assert/strict';
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { MAX_PLAN_CHUNKS } from '../../src/chunking.js';
import { packageRoot } from '../../src/paths.js';
import { cliEntry, runCli } from '../helpers/cli.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

// SIGINT and SIGTERM end every command with 130 (the exit-code table of docs/reference/cli.md), whatever it is doing,
// and an output being written when the signal comes is not left half-written: its temporary file goes and the target
// stays as it was.
// Each test sends a real signal to a real process, and kills it with SIGKILL if it has not ended within 20 s.

const DEADLINE_MS = 20_000;
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-signals-'));
const fixtures = join(packageRoot(), 'test', 'fixtures');
// The large Result is 48 MB: not left in the temporary folder after every run of the suite.
after(() => rmSync(dir, { recursive: true, force: true }));

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

function start(
  args: readonly string[],
  stdout: 'ignore' | 'pipe',
): ChildProcessByStdio<null, Readable | null, Readable> {
  return spawn(process.execPath, [...cliEntry(), ...args], {
    cwd: packageRoot(),
    stdio: ['ignore', stdout, 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  }) as ChildProcessByStdio<null, Readable | null, Readable>;
}

/** Waits for the child to end, killing it at the deadline so that a process that ignores the signal fails the test. */
function ended(child: ChildProcessByStdio<null, Readable | null, Readable>): Promise<Ended> {
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
  return new Promise((done) =>
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      // A stdout the test stopped reading is drained now, so that the pipes close and stderr is read to its end.
      child.stdout?.resume();
      child.on('close', () => done({ code, signal, stderr }));
    }),
  );
}

/** A Result of about 48 MB (its notes), so that writing it again takes many chunks. */
function largeResult(): string {
  const result = JSON.parse(readFileSync(join(fixtures, 'h200-balanced-16-traced.json'), 'utf8')) as {
    notes: string[];
  };
  result.notes = Array.from({ length: 48 }, (_, i) => `note ${i} ${'x'.repeat(1 << 20)}`);
  const path = join(dir, 'large.json');
  writeFileSync(path, JSON.stringify(result));
  return path;
}

describe('a signal while a document is being written', () => {
  it('SIGTERM mid-write of a large --json removes the temporary file, keeps the old target and exits 130', {
    timeout: DEADLINE_MS + 5_000,
  }, async () => {
    const source = largeResult();
    const folder = mkdtempSync(join(dir, 'out-'));
    const target = join(folder, 'result.json');
    writeFileSync(target, 'the previous result');
    const child = start(['report', source, '--json', target], 'ignore');
    const done = ended(child);
    // The temporary file appears when the write begins; the signal is sent the moment it is seen.
    const watch = setInterval(() => {
      if (readdirSync(folder).some((name) => name.endsWith('.tmp'))) {
        clearInterval(watch);
        child.kill('SIGTERM');
      }
    }, 2);
    const { code, signal, stderr } = await done;
    clearInterval(watch);
    assert.equal(signal, null, `the process died by the signal, with nothing cleaned up\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.equal(
      stderr,
      `cuda-pipe: Interrupted (SIGTERM) while writing ${target}: its temporary file was removed and the file there, if any, is as it was.\n`,
    );
    assert.deepEqual(readdirSync(folder), ['result.json'], 'no temporary file is left beside the target');
    assert.equal(readFileSync(target, 'utf8'), 'the previous result');
  });

  it('SIGTERM while a reader leaves stdout full (--json -) ends the write with 130, not death by signal', {
    timeout: DEADLINE_MS + 5_000,
  }, async () => {
    const child = start(['report', join(fixtures, 'h200-graph-launches-host-bound.json'), '--json', '-'], 'pipe');
    const done = ended(child);
    // Read the first bytes, then nothing more: the pipe fills and the write waits for a reader.
    await new Promise<void>((begun) => child.stdout?.once('data', () => begun()));
    child.stdout?.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGTERM');
    const { code, signal, stderr } = await done;
    assert.equal(signal, null, `the process died by the signal\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: Interrupted (SIGTERM) while writing stdout: the reader got part of it.\n');
  });
});

describe('a signal in a command that uses no GPU', () => {
  it('SIGTERM during `run --dry-run` exits 130, as docs/reference/cli.md says, not 143', {
    timeout: DEADLINE_MS + 5_000,
  }, async () => {
    // A long plan (--ops over 1,024 chunks) into a pipe nobody reads: the dry run is still delivering it when the
    // signal comes.
    const child = start(['run', '--dry-run', '--ops', '--chunks', '1024', '--streams', '8'], 'pipe');
    const done = ended(child);
    await new Promise<void>((begun) => child.stdout?.once('data', () => begun()));
    child.stdout?.pause();
    child.kill('SIGTERM');
    const { code, signal, stderr } = await done;
    assert.equal(signal, null, `the process died by the signal (exit 143 in a shell)\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: Interrupted (SIGTERM) before the command finished.\n');
  });

  it('SIGINT during `run --dry-run` exits 130 too', { timeout: DEADLINE_MS + 5_000 }, async () => {
    const child = start(['run', '--dry-run', '--ops', '--chunks', '1024', '--streams', '8'], 'pipe');
    const done = ended(child);
    await new Promise<void>((begun) => child.stdout?.once('data', () => begun()));
    child.stdout?.pause();
    child.kill('SIGINT');
    const { code, signal, stderr } = await done;
    assert.equal(signal, null, stderr);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: Interrupted (SIGINT) before the command finished.\n');
  });
});

/**
 * How soon after the signal every command must have ended: the README's "ends at once", as issue 38 bounds it, 2 s on
 * a machine with a core to spare. What runs between two turns of the event loop runs as many times slower as the
 * runnable processes outnumber the cores, so on a shared box (the test suite's own two queues, other sessions: a load
 * of 13 on 2 cores was seen) the bound grows with the load, never below 2 s.
 */
const atOnceMs = () => 2_000 * Math.max(1, (loadavg()[0] ?? 0) / availableParallelism());

/**
 * Starts `args` with stdout piped and never read, so that a long output waits for a reader rather than ending the
 * command before the signal; sends `signal` once `when` resolves, and returns how the command ended and how long
 * after the signal.
 */
async function signalled(
  args: readonly string[],
  when: (child: ChildProcessByStdio<null, Readable | null, Readable>) => Promise<void>,
  env: NodeJS.ProcessEnv = {},
) {
  const child = spawn(process.execPath, [...cliEntry(), ...args], {
    cwd: packageRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...env },
  }) as ChildProcessByStdio<null, Readable, Readable>;
  const done = ended(child);
  await when(child);
  const sent = performance.now();
  child.kill('SIGTERM');
  const outcome = await done;
  return { ...outcome, afterMs: performance.now() - sent };
}

const afterMs = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));

const onStdout = (pattern: RegExp) => (child: ChildProcessByStdio<null, Readable | null, Readable>) =>
  new Promise<void>((seen) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) {
        child.stdout?.pause();
        seen();
      }
    });
  });

function endedAtOnce(outcome: Ended & { afterMs: number }, what: string): void {
  assert.equal(outcome.signal, null, `${what}: died by the signal\n${outcome.stderr}`);
  assert.equal(outcome.code, 130, `${what}: ${outcome.stderr}`);
  const bound = atOnceMs();
  assert.ok(
    outcome.afterMs < bound,
    `${what}: ended ${outcome.afterMs.toFixed(0)} ms after SIGTERM (bound ${bound.toFixed(0)} ms at a load of ${loadavg()[0]})`,
  );
}

describe('SIGTERM in each long phase that needs no GPU ends the command with 130 within 2 s', () => {
  it('planning and listing the largest plan allowed (--ops over 16,384 chunks), at any moment', {
    timeout: 60_000,
  }, async () => {
    const args = ['run', '--dry-run', '--ops', '--chunks', String(MAX_PLAN_CHUNKS)];
    // Whatever it is doing then: reading the config, planning, compiling or listing the ops (10 MB of them).
    // Three plans (a host memory kind each) and a compile into an empty cache before the first line is written, then
    // 10 MB of ops into a pipe nobody reads: whenever the signal comes, the command is still at work. Not before
    // 1.5 s: on a loaded box Node itself may still be starting then, before any handler of ours exists.
    const cache = { CUDA_PIPE_CACHE_DIR: mkdtempSync(join(dir, 'cache-')) };
    const three = [...args, '--host-memory', 'pinned,pageable,write-combined'];
    for (const ms of [1_500, 2_000, 2_500])
      endedAtOnce(await signalled(three, afterMs(ms), cache), `signal at ${ms} ms`);
    endedAtOnce(await signalled(args, onStdout(/mode serial/)), 'signal as the ops are listed');
  });

  it('a plan larger than that is refused before it is planned, quoting the limit, in no time', () => {
    for (const args of [
      ['run', '--dry-run', '--ops', '--chunks', '1000000'],
      ['sweep', '--dry-run', '--chunks', '10000000'],
      ['sweep', '--dry-run', '--chunks', '1000000000000'],
    ]) {
      const started = performance.now();
      const { code, stderr } = runCli(args, {}, { timeoutMs: 20_000 });
      assert.equal(code, 2, stderr);
      assert.match(stderr, new RegExp(`chunks is more than the ${MAX_PLAN_CHUNKS} a plan may hold`));
      assert.ok(
        performance.now() - started < 5_000,
        `${args.join(' ')} took ${(performance.now() - started).toFixed(0)} ms`,
      );
    }
    const { code, stderr } = runCli(['sweep', '--dry-run', '--chunks', '4096,8192']);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /--chunks 4096,8192 over 4 stream counts make 49152 chunks in each setting's plan, more than the 16384 a plan may hold/,
    );
  });

  it('an NVRTC compile of a kernel that takes NVRTC tens of seconds', {
    timeout: 60_000,
    skip: nvrtcSkipReason() ?? false,
  }, async () => {
    // Twenty large functions of transcendentals: NVRTC 11.8 took 40 s over this on the 2-core box.
    const functions = Array.from({ length: 20 }, (_, i) => {
      const body = Array.from(
        { length: 60 },
        (_, j) => `v = v * ${(1.0001 + i * 1e-6 + j * 1e-7).toFixed(9)}f + sinf(v + ${j}.0f);`,
      ).join(' ');
      return `__device__ __noinline__ float f${i}(float v) { ${body} return v; }`;
    });
    const calls = Array.from({ length: 20 }, (_, i) => `v = f${i}(v);`).join(' ');
    const source = join(dir, 'slow.cu');
    writeFileSync(
      source,
      `${functions.join('\n')}\nextern "C" __global__ void slow(float *x) { float v = x[0]; ${calls} x[0] = v; }\n`,
    );
    // `kernels --check` leads with its verdict, so it writes nothing until NVRTC is done: the signal comes 3 s in,
    // when NVRTC is loaded and at work (the compile takes tens of seconds; a start slower than that on a loaded box
    // meets early-signals.ts's handler instead, which ends it with 130 as well).
    const outcome = await signalled(['kernels', '--check', source], afterMs(3_000));
    endedAtOnce(outcome, 'compiling');
    assert.equal(outcome.stderr, 'cuda-pipe: Interrupted (SIGTERM) before the command finished.\n');
  });

  it('an NVRTC compile still in its front end, where NVRTC 11 swaps in signal handlers of its own', {
    timeout: 60_000,
    skip: nvrtcSkipReason() ?? false,
  }, async () => {
    // 60,000 templates never instantiated (3.6 MB, under the 4 MiB a source may be): NVRTC 11.2 parses them for seconds
    // on the 2-core box, with its own
    // SIGTERM handler in place from 0.5 s in. A signal then called NVRTC's exit(4) under the compile, and the process
    // died by SIGSEGV, without a word, whenever the compile ran in this process.
    const templates = Array.from(
      { length: 60_000 },
      (_, i) => `template<class T>__device__ T f${i}(T x){return x*${i}+1;}`,
    );
    const source = join(dir, 'front-end.cu');
    writeFileSync(source, `${templates.join('\n')}\nextern "C" __global__ void k(float *x) { x[0] = 1.0f; }\n`);
    const mark = `front-end-${process.pid}-${Date.now()}`;
    const outcome = await signalled(['kernels', '--check', source], afterMs(3_000), { CUDA_PIPE_TEST_MARK: mark });
    endedAtOnce(outcome, 'parsing');
    assert.equal(outcome.stderr, 'cuda-pipe: Interrupted (SIGTERM) before the command finished.\n');
    // The compile runs in a child process, which must not outlive the command.
    const deadline = performance.now() + atOnceMs();
    while (processesMarked(mark).length > 0 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(processesMarked(mark), [], 'a compiler process outlived the command');
  });

  it('writing a 48 MB document', { timeout: 60_000 }, async () => {
    const folder = mkdtempSync(join(dir, 'out-'));
    const outcome = await signalled(['report', largeResult(), '--json', join(folder, 'result.json')], async () => {
      while (!readdirSync(folder).some((name) => name.endsWith('.tmp')))
        await new Promise((resolve) => setTimeout(resolve, 2));
    });
    endedAtOnce(outcome, 'writing');
  });

  it('analysing a 160 MB trace while it streams', { timeout: 120_000 }, async () => {
    // Most of it CPU ops, which analyze keeps only as the context of the kernels' launches: the streaming is long, the
    // pass after the last event short. 160 MB, as analyze reads 60 MB in under 3 s since its scanner (issue 40).
    const trace = join(dir, 'big.json');
    const op = (i: number) =>
      `{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":${1e6 + i * 10},"dur":8,"args":{"External id":${i},"Input Dims":[[1024,1024],[1024,1024]]}}`;
    const kernel = (i: number) =>
      `{"ph":"X","cat":"kernel","name":"void gemm_kernel<float, 128>(Params)","pid":0,"tid":7,"ts":${1e6 + i * 10},"dur":8,"args":{"device":0,"stream":7,"correlation":${i}}}`;
    const events = Array.from({ length: 1_000_000 }, (_, i) => (i % 20 === 0 ? `${op(i)},${kernel(i)}` : op(i)));
    writeFileSync(trace, `{"schemaVersion":1,"traceEvents":[${events.join(',\n')}]}`);
    for (const ms of [1_500, 2_500, 3_500])
      endedAtOnce(await signalled(['analyze', trace], afterMs(ms)), `signal at ${ms} ms`);
  });
});

/** The pids of live processes whose environment holds CUDA_PIPE_TEST_MARK=`mark` (Linux's /proc). */
function processesMarked(mark: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(join('/proc', entry, 'environ'), 'latin1')
          .split('\0')
          .includes(`CUDA_PIPE_TEST_MARK=${mark}`)
      )
        found.push(Number(entry));
    } catch {
      // Gone meanwhile, or another user's.
    }
  }
  return found;
}
