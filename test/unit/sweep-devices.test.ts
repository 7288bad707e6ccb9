import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { prepareSetting, type SweepAxes } from '../../src/api/sweep.js';
import { configHash } from '../../src/config/hash.js';
import { loadConfigFile } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { DEFAULT_POLICY, StoppingCriterion } from '../../src/measure/policy.js';
import { measureSchedule } from '../../src/measure/repeat.js';
import { buildRunResult } from '../../src/measure/result.js';
import { summarize } from '../../src/measure/stats.js';
import { bestOfSweep, decideRound, type RaceEntry, raceLayouts } from '../../src/measure/sweep.js';
import { builtinConfigsDir } from '../../src/paths.js';
import type { Schedule } from '../../src/plan/types.js';
import { scheduleDevices } from '../../src/plan/types.js';
import { renderSweepTable } from '../../src/report/exporters/sweep.js';
import { makeStyle } from '../../src/report/style.js';
import { RunResultSchema } from '../../src/result/schema.js';
import type { CollectiveOp } from '../../src/kinds/collective/spec.js';
import { runCli } from '../helpers/cli.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { H100 } from '../helpers/results.js';

// `sweep` over several devices: a config with a collective stage is data-parallel as `run` plans it, every layout
// (bucket count) replicated on each device in one spanning schedule, and the race finds the best bucket count.

const configs = builtinConfigsDir();
const ddpAxes: SweepAxes = { streams: [1, 2, 4, 8], chunks: [1, 2, 4, 8, 16, 32], orders: ['depth-first'], sets: [] };
const twoDevices = () => 2;

function ddpSetting(devices: number[] | 'all' | undefined, count = twoDevices) {
  return prepareSetting(loadConfigFile(join(configs, 'ddp.yaml'), { devices }), ddpAxes, { gate: false }, count);
}

const overlappedOf = (schedules: readonly Schedule[]) => schedules.filter((s) => s.role.kind === 'overlapped');
const calls = (s: Schedule) => s.body.filter((op): op is CollectiveOp => op.kind === 'collective');

