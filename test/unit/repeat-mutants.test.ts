import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigBuffer } from '../../src/config/types.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { measureSchedule, verifySchedules } from '../../src/measure/repeat.js';
import type { RepTiming } from '../../src/measure/runner.js';
import type { Schedule } from '../../src/plan/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { tinySweepPlan } from '../helpers/tiny-sweep.js';

// The repetition loop and verification (src/measure/repeat.ts) at the edges mutation testing found unpinned: what a
// measured mode keeps of each rep, warm-up by time, and outputs compared window by window.

const { plan } = tinySweepPlan();
const serial = plan.schedules.find((s) => s.role.kind === 'serial') as Schedule;
const fixed = { ...DEFAULT_POLICY, warmup: 0, warmupMs: 0, fixedReps: 4 };

/** A runner whose reps report scripted gate time-outs, probes and setup cost, over the fake's outputs. */
class ScriptedRunner extends FakeRunner {
  private n = 0;
  constructor(
    private readonly script: {
      gateTimedOut?: (n: number) => boolean;
      probesMs?: number[];
      setup?: { captureMs: number; instantiateMs: number } | null;
      kindRep?: (n: number) => RepTiming['kindRep'];
    },
  ) {
    super(plan.schedules, plan.buffers);
  }
  override async runRep(id: string): Promise<RepTiming> {
    const timing = await super.runRep(id);
    const n = this.n++;
    const kindRep = this.script.kindRep?.(n);
    return {
      ...timing,
      gpuMs: 1 + n,
      gateTimedOut: this.script.gateTimedOut?.(n) ?? false,
      ...(this.script.probesMs ? { probesMs: this.script.probesMs } : {}),
      ...(kindRep ? { kindRep } : {}),
    };
  }
  setupCost(): { captureMs: number; instantiateMs: number } | null {
    return this.script.setup ?? null;
  }
}

describe('a measured mode', () => {
  it('counts the reps whose gate timed out', async () => {
    const m = await measureSchedule(new ScriptedRunner({ gateTimedOut: (n) => n === 1 || n === 3 }), serial, fixed);
    assert.deepEqual([m.gpuMs, m.gateTimeouts], [[1, 2, 3, 4], 2]);
    assert.equal((await measureSchedule(new ScriptedRunner({}), serial, fixed)).gateTimeouts, 0);
  });

  it("keeps each timed rep's record of a kind's own work, in rep order, and none for a mode whose reps had none", async () => {
    const m = await measureSchedule(
      new ScriptedRunner({ kindRep: (n) => (n === 2 ? undefined : { kind: 'host', endMs: 10 + n, record: n }) }),
      serial,
      fixed,
    );
    assert.deepEqual(
      m.kindReps?.map((r) => [r.endMs, r.record]),
      [
        [10, 0],
        [11, 1],
        [13, 3],
      ],
    );
    assert.equal('kindReps' in (await measureSchedule(new ScriptedRunner({}), serial, fixed)), false);
  });

  it('keeps every probe of every rep, and no probes at all for a mode without them', async () => {
    const m = await measureSchedule(new ScriptedRunner({ probesMs: [0.1, 0.2] }), serial, fixed);
    assert.deepEqual(m.probeMs, [0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1, 0.2]);
    assert.equal('probeMs' in (await measureSchedule(new ScriptedRunner({}), serial, fixed)), false);
  });

  it('keeps the SM clock only where it could be read, and the host issue time of each rep', async () => {
    const clocks = [1980, null, 1755, null];
    const m = await measureSchedule(new ScriptedRunner({}), serial, fixed, { smClock: () => clocks.shift() ?? null });
    assert.deepEqual(m.smClockMHz, [1980, 1755]);
    assert.deepEqual(m.hostIssueMs, [0.01, 0.01, 0.01, 0.01]);
  });

  it("records a graph's setup cost where the runner has one, and the host time its timed reps took", async () => {
    const setup = { captureMs: 2, instantiateMs: 0.5 };
    const m = await measureSchedule(new ScriptedRunner({ setup }), serial, fixed);
    assert.deepEqual(m.setup, setup);
    assert.equal((await measureSchedule(new ScriptedRunner({ setup: null }), serial, fixed)).setup, null);
    assert.ok(m.elapsedMs >= 0 && m.elapsedMs < 5000, `elapsed ${m.elapsedMs} ms`);
  });

  it('warms up for the warm-up time, with no count asked for', async () => {
    // No warm-up by count: only the time asks for one, and the first check falls well within 50 ms of the start.
    const runner = new FakeRunner(plan.schedules, plan.buffers);
    await measureSchedule(runner, serial, { ...fixed, warmup: 0, warmupMs: 50 });
    assert.ok(runner.repsOf(serial.id) - 4 >= 1, `${runner.repsOf(serial.id) - 4} warm-ups in 50 ms`);
    const none = new FakeRunner(plan.schedules, plan.buffers);
    await measureSchedule(none, serial, fixed);
    assert.equal(none.repsOf(serial.id), 4, 'no warm-up asked for, none run');
  });
});

