import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settingCombinations } from '../../src/api/sweep.js';
import { configHash } from '../../src/config/hash.js';
import { parseConfigText } from '../../src/config/load.js';
import { parseSettingPath, withSettings } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import type { MeasuredSchedule } from '../../src/measure/repeat.js';
import { buildRunResult } from '../../src/measure/result.js';
import { bestOfSweep, dropClearlySlower, raceLayouts } from '../../src/measure/sweep.js';
import { summarize } from '../../src/measure/stats.js';
import { buildLayoutsPlan } from '../../src/plan/build.js';
import { renderSweepMarkdown, renderSweepTable, yamlFragment } from '../../src/report/exporters/sweep.js';
import { renderSweepChart } from '../../src/report/sweep-chart.js';
import { makeStyle } from '../../src/report/style.js';
import type { Plan, Schedule } from '../../src/plan/types.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { H100, samplesAround } from '../helpers/results.js';
import { TINY_CONFIG } from '../helpers/tiny-sweep.js';

const CONFIG = `${TINY_CONFIG}sweep:
  set: { "kernels[0].args[3].int32": [50, 100] }
`;
const loaded = parseConfigText(CONFIG, '/cfg/tiny.yaml');
const layouts = [1, 2, 4].flatMap((streams) => [1, 4, 16].map((chunks) => ({ chunks, streams })));
const plan: Plan = buildLayoutsPlan(loaded.config, resolveKernels(loaded.config, loaded.locate), layouts, [
  'depth-first',
  'breadth-first',
]);
const overlapped = plan.schedules.filter((s) => s.role.kind === 'overlapped');

/** A made-up but plausible time for a layout: more streams and chunks help until per-chunk costs win. */
function layoutMs(s: Schedule): number {
  if (s.role.kind !== 'overlapped') return s.role.kind === 'serial' ? 3 : 1;
  const { chunks, streams, order } = s.role.layout;
  return 1 + 2 / Math.min(chunks, streams + 1) + chunks * 0.02 + (order === 'breadth-first' ? 0.3 : 0);
}

describe("the race of a sweep's layouts", () => {
  it('plans every layout in every order once, with one chunked-kernel mode per chunk and stream count', () => {
    // 1 stream and 1 chunk give the same 1×1 layout whatever the requested streams, so 7 distinct layouts, not 9.
    assert.equal(overlapped.length, 7 * 2);
    assert.equal(plan.schedules.filter((s) => s.role.kind === 'kernels-chunked').length, 7);
    assert.equal(plan.schedules.filter((s) => s.role.kind === 'serial').length, 1);
  });

  it('stops clearly slower layouts early and keeps measuring the contenders', async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, {
      gpuMs: (s, n) => layoutMs(s) * (1 + 0.004 * Math.sin(n * 2.4)),
    });
    const measured = await raceLayouts(
      runner,
      overlapped,
      { ...DEFAULT_POLICY, warmup: 0, minReps: 10 },
      { probeReps: 5, batchReps: 5, budgetMs: 10_000 },
    );
    const best = measured.reduce((a, b) => (summarize(b.gpuMs).median < summarize(a.gpuMs).median ? b : a));
    assert.notEqual(best.stoppedBy, 'clearly-slower');
    assert.ok(best.gpuMs.length >= 10);
    const dropped = measured.filter((m) => m.stoppedBy === 'clearly-slower');
    assert.ok(dropped.length >= overlapped.length / 2, `${dropped.length} of ${overlapped.length} stopped early`);
    assert.ok(dropped.every((m) => m.gpuMs.length < best.gpuMs.length));
    assert.ok(dropped.every((m) => summarize(m.gpuMs).median > summarize(best.gpuMs).median));
  });

  it('gives every layout at least its probe reps, and stops the rest when the budget is spent', async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, { gpuMs: (_s, n) => 1 + (n % 3) * 0.2, delayMs: 1 });
    const measured = await raceLayouts(
      runner,
      overlapped,
      { ...DEFAULT_POLICY, warmup: 0, minReps: 50 },
      { probeReps: 3, batchReps: 2, budgetMs: 1 },
    );
    assert.ok(measured.every((m) => m.gpuMs.length >= 3));
    assert.ok(measured.every((m) => m.stoppedBy === 'max-time'));
  });

  it("drops a layout only when its middle half lies wholly above the best's", () => {
    const states = [
      { gpuMs: samplesAround(1, 0.01, 10), stopped: null },
      { gpuMs: samplesAround(1.005, 0.01, 10), stopped: null },
      { gpuMs: samplesAround(1.2, 0.01, 10), stopped: null },
    ];
    dropClearlySlower(states);
    assert.deepEqual(
      states.map((s) => s.stopped),
      [null, null, 'clearly-slower'],
    );
  });

  it('names the best layout and the ones whose middle half overlaps it as ties', () => {
    const mode = (id: string, median: number, spread: number) => {
      const stats = { median, q1: median - spread, q3: median + spread };
      return { id, samplesMs: [], stats };
    };
    assert.deepEqual(
      bestOfSweep([mode('a', 5.9, 0.02), mode('b', 5.83, 0.02), mode('c', 5.86, 0.02), mode('d', 7, 0.1)]),
      { mode: 'b', ties: ['c'] },
    );
  });
});

