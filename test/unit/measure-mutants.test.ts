import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type DeviceParts,
  idealMs,
  issuedOps,
  layoutBound,
  type LayoutShape,
  resourceTimes,
} from '../../src/measure/bound.js';
import {
  DEFAULT_POLICY,
  policyFromConfig,
  type RepetitionPolicy,
  StoppingCriterion,
} from '../../src/measure/policy.js';
import type { RepOptions, RepTiming } from '../../src/measure/runner.js';
import { outlierIndexes, relativeMadNoise, relativeMedianError, summarize } from '../../src/measure/stats.js';
import { bestOfSweep, raceLayouts, type SweepProgress } from '../../src/measure/sweep.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { tinySweepPlan } from '../helpers/tiny-sweep.js';
import { DISTINCT_PARTS as parts } from '../helpers/device-parts.js';

// Edges and exact values of the measurement core that mutation testing (npm run mutation) found unpinned: each test
// here fails on some one-token change of src/measure.

const close = (actual: number, expected: number, what = '') =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

describe('statistics at their edges', () => {
  it('relative noise needs two samples, and is 0 around a median of 0', () => {
    assert.equal(relativeMadNoise([3]), Number.POSITIVE_INFINITY);
    close(relativeMadNoise([1, 1.02]), (1.4826 * 0.01) / 1.01);
    assert.equal(relativeMadNoise([-1, 0, 1]), 0);
    assert.equal(relativeMadNoise([0, 0, 0]), 0);
  });

  it("the median's relative error is √(π/2) · noise / √n, unknown for one sample", () => {
    assert.equal(relativeMedianError({ n: 1, relativeNoise: 0.02 }), Number.POSITIVE_INFINITY);
    close(relativeMedianError({ n: 4, relativeNoise: 0.02 }), (Math.sqrt(Math.PI / 2) * 0.02) / 2);
  });

  it('summarizes samples in any order, and one sample with no spread at all', () => {
    const s = summarize([4, 1, 3, 2, 10]);
    assert.deepEqual([s.n, s.min, s.max, s.median, s.q1, s.q3, s.iqr, s.mean], [5, 1, 10, 3, 2, 4, 2, 4]);
    close(s.stdev, Math.sqrt((9 + 4 + 1 + 0 + 36) / 4));
    close(s.relativeStdev, s.stdev / 4);
    close(s.relativeNoise, (1.4826 * 1) / 3);
    assert.deepEqual(s.outliers, [4]);
    assert.deepEqual(summarize([5]), {
      n: 1,
      median: 5,
      mean: 5,
      min: 5,
      max: 5,
      stdev: 0,
      q1: 5,
      q3: 5,
      iqr: 0,
      relativeStdev: 0,
      relativeNoise: 0,
      outliers: [],
    });
    assert.equal(summarize([0, 0]).relativeStdev, 0);
    assert.throws(() => summarize([]), RangeError);
  });

  it('flags outliers on both sides of the median, by index', () => {
    assert.deepEqual(outlierIndexes([20, 9, 10, 10, 10, 11, 0], 10), [0, 6]);
  });
});

describe('the stopping rule at its edges', () => {
  const policy: RepetitionPolicy = {
    warmup: 0,
    warmupMs: 0,
    fixedReps: null,
    minReps: 10,
    maxReps: 10_000,
    maxNoise: 1e-6,
    maxTimeMs: 1e9,
  };
  const stopsAt = (p: RepetitionPolicy, samples: readonly number[], elapsedMs = 0) => {
    const criterion = new StoppingCriterion(p);
    for (let n = 1; n <= samples.length; n++) {
      const rule = criterion.check(samples.slice(0, n), elapsedMs);
      if (rule) return { n, rule };
    }
    return null;
  };
  const wave = (frequency: number, phase: number) =>
    Array.from({ length: 200 }, (_, i) => 1 + 0.01 * Math.sin(i * frequency + phase));
  const flat = Array.from({ length: 50 }, () => 1);

  it('stops at exactly the fixed count, the maximum, or the minimum once under the target', () => {
    assert.deepEqual(stopsAt({ ...policy, fixedReps: 5 }, wave(1, 0)), { n: 5, rule: 'fixed-reps' });
    assert.deepEqual(stopsAt({ ...policy, maxReps: 7 }, wave(1, 0)), { n: 7, rule: 'max-reps' });
    assert.deepEqual(stopsAt({ ...policy, maxNoise: 0 }, flat), { n: 10, rule: 'noise-target' });
  });

  it('waits for the minimum count before calling the noise stable, even when it settled earlier', () => {
    // This wave's estimates settle at sample 28; with a minimum of 30 the rule may stop only from 30 on.
    assert.deepEqual(stopsAt(policy, wave(0.9, 2)), { n: 28, rule: 'noise-stable' });
    assert.deepEqual(stopsAt({ ...policy, minReps: 30 }, wave(0.9, 2)), { n: 30, rule: 'noise-stable' });
  });

  it('stops on the time budget once it is spent, after three samples at least', () => {
    const budget = { ...policy, maxTimeMs: 100, maxNoise: -1 };
    assert.deepEqual(stopsAt(budget, [1, 2, 3, 4], 100), { n: 3, rule: 'max-time' });
    assert.equal(stopsAt(budget, [1, 2, 3, 4], 99.9), null);
    assert.deepEqual(stopsAt({ ...budget, minReps: 2 }, [1, 2, 3, 4], 100), { n: 2, rule: 'max-time' });
  });

  it("reads the config's percent and seconds, and never asks for more than the maximum", () => {
    assert.deepEqual(
      policyFromConfig({ warmup: 2, warmupTime: 50, minReps: 40, maxReps: 20, maxNoise: 0.5, maxTime: 3 }),
      {
        warmup: 2,
        warmupMs: 50,
        fixedReps: null,
        minReps: 20,
        maxReps: 20,
        maxNoise: 0.005,
        maxTimeMs: 3000,
      },
    );
    assert.equal(
      policyFromConfig({ warmup: 0, warmupTime: 0, reps: 9, minReps: 5, maxReps: 20, maxNoise: 1, maxTime: 1 })
        .fixedReps,
      9,
    );
  });
});

