import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';
import type { ConfigBuffer } from '../../src/config/types.js';
import { POISON } from '../../src/data/compare.js';
import { Interrupted } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { RepGuard } from '../../src/measure/guard.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { measureSchedule, measureSchedules, verifySchedules } from '../../src/measure/repeat.js';
import type { Agreement, RepOptions, RepTiming } from '../../src/measure/runner.js';
import { builtinConfigsDir } from '../../src/paths.js';
import { buildPlan } from '../../src/plan/build.js';
import type { Schedule } from '../../src/plan/types.js';
import { ranksAgreeing } from '../helpers/agreement.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { tinySweepPlan } from '../helpers/tiny-sweep.js';

// Verification as src/measure/repeat.ts runs it where a CPU test had not reached: an all-reduce's sums checked against
// the reference rep on every rank (ddp.yaml over two devices), a config's tolerance and its largest error, the one
// output device of a single-GPU run, a layout checked against itself; and the rep loop's agreement between ranks, its
// clock and its guard.

const DEADLINE = { timeout: 5_000 };

const f32 = (bytes: Uint8Array) => new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);

describe('verification of an all-reduce against its reference rep (ddp.yaml over two devices)', () => {
  const { config, locate } = loadConfigFile(join(builtinConfigsDir(), 'ddp.yaml'), { devices: [0, 1] });
  const plan = buildPlan(config, resolveKernels(config, locate), { devices: [0, 1] });
  const reference = plan.reference as Schedule;
  const check = plan.buffers.find((b) => b.name === 'check') as ConfigBuffer;
  const verified = plan.schedules.filter((s) => s.verify);
  const overlapped = verified.filter((s) => s.role.kind === 'overlapped').map((s) => s.id);

  /**
   * Two ranks of one process, each storing its own checksums: `value(schedule, device)` is what a rep of the schedule
   * leaves in every checksum on that device. The reference runs on the primary alone and writes only its outputs.
   */
  class Ranks extends FakeRunner {
    private readonly second: Uint8Array;
    constructor(
      private readonly value: (schedule: Schedule, device: number) => number,
      private readonly devices: readonly number[] = [0, 1],
    ) {
      super(verified, [check], {
        unmeasured: [reference],
        write: (schedule, bytes) => f32(bytes).fill(value(schedule, 0)),
      });
      this.second = new Uint8Array(check.bytes);
    }
    outputDevices(): readonly number[] {
      return this.devices;
    }
    override async runRep(id: string, options: RepOptions = {}): Promise<RepTiming> {
      const timing = await super.runRep(id, options);
      const schedule = verified.find((s) => s.id === id);
      if (schedule) f32(this.second).fill(this.value(schedule, 1));
      return timing;
    }
    override poisonOutputs(byte: number): void {
      super.poisonOutputs(byte);
      this.second.fill(byte);
    }
    override hostWindows(name: string, device?: number): Uint8Array[] {
      return device === 1 ? [this.second] : super.hostWindows(name);
    }
  }

  /** The reference's checksums are 1.25; a rep with the all-reduce leaves `summed(device)` × that on each device. */
  const ranks = (summed: (device: number) => number) =>
    new Ranks((schedule, device) => (schedule.id === reference.id ? 1.25 : 1.25 * summed(device)));
  const over = (n: number) => ({ reference, ranks: n });
  const record = {
    rule: 'allreduce-sum',
    text: 'all-reduce (sum) over 2 ranks of equal inputs: serial\'s 32 of "check" equal 2 × those of serial with its collectives left out, exactly',
    ranks: 2,
    buffers: [{ name: 'check', elements: 32 }],
    exact: true,
  };

  it(
    "passes where each rank's serial checksums are twice the reference's, and records the check",
    DEADLINE,
    async () => {
      const runner = ranks(() => 2);
      const v = await verifySchedules(runner, true, undefined, null, over(2));
      assert.deepEqual(v, { status: 'passed', mismatches: [], reduction: { ...record, status: 'passed' } });
      // The reference runs once, after serial, with checked ops, into outputs poisoned apart from serial's.
      assert.deepEqual(runner.calls, [
        { call: 'restore' },
        { call: 'poison', byte: POISON.serial },
        { call: 'rep', id: 'serial', checked: true, deadlineMs: 60_000 },
        { call: 'restore' },
        { call: 'poison', byte: POISON.overlapped },
        { call: 'rep', id: reference.id, checked: true, deadlineMs: 60_000 },
        ...overlapped.flatMap((id) => [
          { call: 'restore' },
          { call: 'rep', id, checked: true, deadlineMs: 60_000 },
          { call: 'restore' },
          { call: 'poison', byte: POISON.overlapped },
          { call: 'rep', id, checked: false, deadlineMs: 1_000 },
        ]),
      ]);
    },
  );

  it(
    'fails the rank whose all-reduce summed nothing, naming serial, its device, the sum and what it found',
    DEADLINE,
    async () => {
      // Rank 1's all-reduce a no-op: its serial and overlapped modes agree with each other, so only the check finds it.
      const v = await verifySchedules(
        ranks((device) => (device === 1 ? 1 : 2)),
        true,
        undefined,
        null,
        over(2),
      );
      assert.deepEqual(v, {
        status: 'failed',
        mismatches: [
          {
            buffer: 'check',
            index: 0,
            expected: '2.5',
            actual: '1.25',
            differing: 32,
            unwritten: false,
            mode: 'serial',
            device: 1,
          },
        ],
        reduction: { ...record, status: 'failed' },
      });
    },
  );

  it("keeps the first rank's failed check though the next rank's passes", DEADLINE, async () => {
    const v = await verifySchedules(
      ranks((device) => (device === 0 ? 3 : 2)),
      true,
      undefined,
      null,
      over(2),
    );
    assert.deepEqual(
      [v.status, v.reduction?.status, v.mismatches.map((m) => [m.mode, m.device, m.expected, m.actual])],
      ['failed', 'failed', [['serial', 0, '2.5', '3.75']]],
    );
  });

  it('neither runs the reference nor checks the sums with verification off', DEADLINE, async () => {
    const runner = ranks(() => 1);
    assert.deepEqual(await verifySchedules(runner, false, undefined, null, over(2)), {
      status: 'skipped',
      mismatches: [],
    });
    assert.deepEqual(
      runner.calls.flatMap((c) => (c.call === 'rep' ? [[c.id, c.checked]] : [])),
      [['serial', true], ...overlapped.map((id) => [id, true])],
    );
  });

  describe('over four ranks, where the order of additions rounds', () => {
    /** Serial's checksums 4 × the reference's, off by `relative`, as float32 stores them. */
    const off = (relative: number) => {
      const stored = Math.fround(5 * (1 + relative));
      return { runner: ranks(() => stored / 1.25), error: Math.abs(stored - 5) };
    };
    const words = (rule: string) =>
      'all-reduce (sum) over 4 ranks of equal inputs: serial\'s 32 of "check" equal 4 × those of serial with its ' +
      `collectives left out, within ${rule}`;

    it('passes within the default tolerance of 1e-5, reporting the rule and the largest error', DEADLINE, async () => {
      const { runner, error } = off(4e-6);
      const v = await verifySchedules(runner, true, undefined, null, over(4));
      assert.deepEqual(v.reduction, {
        ...record,
        text: words('0.00001 relative, 0 absolute'),
        ranks: 4,
        exact: false,
        tolerance: { relative: 1e-5, absolute: 0, largestError: { absolute: error, relative: error / 5 } },
        status: 'passed',
      });
      assert.deepEqual([v.status, v.mismatches], ['passed', []]);
    });

    it('fails just outside it, on both ranks, with every checksum counted', DEADLINE, async () => {
      const v = await verifySchedules(off(2e-5).runner, true, undefined, null, over(4));
      assert.deepEqual(
        [v.status, v.reduction?.status],
        ['failed', 'failed'],
        `the largest relative error ${v.reduction?.tolerance?.largestError.relative}`,
      );
      assert.deepEqual(
        v.mismatches.map((m) => [m.mode, m.device, m.index, m.expected, m.actual, m.differing]),
        [0, 1].map((device) => ['serial', device, 0, '5', String(Math.fround(5 * (1 + 2e-5))), 32]),
      );
    });

    it("takes the config's tolerance over the default, for the sums and for the modes' outputs", DEADLINE, async () => {
      const { runner, error } = off(2e-5);
      const tolerance = { relative: 1e-3, absolute: 0 };
      const v = await verifySchedules(runner, true, undefined, tolerance, over(4));
      assert.deepEqual(
        [v.status, v.reduction?.status, v.reduction?.text, v.reduction?.tolerance],
        [
          'passed',
          'passed',
          words('0.001 relative, 0 absolute'),
          { ...tolerance, largestError: { absolute: error, relative: error / 5 } },
        ],
      );
      // The overlapped modes matched serial exactly: the modes' own comparison saw no error.
      assert.deepEqual(v.tolerance, { ...tolerance, largestError: { absolute: 0, relative: 0 } });
    });
  });
});