describe('verification', () => {
  it('is skipped, with no mismatches, without a verified schedule or with verify off', async () => {
    const none = new FakeRunner(
      plan.schedules.map((s) => ({ ...s, verify: false })),
      plan.buffers,
    );
    assert.deepEqual(await verifySchedules(none, true), { status: 'skipped', mismatches: [] });
    assert.deepEqual(await verifySchedules(new FakeRunner(plan.schedules, plan.buffers), false), {
      status: 'skipped',
      mismatches: [],
    });
  });

  it('says nothing was compared, not passed, for a plan with no output buffer', async () => {
    const scratchOnly = plan.buffers.map((b) =>
      b.role === 'out' || b.role === 'inout' ? { ...b, role: 'scratch' as const } : b,
    );
    const runner = new FakeRunner(plan.schedules, scratchOnly);
    assert.deepEqual(await verifySchedules(runner, true), { status: 'nothing-compared', mismatches: [] });
    // Every verified mode still ran once with checked ops, so a fault would have been found.
    const checked = runner.calls
      .filter((c) => c.call === 'rep' && c.checked)
      .map((c) => (c.call === 'rep' ? c.id : ''));
    assert.deepEqual(
      checked,
      plan.schedules.filter((s) => s.verify).map((s) => s.id),
    );
  });

  it('names the first differing element across windows and counts every differing one', async () => {
    // The output in two windows of 8 floats; the overlapped modes get element 9 (window 2, index 1) and 12 wrong.
    const y = plan.buffers.find((b) => b.name === 'y') as ConfigBuffer;
    class Windowed extends FakeRunner {
      override hostWindows(name: string): Uint8Array[] {
        const view = this.hostView(name);
        return name === 'y' ? [view.subarray(0, 32), view.subarray(32, 64)] : [view];
      }
    }
    const runner = new Windowed(plan.schedules, plan.buffers, {
      write: (s, out) => {
        out.fill(7);
        if (s.role.kind === 'overlapped') {
          out[36] = 9;
          out[48] = 9;
        }
      },
    });
    const v = await verifySchedules(runner, true);
    assert.equal(v.status, 'failed');
    const overlapped = plan.schedules.filter((s) => s.verify && s.role.kind === 'overlapped').map((s) => s.id);
    assert.deepEqual(
      v.mismatches.map((m) => [m.mode, m.buffer, m.index, m.differing]),
      overlapped.map((id) => [id, y.name, 9, 2]),
    );
  });

  describe('of a data-parallel run whose ranks store their outputs apart', () => {
    /** Two ranks of one process: each writes its own host outputs, which differ by rank as a reduce-scatter's do. */
    class Ranks extends FakeRunner {
      private readonly own = new Map<string, Uint8Array>();
      constructor(private readonly rankWrite: (rank: number, schedule: Schedule) => number) {
        super(plan.schedules, plan.buffers, { write: (schedule, out) => out.fill(rankWrite(0, schedule)) });
        for (const b of this.outputs()) this.own.set(b.name, new Uint8Array(b.bytes));
      }
      outputDevices(): readonly number[] {
        return [0, 1];
      }
      override async runRep(id: string, options = {}): Promise<RepTiming> {
        const timing = await super.runRep(id, options);
        const schedule = plan.schedules.find((s) => s.id === id) as Schedule;
        for (const view of this.own.values()) view.fill(this.rankWrite(1, schedule));
        return timing;
      }
      override poisonOutputs(byte: number): void {
        super.poisonOutputs(byte);
        for (const view of this.own.values()) view.fill(byte);
      }
      override hostWindows(name: string, device?: number): Uint8Array[] {
        return device === 1 ? [this.own.get(name) as Uint8Array] : super.hostWindows(name);
      }
    }

    it('passes where each rank agrees with its own serial outputs, though the ranks differ', async () => {
      // Were rank 1 compared with rank 0's serial copy (one host region both stored into), every mode would fail.
      const v = await verifySchedules(new Ranks((rank) => 7 + rank), true);
      assert.deepEqual([v.status, v.mismatches], ['passed', []]);
    });

    it("fails where one rank's overlapped outputs differ from its serial ones, naming that rank's device", async () => {
      const v = await verifySchedules(
        new Ranks((rank, s) => (rank === 1 && s.role.kind === 'overlapped' ? 9 : 7)),
        true,
      );
      assert.equal(v.status, 'failed');
      const overlapped = plan.schedules.filter((s) => s.verify && s.role.kind === 'overlapped').map((s) => s.id);
      assert.deepEqual(
        v.mismatches.map((m) => [m.mode, m.device]),
        overlapped.map((id) => [id, 1]),
      );
    });
  });

  describe('of a plan with a reduce-scatter, whose outputs depend on the buckets', () => {
    const scatter = {
      kind: 'collective',
      spec: { collective: 'reducescatter' },
    } as unknown as Schedule['body'][number];
    const schedules = plan.schedules.map((s) =>
      s.role.kind === 'overlapped' ? { ...s, body: [...s.body, scatter] } : s,
    );
    const overlapped = schedules.filter((s) => s.verify && s.role.kind === 'overlapped').map((s) => s.id);
    /**
     * Outputs by layout (serial's buckets give other values than each layout's), and a race in timed reps where asked.
     */
    const runner = (racy: boolean) => {
      let checked = false;
      const fake: FakeRunner = new FakeRunner(schedules, plan.buffers, {
        onRep: (s) => {
          const last = fake.calls[fake.calls.length - 1];
          checked = last?.call === 'rep' && last.checked;
          void s;
        },
        write: (s, out) => out.fill(s.role.kind === 'serial' ? 7 : 8 + (racy && !checked ? 1 : 0)),
      });
      return fake;
    };

    it('checks each layout against itself run op by op, and says so', async () => {
      const v = await verifySchedules(runner(false), true);
      assert.deepEqual([v.status, v.mismatches, v.against], ['passed', [], 'same-layout-serialised']);
    });

    it('still fails a layout whose timed rep differs from its op-by-op rep', async () => {
      const v = await verifySchedules(runner(true), true);
      assert.deepEqual(
        v.mismatches.map((m) => [m.mode, m.expected === m.actual]),
        overlapped.map((id) => [id, false]),
      );
    });
  });
});
