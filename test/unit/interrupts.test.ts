import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { installInterrupts, withInterrupts } from '../../src/cli/interrupt.js';
import { parseConfigText } from '../../src/config/load.js';
import { Interrupted } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { measureSchedule, measureSchedules, verifySchedules } from '../../src/measure/repeat.js';
import { RepGuard } from '../../src/measure/guard.js';
import { packageRoot } from '../../src/paths.js';
import { buildPlan } from '../../src/plan/build.js';
import type { Schedule } from '../../src/plan/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';

const CONFIG = `buffers:
  x: { type: float32, count: 64, role: in }
  y: { type: float32, count: 64, role: out }
kernels:
  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }
pipeline: { chunks: 4, streams: 2 }
`;
const { config, locate } = parseConfigText(CONFIG, '/cfg/fake.yaml');
const plan = buildPlan(config, resolveKernels(config, locate));
const serial = plan.schedules.find((s) => s.role.kind === 'serial') as Schedule;

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('an interrupt stops the rep loop at the next rep boundary', () => {
  it('issues no rep after the signal and throws Interrupted (exit 130) naming the mode', async () => {
    const controller = new AbortController();
    const runner = new FakeRunner(plan.schedules, plan.buffers, {
      onRep: (_s, n) => n === 3 && controller.abort('SIGINT'),
    });
    const error = await rejection(
      measureSchedule(
        runner,
        serial,
        { ...DEFAULT_POLICY, warmup: 2, fixedReps: 50 },
        { guard: new RepGuard({ signal: controller.signal }) },
      ),
    );
    assert.ok(error instanceof Interrupted);
    assert.equal(error.exitCode, 130);
    assert.equal(
      error.message,
      'Interrupted (SIGINT) before a rep of the serial mode: the device was released and nothing was written.',
    );
    assert.equal(runner.repsOf(serial.id), 4, 'the rep in flight finished; none was issued after it');
  });

  it("stops verification between its steps, before the next mode's checked rep", async () => {
    const controller = new AbortController();
    const runner = new FakeRunner(plan.schedules, plan.buffers, { onRep: () => controller.abort('SIGTERM') });
    const error = await rejection(verifySchedules(runner, true, new RepGuard({ signal: controller.signal })));
    assert.ok(error instanceof Interrupted);
    assert.equal(
      error.message,
      'Interrupted (SIGTERM) before a rep of the overlapped mode (4 chunks over 2 streams, depth-first): the device was released and nothing was written.',
    );
    assert.deepEqual(
      runner.calls.filter((c) => c.call === 'rep').map((c) => c.call === 'rep' && c.id),
      [serial.id],
    );
  });

  it('a signal before the first rep stops the run before it issues anything', async () => {
    const controller = new AbortController();
    controller.abort('SIGINT');
    const runner = new FakeRunner(plan.schedules, plan.buffers);
    await assert.rejects(
      measureSchedules(
        runner,
        { ...DEFAULT_POLICY, fixedReps: 2 },
        { guard: new RepGuard({ signal: controller.signal }) },
      ),
      Interrupted,
    );
    assert.equal(runner.calls.filter((c) => c.call === 'rep').length, 0);
  });
});

describe('the deadline of every rep', () => {
  it('is --timeout until the mode has run, then 20 times its slowest rep, never under a second', async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, {
      gpuMs: (s, n) => (s.role.kind === 'serial' ? ([30, 120, 80][n] ?? 80) : 0.01),
    });
    await measureSchedules(
      runner,
      { ...DEFAULT_POLICY, warmup: 1, fixedReps: 2 },
      { guard: new RepGuard({ timeoutMs: 5000 }) },
    );
    const deadlines = (id: string) =>
      runner.calls.flatMap((c) => (c.call === 'rep' && c.id === id ? [c.deadlineMs] : []));
    assert.deepEqual(deadlines(serial.id), [5000, 1000, 2400]);
    const overlapped = plan.schedules.find((s) => s.role.kind === 'overlapped') as Schedule;
    assert.deepEqual(deadlines(overlapped.id), [5000, 1000, 1000]);
  });

  it('carries what verification saw into measurement, and defaults to 60 s', async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, { gpuMs: () => 500 });
    const guard = new RepGuard();
    await verifySchedules(runner, true, guard);
    await measureSchedule(runner, serial, { ...DEFAULT_POLICY, warmup: 0, fixedReps: 1 }, { guard });
    const serialDeadlines = runner.calls.flatMap((c) => (c.call === 'rep' && c.id === serial.id ? [c.deadlineMs] : []));
    assert.deepEqual(serialDeadlines, [60_000, 10_000]);
  });
});