describe("verification of a kernel's outputs within the config's tolerance", () => {
  const { plan } = tinySweepPlan();
  const overlapped = plan.schedules.filter((s) => s.verify && s.role.kind === 'overlapped');
  /** The tiny plan's y in two windows of 2,048 floats: serial 1 everywhere, each overlapped mode `first`, `second`. */
  class Windowed extends FakeRunner {
    constructor(first: number, second: number, schedules = plan.schedules) {
      super(schedules, plan.buffers, {
        write: (s, out) => {
          const y = f32(out);
          y.fill(s.role.kind === 'overlapped' ? first : 1, 0, 2048);
          y.fill(s.role.kind === 'overlapped' ? second : 1, 2048);
        },
      });
    }
    override hostWindows(name: string): Uint8Array[] {
      const view = this.hostView(name);
      return name === 'y' ? [view.subarray(0, 8192), view.subarray(8192)] : [view];
    }
  }
  const tolerance = { relative: 0, absolute: 1e-3 };

  it('passes outputs within it and reports the largest error over every window', DEADLINE, async () => {
    const v = await verifySchedules(new Windowed(1.0001, 1.0009, plan.schedules), true, undefined, tolerance);
    const largest = Math.fround(1.0009) - 1;
    assert.deepEqual(v, {
      status: 'passed',
      mismatches: [],
      tolerance: { ...tolerance, largestError: { absolute: largest, relative: largest } },
    });
  });

  it(
    'fails an output just outside it, at the first element past the tolerance, counted over both windows',
    DEADLINE,
    async () => {
      const v = await verifySchedules(new Windowed(1.0009, 1.0011), true, undefined, tolerance);
      assert.equal(v.status, 'failed');
      assert.deepEqual(
        v.mismatches.map((m) => [m.mode, m.buffer, m.index, m.expected, m.actual, m.differing, m.unwritten]),
        overlapped.map((s) => [s.id, 'y', 2048, '1', String(Math.fround(1.0011)), 2048, false]),
      );
      const largest = Math.fround(1.0011) - 1;
      assert.deepEqual(v.tolerance?.largestError, { absolute: largest, relative: largest });
    },
  );

  it('compares an output only copied byte for byte, even within the tolerance', DEADLINE, async () => {
    const copiesOnly = plan.schedules.map((s) => ({ ...s, body: s.body.filter((op) => op.kind !== 'kernel') }));
    const v = await verifySchedules(new Windowed(1.0001, 1, copiesOnly), true, undefined, tolerance);
    assert.deepEqual(
      v.mismatches.map((m) => [m.mode, m.index, m.differing]),
      overlapped.map((s) => [s.id, 0, 2048]),
    );
    assert.deepEqual(v.tolerance?.largestError, { absolute: 0, relative: 0 });
  });
});