describe('sweep settings', () => {
  it('reads paths with fields and indexes', () => {
    assert.deepEqual(parseSettingPath('kernels[0].args[3].int32'), ['kernels', 0, 'args', 3, 'int32']);
    assert.deepEqual(parseSettingPath('buffers.input.size'), ['buffers', 'input', 'size']);
    assert.throws(() => parseSettingPath('kernels[x]'), UsageError);
  });

  it('makes every combination of the other axes', () => {
    assert.deepEqual(
      settingCombinations([
        { path: 'a', values: [1, 2] },
        { path: 'b', values: ['x', 'y'] },
      ]).map((c) => c.map((s) => `${s.path}=${s.value}`).join(' ')),
      ['a=1 b=x', 'a=1 b=y', 'a=2 b=x', 'a=2 b=y'],
    );
    assert.deepEqual(settingCombinations([]), [[]]);
  });

  it('applies a setting to the config and checks it again, blaming a bad value on the setting', () => {
    const variant = withSettings(loaded, [{ path: 'kernels[0].args[3].int32', value: 50 }]);
    assert.deepEqual(variant.config.kernels[0]?.args[3], { kind: 'scalar', type: 'int32', value: 50 });
    assert.notEqual(configHash(variant.config), configHash(loaded.config));
    assert.throws(
      () => withSettings(loaded, [{ path: 'pipeline.chunks', value: 0 }]),
      /sweep setting pipeline\.chunks=0: pipeline\.chunks/,
    );
    assert.throws(
      () => withSettings(loaded, [{ path: 'nothing.here', value: 1 }]),
      /sweep setting nothing\.here=1: "nothing\.here" is not a config path: the config has no field "nothing"/,
    );
    assert.throws(
      () => withSettings(loaded, [{ path: 'kernels[5].block', value: 1 }]),
      /the config has no kernels\.5 to set a value inside/,
    );
  });
});