const eight: LayoutShape = { chunks: 8, streams: 2, issue: 'stream', kernelsChunkedMs: null };
// One chunk's stages: every chunk pays a copy's or a launch's fixed cost (2 × 0.01, 1 × 0.02, 2 × 0.005 ms).
const a = (4 - 0.02) / 8 + 0.02;
const d = (6 - 0.02) / 8 + 0.02;
const kernels = 3 + 7 * 0.01;
const k = kernels / 8;

describe('the bound, term by term', () => {
  it("cuts each resource's time into chunks that each pay the fixed costs", () => {
    const byTerm = (p: DeviceParts, l: LayoutShape) =>
      Object.fromEntries(resourceTimes(p, l).map((t) => [t.resource.term, t]));
    const s = byTerm(parts, eight);
    assert.deepEqual(Object.keys(s), ['H2D', 'kernels', 'D2H']);
    for (const [name, actual, expected] of [
      ['a', s.H2D?.chunkMs, a],
      ['d', s.D2H?.chunkMs, d],
      ['k', s.kernels?.chunkMs, k],
      ['H2D steady', s.H2D?.steadyMs, 8 * a],
      ['kernels steady', s.kernels?.steadyMs, kernels],
      ['h2dPerOpMs', s.H2D?.perOpMs, 7 * 0.02],
      ['d2hPerOpMs', s.D2H?.perOpMs, 7 * 0.02],
      ['launchPerOpMs', s.kernels?.perOpMs, 7 * 0.01],
      ['H2D serial', s.H2D?.serialMs, 4],
      ['kernels serial', s.kernels?.serialMs, kernels],
    ] as const) {
      close(actual ?? Number.NaN, expected, name);
    }
    const none = resourceTimes({ ...parts, h2dMs: 0, d2hMs: 0, kernelWholeMs: 0 }, eight);
    assert.deepEqual(
      none.map((t) => [t.chunkMs, t.steadyMs, t.perOpMs]),
      [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ],
    );
    close(byTerm(parts, { ...eight, kernelsChunkedMs: 4 }).kernels?.chunkMs ?? Number.NaN, 0.5);
  });

  it('counts the ops the host issues: the work, two events, and a fork, a wait and a join per further stream', () => {
    assert.deepEqual(issuedOps(parts, eight), { copies: 24, launches: 16, sync: 5 });
    assert.deepEqual(issuedOps(parts, { ...eight, streams: 1 }).sync, 2);
  });

  it('gives each term its steady time, per-op part and fill and drain', () => {
    const b = layoutBound(parts, eight);
    const terms = new Map(b.terms.map((t) => [t.term, t]));
    assert.deepEqual([...terms.keys()], ['H2D', 'kernels', 'D2H', 'link', 'streams', 'host issue']);
    const expect = (term: string, steady: number, perOp: number, fillDrain: number) => {
      const t = terms.get(term as never);
      assert.ok(t, term);
      close(t.steadyMs, steady, `${term} steady`);
      close(t.perOpMs, perOp, `${term} per op`);
      close(t.fillDrainMs, fillDrain, `${term} fill and drain`);
      close(t.ms, steady + fillDrain, `${term} total`);
    };
    expect('H2D', 8 * a, 0.14, k + d);
    expect('kernels', kernels, 0.07, a + d);
    expect('D2H', 8 * d, 0.14, a + k);
    // Alone while filling: the H2D bytes of (a + k) of the 8a the H2D stage takes; while draining, of D2H likewise.
    const movedAlone = 400 * ((a + k) / (8 * a)) + 600 * ((k + d) / (8 * d));
    // 4 copies beyond the 4 pieces the link was measured in, each the dearer direction's per-chunk cost (0.02 ms).
    expect('link', 8 * (1 - movedAlone / 1000) + 4 * 0.02, 4 * 0.02, a + k + k + d);
    expect('streams', 4 * (a + k + d), 0, 0);
    // Event records and waits cost hostSyncMs, which these parts leave out: only copies and launches count.
    expect('host issue', 24 * 0.003 + 16 * 0.004, 0, d);
    assert.equal(b.term, 'link');
    close(b.ms, 8 * (1 - movedAlone / 1000) + 0.08 + a + 2 * k + d);
  });

  it("clamps the link's share moved alone at all of it, and its time at zero", () => {
    // A kernel 10× the copies: filling and draining cover whole directions, and 2 chunks are fewer copies than the 4
    // pieces the link was measured in, so the link term is only its fill and drain.
    const heavy = { ...parts, kernelWholeMs: 30 };
    const b = layoutBound(heavy, { ...eight, chunks: 2 });
    const [up, sms, down] = resourceTimes(heavy, { ...eight, chunks: 2 }).map((t) => t.chunkMs);
    const link = b.terms.find((t) => t.term === 'link');
    assert.ok(link && up !== undefined && sms !== undefined && down !== undefined);
    close(link.steadyMs, 0);
    close(link.ms, up + 2 * sms + down);
  });

  it("takes host issue from the per-op host costs times the layout's ops, and the kernels for the last op when there is no D2H", () => {
    const ops = issuedOps(parts, eight);
    const issue = layoutBound({ ...parts, hostSyncMs: 0.002 }, eight).terms.find((t) => t.term === 'host issue');
    close(issue?.steadyMs ?? 0, ops.copies * 0.003 + ops.launches * 0.004 + ops.sync * 0.002);
    close(issue?.ms ?? 0, ops.copies * 0.003 + ops.launches * 0.004 + ops.sync * 0.002 + d);
    const noD2h = layoutBound({ ...parts, d2hMs: 0, d2hBytes: 0 }, eight).terms.find((t) => t.term === 'host issue');
    close(noD2h?.fillDrainMs ?? 0, k);
    assert.equal(
      layoutBound(parts, { ...eight, issue: 'graph' }).terms.find((t) => t.term === 'host issue'),
      undefined,
    );
  });

  it('has no streams term when every chunk has its own stream, and no host term behind a gate', () => {
    const terms = layoutBound({ ...parts, gated: true }, { ...eight, streams: 8 }).terms.map((t) => t.term);
    assert.deepEqual(terms, ['H2D', 'kernels', 'D2H', 'link']);
    assert.deepEqual(
      layoutBound(parts, { ...eight, streams: 16 }).terms.map((t) => t.term),
      ['H2D', 'kernels', 'D2H', 'link', 'host issue'],
    );
  });

  it('with one copy engine, queues both directions on it; without one, adds everything', () => {
    const one = layoutBound({ ...parts, gated: true }, { ...eight, streams: 8 });
    assert.equal(one.term, 'link');
    const single = layoutBound({ ...parts, copyEngines: 1, gated: true }, { ...eight, streams: 8 });
    assert.deepEqual(
      single.terms.map((t) => t.term),
      ['copy engine', 'kernels'],
    );
    close(single.ms, 8 * (a + d) + k);
    close(single.perOpMs, 0.28);
    close(single.terms[1]?.ms ?? 0, kernels + a + d);
    const none = layoutBound({ ...parts, copyEngines: 0, gated: true }, { ...eight, streams: 8 });
    assert.deepEqual(
      none.terms.map((t) => [t.term, t.ms]),
      [['serial', 4 + kernels + 6]],
    );
  });

  it('takes the ideal from the pure times, without per-copy costs', () => {
    close(idealMs(parts), 8 - 4 * 2 * 0.01);
    close(idealMs({ ...parts, linkMs: 5 }), 6 - 0.02);
    close(idealMs({ ...parts, copyEngines: 1 }), 4 - 0.02 + 6 - 0.02);
    close(idealMs({ ...parts, copyEngines: 0 }), 4 - 0.02 + 3 + 6 - 0.02);
    close(idealMs({ ...parts, h2dMs: 0.01, h2dOpMs: 0.1, linkMs: 50 }), 6 - 0.02);
  });
});

