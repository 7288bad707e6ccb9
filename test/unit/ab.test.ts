import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { interleaveMode, pairSchedules, type InterleaveOptions } from '../../src/api/ab.js';
import { logRatios, pairedEstimate, pairedMeasured, signTestRanks } from '../../src/compare/paired.js';
import { confirmWithClocks, judge, pairedRule } from '../../src/compare/rule.js';
import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { RepGuard } from '../../src/measure/guard.js';
import { buildPlan } from '../../src/plan/build.js';
import type { Schedule } from '../../src/plan/types.js';
import { AbResultSchema, type AbResult } from '../../src/result/ab.js';
import { renderAbMarkdown, renderAbTable } from '../../src/report/ab.js';
import { makeStyle } from '../../src/report/style.js';
import { runCli } from '../helpers/cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { H100 } from '../helpers/results.js';

const CONFIG = (factor: number) => `buffers:
  x: { type: float32, count: 64, role: in }
  y: { type: float32, count: 64, role: out }
kernels:
  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: ${factor} }] }
pipeline: { chunks: 4, streams: 2 }
`;
const planOf = (factor: number) => {
  const { config, locate } = parseConfigText(CONFIG(factor), '/cfg/ab.yaml');
  return buildPlan(config, resolveKernels(config, locate));
};
const planA = planOf(2);
const planB = planOf(3);
const serialOf = (schedules: readonly Schedule[]) => schedules.find((s) => s.role.kind === 'serial') as Schedule;

/** Deterministic jitter in [-1, 1], different for every rep and side. */
const jitter = (n: number, side: number) => Math.sin(n * 2.399963 + side * 1.7);

describe('paired statistics', () => {
  const decide = (a: number[], b: number[], band = 0.005) =>
    judge(pairedMeasured(pairedEstimate(logRatios(a, b), 0.9), 0.9), { band });

  it("takes the sign test's ranks from the binomial tail: at 90%, none below 5 pairs, 1 at 5, 2 at 10, 6 at 20", () => {
    assert.deepEqual(
      [4, 5, 10, 20].map((n) => signTestRanks(n, 0.9)),
      [null, 1, 2, 6],
    );
    // At 95%: none below 6 pairs, as version 1 documents were judged.
    assert.deepEqual(
      [5, 6, 10, 20].map((n) => signTestRanks(n, 0.95)),
      [null, 1, 2, 6],
    );
    // At 2000 pairs the 90% interval spans about ±1.645·√n/2 ranks around the middle: 1000 − 36.8, so 963.
    assert.equal(signTestRanks(2000, 0.9), 963);
  });

  it('estimates the median ratio with its interval, and mirrors exactly when A and B swap', () => {
    const a = Array.from({ length: 10 }, (_, i) => 10 * (1 + 0.001 * jitter(i, 0)));
    const b = Array.from({ length: 10 }, (_, i) => 10.1 * (1 + 0.001 * jitter(i, 1)));
    const ab = pairedEstimate(logRatios(a, b), 0.9);
    const ba = pairedEstimate(logRatios(b, a), 0.9);
    assert.ok(Math.abs(ab.ratio - 1.01) < 0.002, String(ab.ratio));
    assert.ok((ab.low ?? 0) < ab.ratio && ab.ratio < (ab.high ?? 0));
    assert.ok(Math.abs(ab.ratio * ba.ratio - 1) < 1e-12 && Math.abs((ab.low ?? 0) * (ba.high ?? 0) - 1) < 1e-12);
  });

  it('calls a 1% heavier kernel with 0.1% noise slower, and its mirror faster', () => {
    const a = Array.from({ length: 10 }, (_, i) => 10 * (1 + 0.001 * jitter(i, 0)));
    const b = Array.from({ length: 10 }, (_, i) => 10.1 * (1 + 0.001 * jitter(i, 1)));
    assert.equal(decide(a, b), 'slower');
    assert.equal(decide(b, a), 'faster');
  });

  it('calls unchanged code same, a 0.3% change same inside the 0.5% band, and slower past a 0.2% band', () => {
    const a = Array.from({ length: 10 }, (_, i) => 10 * (1 + 0.001 * jitter(i, 0)));
    const same = Array.from({ length: 10 }, (_, i) => 10 * (1 + 0.001 * jitter(i, 1)));
    const slightly = a.map((x) => x * 1.003);
    assert.equal(decide(a, same), 'same');
    assert.equal(decide(a, slightly), 'same');
    assert.equal(decide(a, slightly, 0.002), 'slower');
  });

  it('calls a copy mode that moves 2% with 5% noise over 40 pairs noisy, where the noise rule called it same', () => {
    const a = Array.from({ length: 40 }, (_, i) => 5 * (1 + 0.05 * jitter(i, 0)));
    const b = Array.from({ length: 40 }, (_, i) => 5.1 * (1 + 0.05 * jitter(i, 1)));
    const estimate = pairedEstimate(logRatios(a, b), 0.9);
    assert.ok(estimate.noise > 0.03, String(estimate.noise));
    assert.equal(decide(a, b), 'noisy');
  });

  it('stays noisy while the interval straddles the band, and below 5 pairs says there are too few', () => {
    const a = [10, 10, 10, 10, 10, 10, 10, 10];
    // At 8 pairs the 90% interval runs from the 2nd smallest ratio to the 2nd largest: 1.000 to 1.010, not clear of 1.
    const b = [9.99, 10.0, 10.02, 10.05, 10.06, 10.08, 10.1, 10.12];
    assert.equal(decide(a, b), 'noisy');
    assert.equal(decide(a, [10.01, ...b.slice(1)]), 'slower');
    const few = pairedMeasured(pairedEstimate(logRatios([1, 1, 1, 1], [2, 2, 2, 2]), 0.9), 0.9);
    assert.deepEqual([judge(few, { band: 0.005 }), few.reason], ['noisy', '4 pairs: too few for a 90% interval']);
  });

  it('confirms a verdict in clock-normalised time, or says the clocks explain it', () => {
    assert.deepEqual(confirmWithClocks('slower', 'slower'), { verdict: 'slower', clocksExplain: false });
    assert.deepEqual(confirmWithClocks('slower', 'same'), { verdict: 'same', clocksExplain: true });
    assert.deepEqual(confirmWithClocks('faster', 'noisy'), { verdict: 'noisy', clocksExplain: false });
    assert.deepEqual(confirmWithClocks('faster', 'slower'), { verdict: 'noisy', clocksExplain: false });
    assert.deepEqual(confirmWithClocks('slower', null), { verdict: 'slower', clocksExplain: false });
    assert.deepEqual(confirmWithClocks('same', 'slower'), { verdict: 'same', clocksExplain: false });
    assert.deepEqual(confirmWithClocks('noisy', 'same'), { verdict: 'noisy', clocksExplain: false });
  });
});

