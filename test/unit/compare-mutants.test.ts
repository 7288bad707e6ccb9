import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareResults, deviceDifferences, devicesDifferences, hasRegression, isGating, thresholdRule, verdict } from '../../src/compare/verdict.js';
import type { Stats } from '../../src/result/mode.js';
import type { RunResult } from '../../src/result/schema.js';
import { H100, makeResult } from '../helpers/results.js';

// Edges of the verdicts between two runs that mutation testing (npm run mutation) found unpinned.

const stats = (median: number, q1: number, q3: number): Stats => ({
  n: 10,
  median,
  mean: median,
  min: q1,
  max: q3,
  stdev: 0,
  q1,
  q3,
  iqr: q3 - q1,
  relativeStdev: 0,
  relativeNoise: 0,
  outliers: [],
});

describe('a verdict at its edges', () => {
  it('counts a change of exactly the threshold as a change', () => {
    assert.equal(verdict(stats(1, 0.99, 1.01), stats(1.05, 1.04, 1.06), thresholdRule(0.05)).verdict, 'slower');
    assert.equal(verdict(stats(1.05, 1.04, 1.06), stats(1, 0.99, 1.01), thresholdRule(0.05)).verdict, 'faster');
    assert.equal(verdict(stats(1, 0.99, 1.01), stats(1.04, 1.03, 1.05), thresholdRule(0.05)).verdict, 'same');
    assert.equal(verdict(stats(1, 0.99, 1.01), stats(1.04, 1.03, 1.05), thresholdRule(0.02)).verdict, 'slower');
  });

  it('calls runs whose quartiles touch noisy, in either direction', () => {
    assert.equal(verdict(stats(1, 0.9, 1.1), stats(1.2, 1.1, 1.3), thresholdRule(0.05)).verdict, 'noisy');
    assert.equal(verdict(stats(1.2, 1.1, 1.3), stats(1, 0.9, 1.1), thresholdRule(0.05)).verdict, 'noisy');
  });

  it('measures the change against the baseline', () => {
    assert.equal(verdict(stats(2, 1.9, 2.1), stats(3, 2.9, 3.1), thresholdRule(0.05)).change, 0.5);
    assert.equal(verdict(stats(4, 3.9, 4.1), stats(3, 2.9, 3.1), thresholdRule(0.05)).change, -0.25);
  });
});

describe('device differences', () => {
  it('name every field that differs, the PCIe link unknown where a side has none', () => {
    const other = { ...H100, name: 'B', computeCapability: { major: 9, minor: 1 }, multiprocessors: 114, memoryBytes: 1, asyncEngineCount: 2, pcie: null };
    assert.deepEqual(deviceDifferences(H100, other), [
      'name: NVIDIA H100 80GB HBM3 → B',
      'compute capability: 9.0 → 9.1',
      'multiprocessors: 132 → 114',
      'memory: 85021163520 → 1',
      'copy engines: 3 → 2',
      'PCIe link: gen5 x16 → unknown',
    ]);
    assert.deepEqual(deviceDifferences(H100, { ...H100, pcie: { ...H100.pcie!, generation: null } }), ['PCIe link: gen5 x16 → gen? x16']);
    assert.deepEqual(deviceDifferences(H100, { ...H100 }), []);
  });

  it('pair devices by index, name a device on one side only, and prefix the index only over several', () => {
    const second = { ...H100, index: 1 };
    assert.deepEqual(devicesDifferences([H100], [{ ...H100, name: 'B' }]), ['name: NVIDIA H100 80GB HBM3 → B']);
    assert.deepEqual(devicesDifferences([second, H100], [H100, { ...second, name: 'B' }]), ['device 1 name: NVIDIA H100 80GB HBM3 → B']);
    assert.deepEqual(devicesDifferences([H100, second], [H100]), ['device 1: NVIDIA H100 80GB HBM3 → absent']);
    assert.deepEqual(devicesDifferences([{ ...H100, index: 2 }], [H100]), ['device 0: absent → NVIDIA H100 80GB HBM3', 'device 2: NVIDIA H100 80GB HBM3 → absent']);
  });
});

describe('which pairs gate', () => {
  it('the modes a user acts on, and over several devices only all of them at once and the pipeline across two', () => {
    const gating = (role: object) => isGating(role as never);
    assert.deepEqual([gating({ kind: 'serial' }), gating({ kind: 'stage', stage: 'h2d' }), gating({ kind: 'link' }), gating({ kind: 'cross-device' })], [true, true, true, true]);
    assert.deepEqual(
      [
        gating({ kind: 'split' }),
        gating({ kind: 'split', alone: 1 }),
        gating({ kind: 'split-link' }),
        gating({ kind: 'op-cost', op: 'launch' }),
        gating({ kind: 'kernels-chunked' }),
        gating({ kind: 'peer' }),
      ],
      [true, false, false, false, false, false],
    );
  });

  it('a regression is a gating pair that got slower', () => {
    const pair = (gating: boolean, v: string) => ({ gating, verdict: v }) as never;
    assert.equal(hasRegression({ pairs: [pair(false, 'slower'), pair(true, 'noisy'), pair(true, 'faster')] }), false);
    assert.equal(hasRegression({ pairs: [pair(false, 'same'), pair(true, 'slower')] }), true);
    assert.equal(hasRegression({ pairs: [] }), false);
  });
});

describe('pairing results', () => {
  const ranked = (rank: number, scale: number): RunResult => {
    const r = makeResult({ scale });
    return { ...r, run: { ...r.run, rank } };
  };

  it('pairs rank with rank, and names the rank in the pair', () => {
    const comparison = compareResults([ranked(0, 1), ranked(1, 1.2)], [ranked(1, 1.2), ranked(0, 1)]);
    assert.ok(comparison.pairs.length > 0);
    assert.ok(
      comparison.pairs.every((p) => p.verdict === 'same'),
      JSON.stringify(comparison.pairs.map((p) => [p.config, p.verdict])),
    );
    assert.deepEqual([...new Set(comparison.pairs.map((p) => p.config))], ['balanced rank 1', 'balanced rank 0']);
    assert.deepEqual(comparison.unpaired, []);
  });

  it('says when one side excluded host issue cost, and lists results and modes on one side only', () => {
    const base = makeResult();
    const gated: RunResult = { ...base, policy: { ...base.policy, gate: true } };
    assert.deepEqual(compareResults([base], [gated]).notes, ['balanced: one side excludes host issue cost (--gate) and the other does not.']);
    assert.deepEqual(compareResults([base], [base]).notes, []);
    const fewer: RunResult = { ...base, modes: base.modes.filter((m) => m.role.kind !== 'link') };
    const link = base.modes.find((m) => m.role.kind === 'link');
    assert.ok(link);
    assert.deepEqual(compareResults([base], [fewer]).unpaired, [`balanced ${link.id}: not in the candidate`]);
    assert.deepEqual(compareResults([fewer], [base]).unpaired, [`balanced ${link.id}: not in the baseline`]);
    const other: RunResult = { ...base, config: { ...base.config, name: 'other', hash: 'x' } };
    assert.deepEqual(compareResults([base], [other]).unpaired, ['other: no baseline', 'balanced: no candidate']);
    assert.equal(
      compareResults([base], [base]).pairs.every((p) => p.device === 0 && p.config === 'balanced'),
      true,
    );
  });
});