describe('verification of a single-GPU run, whose runner lists its one output device', () => {
  const { plan } = tinySweepPlan();
  class OneDevice extends FakeRunner {
    outputDevices(): readonly number[] {
      return [0];
    }
  }

  it('names no device in a mismatch where there is only one', DEADLINE, async () => {
    const runner = new OneDevice(plan.schedules, plan.buffers, {
      write: (s, out) => f32(out).fill(s.role.kind === 'overlapped' ? 2 : 1),
    });
    const v = await verifySchedules(runner, true);
    const first = plan.schedules.find((s) => s.verify && s.role.kind === 'overlapped') as Schedule;
    assert.deepEqual(v.mismatches[0], {
      buffer: 'y',
      index: 0,
      expected: '1',
      actual: '2',
      differing: 4096,
      unwritten: false,
      mode: first.id,
    });
  });
});

describe('verification of layouts whose outputs depend on the buckets (a reduce-scatter)', () => {
  const { plan } = tinySweepPlan();
  const scatter = { kind: 'collective', spec: { collective: 'reducescatter' } } as unknown as Schedule['body'][number];
  const schedules = plan.schedules.map((s) =>
    s.role.kind === 'overlapped' ? { ...s, body: [...s.body, scatter] } : s,
  );
  const overlapped = schedules.filter((s) => s.verify && s.role.kind === 'overlapped').map((s) => s.id);

  it('finds an element no rep of a layout writes in every layout, not only the first', DEADLINE, async () => {
    // Every layout leaves y[0] unwritten. Its op-by-op rep must start from serial's poison: otherwise the second
    // layout's copy holds the overlapped poison the first layout's timed rep left, and its own timed rep matches it.
    const runner = new FakeRunner(schedules, plan.buffers, {
      write: (s, out) => {
        if (s.role.kind === 'serial') f32(out).fill(7);
        else f32(out).fill(8, 1);
      },
    });
    const v = await verifySchedules(runner, true);
    assert.deepEqual(
      v.mismatches.map((m) => [m.mode, m.index, m.differing, m.unwritten]),
      overlapped.map((id) => [id, 0, 1, true]),
    );
    assert.ok(overlapped.length >= 2, 'two layouts at least');
  });
});