describe('the interrupt handlers', () => {
  it('turn the first signal into an aborted signal and exit at once on the second', async () => {
    const signals = new EventEmitter();
    const exits: number[] = [];
    const written: string[] = [];
    const error = await rejection(
      withInterrupts(
        async (signal) => {
          assert.equal(signals.listenerCount('SIGINT'), 1);
          signals.emit('SIGTERM', 'SIGTERM');
          assert.equal(signal.aborted, true);
          assert.deepEqual(exits, []);
          signals.emit('SIGINT', 'SIGINT');
          return 'measured';
        },
        {
          signals: signals as unknown as NodeJS.Process,
          write: (text) => written.push(text),
          exit: ((code: 130) => exits.push(code)) as unknown as (code: 130) => never,
        },
      ),
    );
    assert.deepEqual(exits, [130]);
    assert.deepEqual(written, [
      'cuda-pipe: interrupted again (SIGINT): exiting now, without waiting for the current rep.\n',
    ]);
    assert.ok(error instanceof Interrupted, 'a run that finished after a signal writes nothing');
    assert.match(error.message, /^Interrupted \(SIGTERM\) after measuring: nothing was written\.$/);
    assert.equal(signals.listenerCount('SIGINT'), 1, 'on the way out, a further signal still exits with 130');
  });

  it('are removed when the command ends without a signal', async () => {
    const signals = new EventEmitter();
    assert.equal(
      await withInterrupts(async () => 'measured', { signals: signals as unknown as NodeJS.Process }),
      'measured',
    );
    assert.equal(signals.listenerCount('SIGINT') + signals.listenerCount('SIGTERM'), 0);
  });

  it('end a command at once with 130 when the signal comes outside every stretch that stops at its own boundary', async () => {
    const signals = new EventEmitter();
    const exits: number[] = [];
    const written: string[] = [];
    const interrupts = installInterrupts({
      signals: signals as unknown as NodeJS.Process,
      write: (text) => written.push(text),
      exit: ((code: 130) => exits.push(code)) as unknown as (code: 130) => never,
    });
    await interrupts.during(async () => {
      signals.emit('SIGTERM', 'SIGTERM');
      assert.deepEqual(exits, [], 'inside a stretch the first signal only aborts');
    });
    assert.equal(interrupts.signal.reason, 'SIGTERM');
    const fresh = new EventEmitter();
    const outside = installInterrupts({
      signals: fresh as unknown as NodeJS.Process,
      write: (text) => written.push(text),
      exit: ((code: 130) => exits.push(code)) as unknown as (code: 130) => never,
    });
    fresh.emit('SIGINT', 'SIGINT');
    assert.deepEqual(exits, [130]);
    assert.equal(written.at(-1), 'cuda-pipe: Interrupted (SIGINT) before the command finished.\n');
    interrupts.uninstall();
    outside.uninstall();
    assert.equal(signals.listenerCount('SIGTERM') + fresh.listenerCount('SIGINT'), 0);
  });

  it('undo what they were given (a temporary file) before leaving at once on a second signal', async () => {
    const signals = new EventEmitter();
    const undone: string[] = [];
    const interrupts = installInterrupts({
      signals: signals as unknown as NodeJS.Process,
      write: () => undefined,
      exit: ((code: 130) => undone.push(`exit ${code}`)) as unknown as (code: 130) => never,
    });
    await interrupts.during(async () => {
      const forget = interrupts.onExit(() => undone.push('removed .result.json.tmp'));
      interrupts.onExit(() => undone.push('removed .report.md.tmp'))();
      signals.emit('SIGTERM', 'SIGTERM');
      signals.emit('SIGTERM', 'SIGTERM');
      forget();
    });
    assert.deepEqual(undone, ['removed .result.json.tmp', 'exit 130']);
    interrupts.uninstall();
  });

  // Compiled, the script beside this file's compiled self (tsc compiles test/fixtures too); under tsx, its source
  // through tsx, which costs a second of CPU a start.
  const compiled = import.meta.url.endsWith('.js');
  const script = fileURLToPath(new URL(`../fixtures/scripts/interrupt.${compiled ? 'js' : 'ts'}`, import.meta.url));
  async function signalled(
    mode: 'reps' | 'stuck',
    signals: NodeJS.Signals[],
  ): Promise<{ code: number | null; stderr: string; stdout: string; ms: number }> {
    const child = spawn(process.execPath, [...(compiled ? [] : ['--import', 'tsx']), script, mode], {
      cwd: packageRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await new Promise<void>((ready) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ready\n')) ready();
      }),
    );
    const sent = performance.now();
    // Apart, as two presses of Ctrl-C are: two signals sent at once can reach the process as one.
    for (const [i, signal] of signals.entries()) {
      if (i) await new Promise((resolve) => setTimeout(resolve, 150));
      child.kill(signal);
    }
    const code = await new Promise<number | null>((done) => child.on('close', (exitCode) => done(exitCode)));
    clearTimeout(killer);
    return { code, stderr, stdout, ms: performance.now() - sent };
  }

  it('a real SIGINT ends a process at its next boundary with exit 130 and one line', async () => {
    const { code, stderr, stdout, ms } = await signalled('reps', ['SIGINT']);
    assert.equal(code, 130, stderr);
    assert.match(
      stderr,
      /^cuda-pipe: Interrupted \(SIGINT\) before rep \d+ of the fake mode: the device was released and nothing was written\.\n$/,
    );
    assert.doesNotMatch(stdout, /finished/);
    assert.ok(ms < 5000, `${ms} ms`);
  });

  it('a second SIGINT exits at once with 130, even while a rep is stuck', async () => {
    const { code, stderr, ms } = await signalled('stuck', ['SIGINT', 'SIGINT']);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: interrupted again (SIGINT): exiting now, without waiting for the current rep.\n');
    assert.ok(ms < 5000, `${ms} ms: the stuck rep (30 s) was not waited for`);
  });
});