describe('a sweep of ddp.yaml over two devices (data-parallel)', () => {
  const { plan, notes } = ddpSetting([0, 1]);
  const layouts = overlappedOf(plan.schedules);

  it('plans one layout per bucket count, each spanning both devices, whatever the stream counts asked for', () => {
    assert.deepEqual(
      layouts.map((s) => (s.role.kind === 'overlapped' ? s.role.layout.chunks : 0)),
      [1, 2, 4, 8, 16, 32],
    );
    assert.equal(new Set(layouts.map((s) => s.id)).size, 6);
    for (const s of layouts) assert.deepEqual(scheduleDevices(s), [0, 1], s.id);
    assert.deepEqual(plan.devices, [0, 1]);
    assert.deepEqual(
      plan.placements.map((p) => [p.device, p.base, p.elements]),
      [[1, 0, plan.device.elements]],
    );
    assert.deepEqual(notes, []);
  });

  it("groups each bucket's all-reduce across both devices: device 0 opens the group, device 1 closes it", () => {
    for (const s of layouts) {
      const chunks = s.role.kind === 'overlapped' ? s.role.layout.chunks : 0;
      const made = calls(s);
      assert.equal(made.length, 2 * chunks, s.id);
      assert.deepEqual(
        made.map((op) => `${op.stream}:${op.group?.opens ? 'opens' : op.group?.closes ? 'closes' : '-'}:${op.chunk}`),
        Array.from({ length: chunks }, (_, c) => [`d0:comm:opens:${c}`, `d1:comm:closes:${c}`]).flat(),
        s.id,
      );
    }
  });

  it('runs serial and the all-reduce alone on both devices too, and the other parts on the first alone', () => {
    const spanning = plan.schedules
      .filter((s) => scheduleDevices(s).length > 1 && s.role.kind !== 'overlapped')
      .map((s) => s.id);
    assert.deepEqual(spanning, ['serial', ...[1, 2, 4, 8, 16, 32].map((b) => `collective:allreduce:${b}-buckets`)]);
    assert.deepEqual(scheduleDevices(plan.schedules.find((s) => s.id === 'kernel:backward') as Schedule), [0]);
    assert.ok(plan.reference && scheduleDevices(plan.reference).length === 1);
  });

  it('plans the same layouts as a one-device sweep, on one device, when devices: all finds one, and says so', () => {
    const one = ddpSetting('all', () => 1);
    assert.deepEqual(
      overlappedOf(one.plan.schedules).map((s) => [s.id, scheduleDevices(s)]),
      layouts.map((s) => [s.id, [0]]),
    );
    assert.deepEqual(one.notes, ['devices: all found one device here, so this is a one-device sweep on device 0.']);
  });

  it("records each device's own time of every layout it races, so the best layout has per-device times", async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, { probeMs: (_s, i) => 1 + i });
    const raced = await raceLayouts(
      runner,
      layouts,
      { ...DEFAULT_POLICY, warmup: 0, fixedReps: 3 },
      { probeReps: 2, batchReps: 1, budgetMs: 60_000 },
    );
    assert.deepEqual(
      raced.map((m) => [m.gpuMs.length, m.probeMs]),
      layouts.map(() => [3, [1, 2, 1, 2, 1, 2]]),
    );
  });

  it('gives a Result with the communication section and the bucket model printed for the best layout', async () => {
    // Fewer buckets pay less per call, more overlap more: 8 buckets are the fastest of these made-up times.
    const layoutMs = (s: Schedule) =>
      s.role.kind === 'overlapped'
        ? 4 + Math.abs(Math.log2(s.role.layout.chunks / 8)) * 0.3
        : s.role.kind === 'serial'
          ? 8
          : 2;
    const runner = new FakeRunner(plan.schedules, plan.buffers, {
      gpuMs: (s, n) => layoutMs(s) * (1 + 0.001 * (n % 3)),
    });
    const policy = { ...DEFAULT_POLICY, warmup: 0, fixedReps: 6 };
    const base = [];
    for (const s of plan.schedules.filter((x) => x.role.kind !== 'overlapped'))
      base.push(await measureSchedule(runner, s, policy));
    const raced = await raceLayouts(runner, layouts, policy, { probeReps: 3, batchReps: 3, budgetMs: 60_000 });
    const best = bestOfSweep(raced.map((m) => ({ id: m.schedule.id, samplesMs: m.gpuMs, stats: summarize(m.gpuMs) })));
    assert.equal(best.mode, 'overlapped:8x3:depth-first:stage-per-stream');
    const { config, raw } = loadConfigFile(join(configs, 'ddp.yaml'), { devices: [0, 1] });
    const built = buildRunResult({
      toolVersion: '0.2.0',
      run: { hostname: 'h', rank: null, localRank: null, size: null, jobId: null, launcher: null },
      config,
      configHash: configHash(config),
      rawConfig: raw,
      plan,
      devices: [H100, { ...H100, index: 1 }],
      software: {
        driver: '13.0',
        runtime: '13.0',
        nvrtc: '13.0',
        nvrtcArchitectures: [],
        cudartPath: 'x',
        nvrtcPath: null,
      },
      compiles: [],
      policy,
      gate: false,
      clockUnavailable: null,
      measured: [...base.slice(0, 1), ...raced, ...base.slice(1)],
      verification: { status: 'passed', mismatches: [] },
      traced: [],
      sweep: {
        axes: [{ name: 'chunks', values: [...ddpAxes.chunks] }],
        settings: {},
        points: layouts.flatMap((s) =>
          s.role.kind === 'overlapped'
            ? [{ mode: s.id, chunks: s.role.layout.chunks, streams: s.role.layout.streams, order: s.role.layout.order }]
            : [],
        ),
        best,
        budgetMs: 60_000,
        elapsedMs: 1_000,
      },
    });
    const result = {
      ...built,
      summary: { ...built.summary, mode: best.mode },
      communicator: {
        library: 'nccl' as const,
        version: '2.27.3',
        ranks: 2,
        localDevices: [0, 1],
        nvls: 'off' as const,
      },
    };
    assert.ok(RunResultSchema.safeParse(JSON.parse(JSON.stringify(result))).success);
    assert.deepEqual(
      result.modes.find((m) => m.id === best.mode)?.perDevice?.map((d) => d.device),
      [0, 1],
    );
    const text = renderSweepTable(result, makeStyle({ isTTY: false } as NodeJS.WriteStream));
    assert.match(text, /best: 8 chunks × 3 streams, depth-first/);
    assert.match(text, /communication: NCCL 2\.27\.3, 2 ranks, this process drives GPUs 0, 1, NVLink multicast off:/);
    // The per-rank figures of a mode spanning devices are issue 24's third point, fixed in the communication section.
    assert.match(text, /all-reduce alone: \d+ calls? of [\d.]+ [MG]iB per rank/);
    assert.match(text, /bucket model: 32 layers computing 4\.000 ms \(kernels alone\), 8 buckets of /);
  });
});

