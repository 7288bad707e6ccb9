import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { POISON } from '../../src/data/compare.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { measureSchedule, measureSchedules, verifySchedules } from '../../src/measure/repeat.js';
import { buildPlan } from '../../src/plan/build.js';
import type { Plan, Schedule } from '../../src/plan/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';

const CONFIG = `buffers:
  x: { type: float32, count: 64, role: in }
  y: { type: float32, count: 64, role: out }
kernels:
  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }
pipeline: { chunks: 4, streams: 2, order: [depth-first, breadth-first] }
`;

function plan(): Plan {
  const { config, locate } = parseConfigText(CONFIG, '/cfg/fake.yaml');
  return buildPlan(config, resolveKernels(config, locate));
}

const p = plan();
const byKind = (kind: Schedule['role']['kind']) => p.schedules.filter((s) => s.role.kind === kind);
const serial = byKind('serial')[0] as Schedule;
const [depthFirst, breadthFirst] = byKind('overlapped') as [Schedule, Schedule];

describe('the repetition loop, on a fake runner', () => {
  it('discards the warm-ups, restores inputs before every rep, and stops at the minimum once the noise is under target', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers, { gpuMs: () => 2 });
    const m = await measureSchedule(runner, serial, { ...DEFAULT_POLICY, warmup: 3, minReps: 10 });
    assert.equal(m.stoppedBy, 'noise-target');
    assert.equal(m.gpuMs.length, 10);
    assert.equal(runner.repsOf(serial.id), 13);
    assert.equal(runner.calls.filter((c) => c.call === 'restore').length, 13);
    assert.ok(
      runner.calls.every((c, i) => c.call !== 'rep' || runner.calls[i - 1]?.call === 'restore'),
      'a restore before every rep',
    );
  });

  it('keeps the warm-up reps out of the samples', async () => {
    // Warm-ups take 100 ms, timed reps 2 ms: a sample of 100 would mean a warm-up was kept.
    const runner = new FakeRunner(p.schedules, p.buffers, { gpuMs: (_s, n) => (n < 2 ? 100 : 2) });
    const m = await measureSchedule(runner, serial, { ...DEFAULT_POLICY, warmup: 2 });
    assert.ok(m.gpuMs.every((ms) => ms === 2));
  });

  it('stops on the time budget when the noise stays above target, and never before three samples', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers, { gpuMs: (_s, n) => 1 + (n % 2) * 0.5, delayMs: 2 });
    const m = await measureSchedule(runner, serial, { ...DEFAULT_POLICY, warmup: 0, minReps: 50, maxTimeMs: 10 });
    assert.equal(m.stoppedBy, 'max-time');
    assert.ok(m.gpuMs.length >= 3 && m.gpuMs.length < 50, `${m.gpuMs.length} samples`);
  });

  it('takes exactly the fixed rep count when one is set', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers, { gpuMs: (_s, n) => 1 + n });
    const m = await measureSchedule(runner, serial, { ...DEFAULT_POLICY, warmup: 1, fixedReps: 4 });
    assert.equal(m.stoppedBy, 'fixed-reps');
    assert.deepEqual(m.gpuMs, [2, 3, 4, 5]);
  });

  it('reads the SM clock between reps and measures every schedule in plan order', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers);
    let reads = 0;
    const measured = await measureSchedules(
      runner,
      { ...DEFAULT_POLICY, warmup: 0, fixedReps: 2 },
      { smClock: () => 1980 + reads++ },
    );
    assert.deepEqual(
      measured.map((m) => m.schedule.id),
      p.schedules.map((s) => s.id),
    );
    assert.deepEqual(measured[0]?.smClockMHz, [1980, 1981]);
    assert.equal(reads, 2 * p.schedules.length);
  });
});

describe('verification, on a fake runner', () => {
  it('runs serial checked after the serial poison, then each overlapped mode checked, then poisoned and for real', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers);
    const verification = await verifySchedules(runner, true);
    assert.equal(verification.status, 'passed');
    const steps = runner.calls
      .filter((c) => c.call !== 'restore')
      .map((c) =>
        c.call === 'rep'
          ? `${c.id === serial.id ? 'serial' : c.id === depthFirst.id ? 'depth' : 'breadth'}${c.checked ? ' checked' : ''}`
          : `poison ${c.byte}`,
      );
    assert.deepEqual(steps, [
      `poison ${POISON.serial}`,
      'serial checked',
      'depth checked',
      `poison ${POISON.overlapped}`,
      'depth',
      'breadth checked',
      `poison ${POISON.overlapped}`,
      'breadth',
    ]);
  });

  it('names the mode, buffer and first element where an overlapped mode computed something else', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers, {
      write: (s, out) => {
        out.fill(7);
        if (s.id === breadthFirst.id) out[4 * 10] = 9;
      },
    });
    const verification = await verifySchedules(runner, true);
    assert.equal(verification.status, 'failed');
    assert.equal(verification.mismatches.length, 1);
    assert.deepEqual(
      { ...verification.mismatches[0] },
      {
        buffer: 'y',
        mode: breadthFirst.id,
        index: 10,
        expected: String(new Float32Array(new Uint8Array(4).fill(7).buffer)[0]),
        actual: String(new Float32Array(new Uint8Array([9, 7, 7, 7]).buffer)[0]),
        differing: 1,
        unwritten: false,
      },
    );
  });

  it('recognises elements an overlapped mode never wrote by their poison', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers, {
      write: (s, out) => {
        if (s.id === serial.id) out.fill(7);
        else out.fill(7, 0, 32 * 4);
      },
    });
    const verification = await verifySchedules(runner, true);
    assert.deepEqual(
      verification.mismatches.map((m) => [m.mode, m.index, m.differing, m.unwritten]),
      [
        [depthFirst.id, 32, 32, true],
        [breadthFirst.id, 32, 32, true],
      ],
    );
  });

  it('with verification off, still runs each verified mode once checked (to name faults) and reports skipped', async () => {
    const runner = new FakeRunner(p.schedules, p.buffers);
    const verification = await verifySchedules(runner, false);
    assert.equal(verification.status, 'skipped');
    assert.deepEqual(
      runner.calls.filter((c) => c.call === 'rep').map((c) => c.call === 'rep' && c.checked),
      [true, true, true],
    );
    assert.equal(runner.calls.filter((c) => c.call === 'poison').length, 0);
  });
});