describe('interleaving two pipelines, on fake runners', () => {
  const options: InterleaveOptions = { warmup: 2, minPairs: 10, maxPairs: 2000, maxTimeMs: 10_000, rule: pairedRule() };
  const sides = (a: FakeRunner, b: FakeRunner) => ({
    a: { runner: a, guard: new RepGuard(), schedule: serialOf(planA.schedules) },
    b: { runner: b, guard: new RepGuard(), schedule: serialOf(planB.schedules) },
  });

  it('warms both up, then runs the pairs A B, B A, A B, … and stops at the minimum once decided', async () => {
    const order: string[] = [];
    const a = new FakeRunner(planA.schedules, planA.buffers, {
      gpuMs: (_, n) => 10 * (1 + 0.001 * jitter(n, 0)),
      onRep: () => order.push('A'),
    });
    const b = new FakeRunner(planB.schedules, planB.buffers, {
      gpuMs: (_, n) => 10.3 * (1 + 0.001 * jitter(n, 1)),
      onRep: () => order.push('B'),
    });
    const mode = await interleaveMode(sides(a, b), options);
    assert.deepEqual(order.slice(0, 10).join(''), 'ABABABBAAB');
    assert.equal(mode.aMs.length, 10);
    assert.equal(mode.stoppedBy, 'decided');
    assert.equal(mode.verdict, 'slower');
    assert.ok(Math.abs(mode.change - 0.03) < 0.002, String(mode.change));
    assert.equal(mode.gating, true);
    assert.equal(a.calls.filter((c) => c.call === 'restore').length, 12, 'inputs restored before every rep');
  });

  it('pairs rep i of A with rep i of B, whatever went first', async () => {
    const a = new FakeRunner(planA.schedules, planA.buffers, { gpuMs: (_, n) => 100 + n });
    const b = new FakeRunner(planB.schedules, planB.buffers, { gpuMs: (_, n) => 200 + n });
    const mode = await interleaveMode(sides(a, b), { ...options, warmup: 0, minPairs: 6 });
    assert.deepEqual(mode.aMs.slice(0, 3), [100, 101, 102]);
    assert.deepEqual(mode.bMs.slice(0, 3), [200, 201, 202]);
  });

  it('takes more pairs while noisy and answers noisy, with the reason, when the budget runs out', async () => {
    // Every other pair is 3% slower and the rest 0.2% faster: the interval straddles the band.
    const a = new FakeRunner(planA.schedules, planA.buffers, { gpuMs: () => 10 });
    const b = new FakeRunner(planB.schedules, planB.buffers, { gpuMs: (_, n) => (n % 2 ? 10.3 : 9.98) });
    const mode = await interleaveMode(sides(a, b), { ...options, warmup: 0, maxPairs: 40 });
    assert.equal(mode.stoppedBy, 'max-reps');
    assert.equal(mode.aMs.length, 40);
    assert.equal(mode.verdict, 'noisy');
    assert.equal(
      mode.reason,
      'B/A +1.4% (90% interval -0.2% to +3.0%): neither inside the ±0.5% band nor a change past it',
    );
    assert.equal(mode.needed, 0.005);
  });

  it('confirms in clock-normalised time: a slowdown the SM clock explains is same', async () => {
    // The clock is read after each rep: A's reps ran at 1980 MHz, B's at 5% less, which explains B's 5%.
    let side = 0;
    const order: string[] = [];
    const a2 = new FakeRunner(planA.schedules, planA.buffers, {
      gpuMs: (_, n) => 10 * (1 + 0.001 * jitter(n, 0)),
      onRep: () => order.push('A'),
    });
    const b2 = new FakeRunner(planB.schedules, planB.buffers, {
      gpuMs: (_, n) => 10.5 * (1 + 0.001 * jitter(n, 1)),
      onRep: () => order.push('B'),
    });
    const explained = await interleaveMode(sides(a2, b2), {
      ...options,
      warmup: 0,
      smClock: () => (order[side++] === 'A' ? 1980 : 1980 / 1.05),
    });
    assert.equal(explained.verdict, 'same');
    assert.equal(explained.clocksExplain, true);
    assert.ok(Math.abs((explained.cycles?.ratio ?? 0) - 1) < 0.003, JSON.stringify(explained.cycles));
  });

  it('never lets scattered clock readings turn a real slowdown into same', async () => {
    const a = new FakeRunner(planA.schedules, planA.buffers, { gpuMs: (_, n) => 10 * (1 + 0.001 * jitter(n, 0)) });
    const b = new FakeRunner(planB.schedules, planB.buffers, { gpuMs: (_, n) => 10.3 * (1 + 0.001 * jitter(n, 1)) });
    let reads = 0;
    const mode = await interleaveMode(sides(a, b), {
      ...options,
      warmup: 0,
      maxPairs: 200,
      smClock: () => 1980 * (1 + 0.05 * jitter(reads++, 2)),
    });
    assert.notEqual(mode.verdict, 'same');
    assert.equal(mode.clocksExplain, false);
  });

  it('interleaves the modes a user acts on, paired by role, and names the rest', () => {
    const { pairs, unpaired } = pairSchedules(
      planA.schedules,
      planB.schedules.filter((s) => s.role.kind !== 'link'),
    );
    assert.deepEqual(
      pairs.map(([a]) => a.role.kind),
      ['serial', 'overlapped', 'stage', 'stage', 'stage'],
    );
    assert.ok(pairs.every(([a, b]) => a.id === b.id));
    assert.deepEqual(unpaired, [`${planA.schedules.find((s) => s.role.kind === 'link')?.id}: in A only`]);
  });
});

