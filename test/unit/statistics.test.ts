import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quantile } from '../../src/quantile.js';
import { latencyStats } from '../../src/measure/result.js';
import { cpuStageSummary } from '../../src/kinds/host/section.js';
import { relativeMedianError, summarize } from '../../src/measure/stats.js';
import { DEFAULT_POLICY, policyFromConfig, StoppingCriterion } from '../../src/measure/policy.js';

describe('statistics of one timed quantity', () => {
  it('computes median, quartiles, mean, spread and relative noise', () => {
    const s = summarize([5, 1, 4, 2, 3]);
    assert.deepEqual([s.n, s.median, s.min, s.max, s.mean, s.q1, s.q3, s.iqr], [5, 3, 1, 5, 3, 2, 4, 2]);
    assert.ok(Math.abs(s.stdev - Math.sqrt(2.5)) < 1e-12);
    assert.ok(Math.abs(s.relativeStdev - Math.sqrt(2.5) / 3) < 1e-12);
    // MAD of [5, 1, 4, 2, 3] around 3 is 1: noise 1.4826 / 3.
    assert.ok(Math.abs(s.relativeNoise - 1.4826 / 3) < 1e-12);
  });

  it('interpolates quantiles between samples', () => {
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
    assert.equal(quantile([10], 0.9), 10);
  });

  it('flags a far sample as an outlier without dropping it', () => {
    const samples = [6.0, 6.01, 5.99, 6.02, 5.98, 6.0, 9.5];
    const s = summarize(samples);
    assert.deepEqual(s.outliers, [6]);
    assert.equal(s.n, 7);
    assert.equal(s.max, 9.5);
  });

  it('keeps the median-based noise low when one far sample inflates the standard deviation', () => {
    const s = summarize([6.0, 6.01, 5.99, 6.02, 5.98, 6.0, 9.5]);
    assert.ok(s.relativeStdev > 0.2);
    assert.ok(s.relativeNoise < 0.005, `noise ${s.relativeNoise}`);
  });

  it('reports zero noise and no outliers for a single sample', () => {
    const s = summarize([4.2]);
    assert.deepEqual([s.stdev, s.relativeNoise, s.outliers.length], [0, 0, 0]);
  });
});

describe('the standard error of a median', () => {
  it('shrinks with the square root of the sample count', () => {
    const small = relativeMedianError({ n: 4, relativeNoise: 0.02 });
    const large = relativeMedianError({ n: 16, relativeNoise: 0.02 });
    assert.ok(Math.abs(small / large - 2) < 1e-12);
    assert.ok(Math.abs(large - (Math.sqrt(Math.PI / 2) * 0.02) / 4) < 1e-12);
  });
});

describe('when to stop repeating', () => {
  const feed = (criterion: StoppingCriterion, samples: number[], msPerRep = 1) => {
    const seen: number[] = [];
    for (const [i, x] of samples.entries()) {
      seen.push(x);
      const rule = criterion.check(seen, (i + 1) * msPerRep);
      if (rule) return { rule, n: seen.length };
    }
    return { rule: null, n: seen.length };
  };
  // A deterministic sequence with a chosen relative spread around 10.
  const wobble = (n: number, spread: number) =>
    Array.from({ length: n }, (_, i) => 10 * (1 + spread * Math.sin(i * 2.399963)));

  it('stops at the minimum count once the noise is under the target', () => {
    const { rule, n } = feed(new StoppingCriterion(DEFAULT_POLICY), wobble(100, 0.001));
    assert.deepEqual({ rule, n }, { rule: 'noise-target', n: 10 });
  });

  it('stops when the noise estimate has stopped moving above the target', () => {
    const { rule, n } = feed(new StoppingCriterion(DEFAULT_POLICY), wobble(2000, 0.03));
    assert.equal(rule, 'noise-stable');
    assert.ok(n >= 16 && n < 2000, `stopped after ${n}`);
  });

  it('stops when the time budget runs out', () => {
    const policy = { ...DEFAULT_POLICY, maxTimeMs: 50 };
    const noisy = Array.from({ length: 1000 }, (_, i) => 10 + (i % 7) * 0.4 + (i % 13) * 0.3 + (i % 29) * 0.05 * i);
    assert.deepEqual(feed(new StoppingCriterion(policy), noisy, 10), { rule: 'max-time', n: 5 });
  });

  it('takes exactly the fixed count when one is given', () => {
    assert.deepEqual(feed(new StoppingCriterion({ ...DEFAULT_POLICY, fixedReps: 7 }), wobble(100, 0.2)), {
      rule: 'fixed-reps',
      n: 7,
    });
  });

  it('reads percent and seconds from the config', () => {
    const policy = policyFromConfig({ warmup: 1, warmupTime: 20, minReps: 5, maxReps: 50, maxNoise: 0.5, maxTime: 2 });
    assert.deepEqual(policy, {
      warmup: 1,
      warmupMs: 20,
      fixedReps: null,
      minReps: 5,
      maxReps: 50,
      maxNoise: 0.005,
      maxTimeMs: 2000,
    });
  });
});

describe('percentiles by one definition', () => {
  const latencies = [2, 9, 10, 100];

  it('interpolates every quantile between neighbours (R-7), as saved medians and quartiles were computed', () => {
    assert.ok(Math.abs(quantile(latencies, 0.99) - 97.3) < 1e-12);
    assert.equal(quantile(latencies, 0.25), 7.25);
  });

  it("takes a latency mode's p99 by the same definition, in any order of its samples", () => {
    assert.ok(Math.abs(latencyStats([100, 2, 10, 9]).p99Ms - 97.3) < 1e-12);
    const hundreds = Array.from({ length: 200 }, (_, i) => 200 - i);
    assert.ok(Math.abs(latencyStats(hundreds).p99Ms - 198.01) < 1e-9);
    assert.ok(Number.isNaN(latencyStats([]).p99Ms));
  });
});

describe('latency, the CPU stage and issue cost through summarize', () => {
  it('gives a latency mode the median and maximum summarize gives its probes, and the p99 between its two largest', () => {
    const probes = [0.05, 0.01, 0.03, 0.02, 0.04, 0.015];
    const stats = summarize(probes);
    assert.deepEqual(latencyStats(probes), { n: 6, medianMs: stats.median, p99Ms: 0.0495, maxMs: stats.max });
    assert.equal(stats.median, 0.025);
  });

  it("takes the CPU stage's medians as summarize does, between the middle two of an even count", () => {
    const rep = (gpuMs: number, endMs: number, taskMs: number[]) => ({
      gpuMs,
      endMs,
      taskMs,
      busyMs: [1],
      afterTasks: taskMs.length,
      bytes: 8,
      tasks: [],
    });
    const stage = cpuStageSummary([rep(4, 8, [1, 4]), rep(6, 7, [2, 3])]);
    assert.deepEqual([stage.taskMedianMs, stage.gpuMedianMs, stage.cpuMedianMs], [2.5, 5, 7.5]);
  });

  it('gives a CPU stage whose reps ran no task no task median, and no fastest task', () => {
    const stage = cpuStageSummary([{ gpuMs: 4, endMs: 5, taskMs: [], busyMs: [], afterTasks: 0, bytes: 0, tasks: [] }]);
    assert.ok(Number.isNaN(stage.taskMedianMs));
    assert.equal('taskMinMs' in stage, false);
  });
});