describe('a sweep over several devices without a collective', () => {
  it('refuses the split of balanced (exit 2), naming the field and what a sweep spans devices for', () => {
    const loaded = loadConfigFile(join(configs, 'balanced.yaml'), { devices: [0, 1] });
    assert.throws(
      () => prepareSetting(loaded, { ...ddpAxes, streams: [4] }, { gate: false }, twoDevices),
      (error: unknown) =>
        error instanceof UsageError &&
        error.exitCode === 2 &&
        /^--devices 0,1: a sweep spans devices 0, 1 only data-parallel, for a config with a collective stage \(such as configs\/ddp\.yaml\); balanced has none/.test(
          error.message,
        ),
    );
  });
});

describe('the decisions of a round of the race', () => {
  const entry = (gpuMs: number[], stopped: RaceEntry['stopped'] = null): RaceEntry => ({
    gpuMs,
    startedMs: 0,
    judged: 0,
    criterion: new StoppingCriterion({ ...DEFAULT_POLICY, minReps: 4, maxNoise: 0.01 }),
    stopped,
  });
  const race = { probeReps: 3, batchReps: 2, budgetMs: 1_000 };
  const policy = { ...DEFAULT_POLICY, minReps: 4, maxNoise: 0.01 };

  it('gives every layout its probe reps before any sample, judging none', () => {
    const entries = [entry([]), entry([])];
    assert.deepEqual(decideRound(entries, policy, race, { round: 0, raceStartMs: 0, nowMs: 5_000 }), {
      stopped: [null, null],
      reps: [3, 3],
    });
  });

  it('stops a layout by the noise rule, drops one clearly slower, and gives the rest a batch', () => {
    const entries = [entry([1, 1, 1, 1]), entry([1, 1.2, 0.9]), entry([2, 2.1, 2.2])];
    assert.deepEqual(decideRound(entries, policy, race, { round: 1, raceStartMs: 0, nowMs: 10 }), {
      stopped: ['noise-target', null, 'clearly-slower'],
      reps: [0, 2, 0],
    });
    assert.deepEqual(
      entries.map((e) => e.judged),
      [4, 3, 3],
    );
  });

  it('stops every layout still running once the budget is spent, and never gives more reps than a fixed count', () => {
    const spent = [entry([1, 1.1]), entry([1, 1.2], 'noise-target')];
    assert.deepEqual(decideRound(spent, policy, race, { round: 2, raceStartMs: 0, nowMs: 1_000 }).stopped, [
      'max-time',
      'noise-target',
    ]);
    const fixed = [entry([1, 1.5])];
    assert.deepEqual(
      decideRound(fixed, { ...policy, fixedReps: 3 }, race, { round: 1, raceStartMs: 0, nowMs: 10 }).reps,
      [1],
    );
  });
});

describe('the sweep command over several devices', () => {
  const noGpu = {
    skip:
      gpuSkipReason() === null ? 'a GPU is here: these expect the sweep to stop at the missing NCCL or driver' : false,
  };

  it(
    'gets past planning for ddp.yaml over --devices 0,1 and stops where the GPU is missing (exit 3, not 2)',
    noGpu,
    () => {
      const run = runCli(['sweep', join(configs, 'ddp.yaml'), '--devices', '0,1', '--max-time', '1']);
      assert.equal(run.code, 3, run.stderr);
      assert.doesNotMatch(run.stderr, /span devices|only data-parallel/);
    },
  );

  it('refuses balanced over --devices 0,1 with exit 2, saying that a sweep spans devices only data-parallel', () => {
    const run = runCli(['sweep', join(configs, 'balanced.yaml'), '--devices', '0,1']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--devices 0,1: a sweep spans devices 0, 1 only data-parallel/);
  });
});