describe('the A/B document and its views', () => {
  const stats = {
    n: 10,
    median: 10,
    mean: 10,
    min: 9.9,
    max: 10.1,
    stdev: 0.01,
    q1: 9.99,
    q3: 10.01,
    iqr: 0.02,
    relativeStdev: 0.001,
    relativeNoise: 0.001,
    outliers: [],
  };
  const result: AbResult = {
    schema: 'cuda-pipe/ab',
    version: 1,
    tool: { name: 'cuda-pipe', version: '0.1.0' },
    createdAt: '2026-11-23T21:00:00.000Z',
    run: { hostname: 'gpu-host', rank: null, localRank: null, size: null, jobId: null, launcher: null },
    device: H100,
    software: {
      driver: '13.0',
      runtime: '13.0',
      nvrtc: '13.0',
      nvrtcArchitectures: ['sm_90'],
      cudartPath: '/usr/local/cuda/lib64/libcudart.so.13',
      nvrtcPath: null,
    },
    a: {
      name: 'compute-bound',
      path: '/base/compute-bound.yaml',
      hash: 'aaa',
      verification: { status: 'passed', mismatches: [] },
    },
    b: {
      name: 'compute-bound',
      path: '/head/compute-bound.yaml',
      hash: 'bbb',
      verification: { status: 'passed', mismatches: [] },
    },
    rule: {
      floor: 0.005,
      multiple: 3,
      threshold: null,
      confidence: 0.95,
      minPairs: 10,
      maxPairs: 2000,
      maxTimeMs: 10_000,
      warmup: 3,
    },
    gate: false,
    clocks: { checked: true, note: 'SM clock read through NVML after each rep' },
    modes: [
      {
        id: 'serial',
        role: { kind: 'serial' },
        gating: true,
        aMs: Array(10).fill(10),
        bMs: Array(10).fill(10.1),
        a: stats,
        b: { ...stats, median: 10.1 },
        time: { ratio: 1.01, low: 1.008, high: 1.012, noise: 0.001 },
        cycles: { ratio: 1.01, low: 1.008, high: 1.012, noise: 0.001 },
        needed: 0.005,
        change: 0.01,
        verdict: 'slower',
        clocksExplain: false,
        stoppedBy: 'decided',
        elapsedMs: 250,
      },
    ],
    unpaired: [],
    notes: [],
  };

  it('validates against its schema', () => {
    const parsed = AbResultSchema.safeParse(JSON.parse(JSON.stringify(result)));
    assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
  });

  it('shows a version 1 document as it was judged: B over A with its 95% interval, and the noise rule of its day', () => {
    const table = renderAbTable(result, makeStyle(process.stdout, { NO_COLOR: '1' }), 140);
    assert.match(
      table,
      /│ serial +│ +10\.00 ms ± 0\.1% │ +10\.10 ms ± 0\.1% │ \+1\.00% \(\+0\.80% to \+1\.20%\) │ +10 │ slower +│/,
    );
    assert.match(table, /B\/A \(95% interval\)/);
    assert.match(
      table,
      /^slower \(regression\): 1 slower, 0 faster, 0 same, 0 noisy \(B against A\)\nserial: B\/A \+1\.00% \(\+0\.80% to \+1\.20%\), slower$/m,
    );
    assert.match(
      table,
      /at least 3× the pairs' noise and at least 0\.5%; same when the interval lay within that \(the rule of version 1 documents\)/,
    );
    assert.match(table, /within 10 s \(--max-time\), else noisy/);
    const md = renderAbMarkdown(result);
    assert.match(md, /^### cuda-pipe ab: \*\*1 slower\*\*/);
    assert.match(md, /verdict \*\*slower \(regression\)\*\*/);
    assert.match(
      md,
      /\| serial \| 10\.00 ms ± 0\.1% \| 10\.10 ms ± 0\.1% \| \+1\.00% \(\+0\.80% to \+1\.20%\) \| 10 \| 🔴 slower \|/,
    );
  });

  const version2: AbResult = {
    ...result,
    version: 2,
    rule: {
      band: 0.005,
      confidence: 0.9,
      interval: 'sign-test',
      minPairs: 10,
      maxPairs: 2000,
      maxTimeMs: 10_000,
      warmup: 3,
    },
    verdict: 'mixed',
    modes: [
      ...result.modes,
      {
        ...(result.modes[0] as AbResult['modes'][number]),
        id: 'h2d',
        role: { kind: 'stage', stage: 'h2d' },
        time: { ratio: 0.98, low: 0.975, high: 0.985, noise: 0.002 },
        cycles: null,
        change: -0.02,
        verdict: 'faster',
        reason: 'B/A -2.0% (90% interval -2.5% to -1.5%): clear of no change, the estimate past the ±0.5% band',
      },
    ],
  };

  it('holds its top-level verdict and the one rule in version 2, and still reads version 1', () => {
    const parsed = AbResultSchema.parse(JSON.parse(JSON.stringify(version2)));
    assert.deepEqual([parsed.version, parsed.verdict, parsed.rule], [2, 'mixed', version2.rule]);
    assert.equal(AbResultSchema.parse(JSON.parse(JSON.stringify(result))).verdict, undefined);
  });

  it('states the band and what same means, and leads with the verdict', () => {
    const table = renderAbTable(version2, makeStyle(process.stdout, { NO_COLOR: '1' }), 160);
    assert.match(table, /^mixed \(regression\): 1 slower, 1 faster, 0 same, 0 noisy \(B against A\)$/m);
    assert.match(table, /B\/A \(90% interval\)/);
    assert.match(table, /same when the whole interval lies inside the ±0\.5% band \(an equivalence test, TOST at 5%\)/);
    assert.match(table, /the median of the pairs' log ratios ln\(Bᵢ\/Aᵢ\), the sign test's interval/);
    assert.doesNotMatch(table, /noise rule|version 1/);
    assert.match(renderAbMarkdown(version2), /verdict \*\*mixed \(regression\)\*\*, 1 slower, 1 faster/);
  });
});

describe('cuda-pipe ab without a GPU', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-ab-'));
  const config = join(dir, 'a.yaml');
  writeFileSync(config, CONFIG(2));

  it('exits 2 naming a missing config, before it looks for a GPU', () => {
    const { code, stderr } = runCli(['ab', config, join(dir, 'missing.yaml')]);
    assert.equal(code, 2);
    assert.match(stderr, /missing\.yaml/);
  });

  it('exits 3 where there is no driver', {
    skip: gpuSkipReason() === null ? 'a GPU is here: the driver is there' : false,
  }, () => {
    const { code, stderr } = runCli(['ab', config, config]);
    assert.equal(code, 3, stderr);
  });
});
