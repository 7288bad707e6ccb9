import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Interrupted } from '../../src/errors.js';
import {
  DEADLINE_FACTOR,
  DEADLINE_FLOOR_MS,
  DEFAULT_TIMEOUT_MS,
  MAX_DEADLINE_MS,
  RepGuard,
} from '../../src/measure/guard.js';
import type { RepOptions, RepRunner, RepTiming, TracedRepTiming } from '../../src/measure/runner.js';
import type { Schedule } from '../../src/plan/types.js';

// The rep guard's deadlines and interrupt checks, which mutation testing found reached by no unit test (guard.ts
// scored 17%): every rule pinned at its boundary.

/** A runner that returns scripted GPU times and records the deadline each wait was given. */
class ScriptedRunner {
  readonly deadlines: Array<[string, number | undefined]> = [];
  constructor(private readonly times: number[]) {}
  runRep(_id: string, options: RepOptions): Promise<RepTiming> {
    this.deadlines.push(['rep', options.deadlineMs]);
    return Promise.resolve({ gpuMs: this.times.shift() ?? 1 } as RepTiming);
  }
  traceRep(_id: string, options: { deadlineMs?: number }): Promise<TracedRepTiming> {
    this.deadlines.push(['trace', options.deadlineMs]);
    return Promise.resolve({ totalMs: this.times.shift() ?? 1 } as TracedRepTiming);
  }
}

const schedule = (id: string) =>
  ({ id, role: { kind: 'serial' }, description: 'one chunk on one stream' }) as unknown as Schedule;
const asRunner = (r: ScriptedRunner) => r as unknown as RepRunner;

describe('the rep guard', () => {
  it('gives a mode with no rep yet --timeout, or 60 s, never more than a timer can hold', () => {
    assert.equal(new RepGuard().deadlineMs('m'), DEFAULT_TIMEOUT_MS);
    assert.equal(DEFAULT_TIMEOUT_MS, 60_000);
    assert.equal(new RepGuard({ timeoutMs: 5_000 }).deadlineMs('m'), 5_000);
    assert.equal(new RepGuard({ timeoutMs: 0.5 }).deadlineMs('m'), 0.5);
    assert.equal(MAX_DEADLINE_MS, 2_147_483_647);
    assert.equal(new RepGuard({ timeoutMs: MAX_DEADLINE_MS + 1 }).deadlineMs('m'), MAX_DEADLINE_MS);
  });

  it("then gives 20 times the slowest rep so far, at least 1 s, at most a timer's limit", async () => {
    assert.equal(DEADLINE_FACTOR, 20);
    assert.equal(DEADLINE_FLOOR_MS, 1_000);
    const runner = new ScriptedRunner([30, 200, 100, 2e8]);
    const guard = new RepGuard({ timeoutMs: 7_000 });
    await guard.rep(asRunner(runner), schedule('a'));
    assert.equal(guard.deadlineMs('a'), 1_000, '20 × 30 ms is under the floor');
    await guard.rep(asRunner(runner), schedule('a'));
    assert.equal(guard.deadlineMs('a'), 4_000, '20 × 200 ms');
    await guard.rep(asRunner(runner), schedule('a'));
    assert.equal(guard.deadlineMs('a'), 4_000, 'a faster rep leaves the slowest alone');
    assert.equal(guard.deadlineMs('b'), 7_000, 'another mode still has --timeout');
    await guard.trace(asRunner(runner), schedule('a'));
    assert.equal(guard.deadlineMs('a'), MAX_DEADLINE_MS);
    assert.deepEqual(runner.deadlines, [
      ['rep', 7_000],
      ['rep', 1_000],
      ['rep', 4_000],
      ['trace', 4_000],
    ]);
  });

  it('ignores a rep time that is not finite', async () => {
    const runner = new ScriptedRunner([Number.NaN, Number.POSITIVE_INFINITY, 100]);
    const guard = new RepGuard({ timeoutMs: 3_000 });
    await guard.rep(asRunner(runner), schedule('a'));
    await guard.rep(asRunner(runner), schedule('a'));
    assert.equal(guard.deadlineMs('a'), 3_000);
    await guard.rep(asRunner(runner), schedule('a'));
    assert.equal(guard.deadlineMs('a'), 2_000);
  });

  it('stops at a rep boundary once the signal is aborted, naming where, and not before', async () => {
    const controller = new AbortController();
    const runner = new ScriptedRunner([1, 1]);
    const guard = new RepGuard({ signal: controller.signal });
    guard.checkpoint('nothing');
    await guard.rep(asRunner(runner), schedule('a'));
    controller.abort('SIGINT');
    assert.throws(
      () => guard.checkpoint('the verification'),
      (e: unknown) =>
        e instanceof Interrupted &&
        e.message === 'Interrupted (SIGINT) before the verification: the device was released and nothing was written.',
    );
    await assert.rejects(
      guard.rep(asRunner(runner), schedule('a')),
      /Interrupted \(SIGINT\) before a rep of the serial mode/,
    );
    await assert.rejects(guard.trace(asRunner(runner), schedule('a')), /before the traced rep of the serial mode/);
    assert.equal(runner.deadlines.length, 1, 'no rep ran after the interrupt');
  });
});