const { plan, layouts } = tinySweepPlan();

/** A FakeRunner whose gate times out on every third rep. */
class GateRunner extends FakeRunner {
  override async runRep(id: string, options?: RepOptions): Promise<RepTiming> {
    const timing = await super.runRep(id, options);
    return { ...timing, gateTimedOut: this.repsOf(id) % 3 === 0 };
  }
}

describe('the race of layouts, counted', () => {
  const fixed: RepetitionPolicy = { ...DEFAULT_POLICY, warmup: 2, fixedReps: 6 };

  it('warms each layout up outside its samples, then keeps every timed rep with its host time and gate timeouts', async () => {
    const runner = new GateRunner(plan.schedules, plan.buffers, { gpuMs: (s, n) => (s === layouts[0] ? 1 : 2) + n });
    const measured = await raceLayouts(runner, layouts, fixed, {
      probeReps: 4,
      batchReps: 1,
      budgetMs: 60_000,
      exhaustive: true,
    });
    assert.deepEqual(
      measured.map((m) => m.schedule.id),
      layouts.map((s) => s.id),
    );
    // Warm-ups 0 and 1 are not samples; fixed reps stop each layout at 6.
    assert.deepEqual(
      measured.map((m) => m.gpuMs),
      [
        [3, 4, 5, 6, 7, 8],
        [4, 5, 6, 7, 8, 9],
      ],
    );
    assert.deepEqual(
      measured.map((m) => m.hostIssueMs),
      [Array(6).fill(0.01), Array(6).fill(0.01)],
    );
    assert.deepEqual(
      measured.map((m) => [m.stoppedBy, m.gateTimeouts, m.smClockMHz]),
      [
        ['fixed-reps', 2, []],
        ['fixed-reps', 2, []],
      ],
    );
    assert.deepEqual(
      layouts.map((s) => runner.repsOf(s.id)),
      [8, 8],
    );
    assert.ok(measured.every((m) => m.elapsedMs >= 0 && m.elapsedMs < 60_000));
    assert.equal(runner.calls.filter((c) => c.call === 'restore').length, 16);
  });

  it('reports progress as layouts finish, out of all of them', async () => {
    const progress: SweepProgress[] = [];
    const runner = new FakeRunner(plan.schedules, plan.buffers, { gpuMs: (s) => (s === layouts[0] ? 1 : 5) });
    await raceLayouts(
      runner,
      layouts,
      { ...fixed, warmup: 0, fixedReps: 3 },
      { probeReps: 2, batchReps: 1, budgetMs: 60_000, onProgress: (p) => progress.push(p) },
    );
    assert.ok(progress.every((p) => p.total === 2 && p.elapsedMs >= 0));
    assert.deepEqual(
      progress.map((p) => p.done),
      [0, 0, 1, 2],
    );
  });

  it('with exhaustive set, drops no layout however much slower', async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, {
      gpuMs: (s, n) => (s === layouts[0] ? 1 : 5) + 0.01 * (n % 2),
    });
    const policy = { ...DEFAULT_POLICY, warmup: 0, fixedReps: 8 };
    const raced = await raceLayouts(runner, layouts, policy, { probeReps: 3, batchReps: 1, budgetMs: 60_000 });
    assert.deepEqual(
      raced.map((m) => [m.stoppedBy, m.gpuMs.length]),
      [
        ['fixed-reps', 8],
        ['clearly-slower', 3],
      ],
    );
    const all = await raceLayouts(
      new FakeRunner(plan.schedules, plan.buffers, { gpuMs: (s, n) => (s === layouts[0] ? 1 : 5) + 0.01 * (n % 2) }),
      layouts,
      policy,
      {
        probeReps: 3,
        batchReps: 1,
        budgetMs: 60_000,
        exhaustive: true,
      },
    );
    assert.deepEqual(
      all.map((m) => [m.stoppedBy, m.gpuMs.length]),
      [
        ['fixed-reps', 8],
        ['fixed-reps', 8],
      ],
    );
  });
});

describe('the best of a sweep', () => {
  const mode = (id: string, median: number, q1: number, q3: number) => {
    const stats = { median, q1, q3 };
    return { id, samplesMs: [], stats };
  };

  it("keeps the first of equal medians, and counts a layout whose q1 equals the best's q3 as a tie", () => {
    assert.deepEqual(
      bestOfSweep([mode('a', 2, 1.9, 2.1), mode('b', 2, 1.9, 2.1), mode('c', 3, 2.1, 3.5), mode('d', 3, 2.11, 3.5)]),
      { mode: 'a', ties: ['b', 'c'] },
    );
  });

  it('has no best without layouts', () => {
    assert.throws(() => bestOfSweep([]), /a sweep with no layout/);
  });
});