describe('the rep loop', () => {
  const { plan } = tinySweepPlan();
  const serial = plan.schedules.find((s) => s.role.kind === 'serial') as Schedule;
  const fixed = (reps: number) => ({ ...DEFAULT_POLICY, warmup: 0, warmupMs: 0, fixedReps: reps });

  class Rank extends FakeRunner {
    constructor(readonly agreement: Agreement) {
      super(plan.schedules, plan.buffers);
    }
  }

  it('takes another rep on every rank while any rank asks for one', DEADLINE, async () => {
    const { agreements, log } = ranksAgreeing(2);
    const [a, b] = agreements as [Agreement, Agreement];
    const [early, late] = await Promise.all([
      measureSchedule(new Rank(a), serial, fixed(2)),
      measureSchedule(new Rank(b), serial, fixed(4)),
    ]);
    assert.deepEqual(
      [early.gpuMs.length, early.stoppedBy, late.gpuMs.length, late.stoppedBy],
      [4, 'fixed-reps', 4, 'fixed-reps'],
    );
    assert.deepEqual(log[0], log[1], 'both ranks asked the same questions');
  });

  it('warms up until the warm-up time has passed, and times the reps from the first timed one', DEADLINE, async (t) => {
    // A fake clock that only a rep moves, 2 ms a rep: warm-ups at 0 and 2 ms of a 4 ms warm-up, none at 4 ms.
    let now = 100;
    t.mock.method(performance, 'now', () => now);
    const runner = new FakeRunner(plan.schedules, plan.buffers, { onRep: () => (now += 2) });
    const m = await measureSchedule(runner, serial, { ...fixed(3), warmupMs: 4 });
    assert.deepEqual([runner.repsOf(serial.id), m.gpuMs.length, m.elapsedMs], [5, 3, 6]);
  });

  it("passes every mode's reps through the guard it is given, which stops at an interrupt", DEADLINE, async () => {
    const controller = new AbortController();
    controller.abort('SIGINT');
    const runner = new FakeRunner(plan.schedules, plan.buffers);
    await assert.rejects(
      measureSchedules(runner, fixed(2), { guard: new RepGuard({ signal: controller.signal }) }),
      (e: unknown) => e instanceof Interrupted && /^Interrupted \(SIGINT\) before a rep of /.test(e.message),
    );
    assert.equal(runner.repsOf(serial.id), 0);
  });
});