describe('sweep reports', () => {
  const measured: MeasuredSchedule[] = plan.schedules.map((schedule) => ({
    schedule,
    gpuMs: samplesAround(layoutMs(schedule), 0.002, 12),
    hostIssueMs: samplesAround(0.05, 0.01, 12),
    stoppedBy: schedule.role.kind === 'overlapped' && layoutMs(schedule) > 2 ? 'clearly-slower' : 'noise-target',
    elapsedMs: 10,
    smClockMHz: [],
    gateTimeouts: 0,
  }));
  const points = overlapped
    .map((s) => (s.role.kind === 'overlapped' ? { mode: s.id, ...s.role.layout } : null))
    .flatMap((p) => (p ? [{ mode: p.mode, chunks: p.chunks, streams: p.streams, order: p.order }] : []));
  const layouts = measured.filter((m) => m.schedule.role.kind === 'overlapped');
  const best = bestOfSweep(layouts.map((m) => ({ id: m.schedule.id, samplesMs: m.gpuMs, stats: summarize(m.gpuMs) })));
  const build = (policy = DEFAULT_POLICY) =>
    buildRunResult({
      toolVersion: '0.2.0',
      run: { hostname: 'h', rank: null, localRank: null, size: null, jobId: null, launcher: null },
      config: loaded.config,
      configHash: configHash(loaded.config),
      rawConfig: loaded.raw,
      plan,
      devices: [H100],
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
      measured,
      verification: { status: 'passed', mismatches: [] },
      traced: [],
      sweep: {
        axes: [{ name: 'streams', values: [1, 2, 4] }],
        settings: { 'kernels[0].args[3].int32': 100 },
        points,
        best,
        budgetMs: 40_000,
        elapsedMs: 12_345,
      },
    });
  const result = build();

  it('are valid Results, warning about the best layout only', () => {
    assert.ok(RunResultSchema.safeParse(JSON.parse(JSON.stringify(result))).success);
    // 1 chunk over 1 stream is slower than serial, but stopped early: a layout the race rejected warns of nothing.
    const oneByOne = result.modes.filter((m) => m.description.startsWith('1 chunks over 1 streams'));
    assert.ok(oneByOne.length === 2 && oneByOne.every((m) => (m.analysis?.speedup ?? 1) < 1));
    // The fake runner's one-stream layouts run faster than their streams term allows, which every layout reports
    // as a defect of the model (above-bound); of the rest, a rejected layout warns of nothing.
    const judged = (warnings: typeof result.warnings) => warnings.filter((w) => w.code !== 'above-bound');
    assert.deepEqual(judged(result.warnings), []);
    assert.ok(result.warnings.every((w) => w.code === 'above-bound' && /over 1 streams/.test(w.message)));
    // Every mode's noise (0.2%) above a 0.1% target: only serial and the best layout are judged.
    const strict = build({ ...DEFAULT_POLICY, maxNoise: 0.001 });
    assert.deepEqual(
      judged(strict.warnings).map((w) => [w.code, w.message.replace(/ is .*/, '')]),
      [
        ['noisy', 'Noise of the serial mode'],
        ['noisy', 'Noise of the overlapped mode (4 chunks over 4 streams, depth-first)'],
      ],
    );
  });

  it('print a heat map per order with the best in it, its ties, and the YAML that reproduces it', () => {
    const text = renderSweepTable(result, makeStyle({ isTTY: false } as NodeJS.WriteStream));
    assert.match(text, /depth-first: streams \\ chunks/);
    assert.match(text, /breadth-first: streams \\ chunks/);
    assert.match(text, /best: 4 chunks × 4 streams, depth-first: 1\.580 ms/);
    assert.match(text, /with kernels\[0\]\.args\[3\]\.int32 = 100/);
    assert.match(
      text,
      /^14 layouts in 12\.3 s \(budget 40 s\): 9 dropped after 12 reps, 5 ran 12 reps of ≤ 1\.987 ms$/m,
    );
    assert.match(text, /^change: chunks: 4, streams: 4, order: depth-first in tiny\.yaml's pipeline$/m);
    assert.deepEqual(yamlFragment(result), [
      'pipeline:',
      '  chunks: 4',
      '  streams: 4',
      '  order: depth-first',
      '# and kernels[0].args[3].int32: 100',
    ]);
    assert.match(renderSweepMarkdown(result), /\| 4 \| [^|]+ \| \*\*1\.90×\*\* \|/);
  });

  it('draw speedup against chunks, one line per stream count and order', () => {
    const svg = renderSweepChart(result);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 6);
    assert.match(svg, /4 streams, depth-first, 4 chunks: 1\.90×/);
  });
});
