import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judge, type Measured } from '../../src/compare/rule.js';
import {
  compareResults,
  deviceDifferences,
  devicesDifferences,
  hasRegression,
  isGating,
  medianChange,
} from '../../src/compare/verdict.js';
import type { RunResult } from '../../src/result/schema.js';
import { H100, makeResult } from '../helpers/results.js';

// Edges of the verdicts between two runs that mutation testing (npm run mutation) found unpinned.

const at = (estimate: number, low: number, high: number): Measured => ({
  interval: { estimate, low, high },
  reason: null,
});
const edge = Math.log1p(0.05);
const band = { band: 0.05 };

describe('a verdict at its edges', () => {
  it('counts an estimate of exactly the band as a change, and one just under it as noisy', () => {
    assert.equal(judge(at(edge, 0.01, 0.1), band), 'slower');
    assert.equal(judge(at(-edge, -0.1, -0.01), band), 'faster');
    assert.equal(judge(at(edge - 1e-12, 0.01, 0.1), band), 'noisy');
    assert.equal(judge(at(-edge + 1e-12, -0.1, -0.01), band), 'noisy');
  });

  it('needs the interval clear of no change: a low end of exactly 0 is not slower, a high end of exactly 0 not faster', () => {
    assert.equal(judge(at(0.1, 0, 0.2), band), 'noisy');
    assert.equal(judge(at(-0.1, -0.2, 0), band), 'noisy');
  });

  it('calls same only with the whole interval strictly inside the band', () => {
    assert.equal(judge(at(0, -edge + 1e-12, edge - 1e-12), band), 'same');
    assert.equal(judge(at(0, -edge, 0.01), band), 'noisy');
    assert.equal(judge(at(0, -0.01, edge), band), 'noisy');
  });

  it('calls a pair without an interval noisy', () => {
    assert.equal(judge({ interval: null, reason: 'too few' }, band), 'noisy');
  });

  it('keeps the change of the medians against the baseline beside the interval', () => {
    assert.equal(medianChange({ median: 2 }, { median: 3 }), 0.5);
    assert.equal(medianChange({ median: 4 }, { median: 3 }), -0.25);
  });
});

describe('device differences', () => {
  it('name every field that differs, the PCIe link unknown where a side has none', () => {
    const other = {
      ...H100,
      name: 'B',
      computeCapability: { major: 9, minor: 1 },
      multiprocessors: 114,
      memoryBytes: 1,
      asyncEngineCount: 2,
      pcie: null,
    };
    assert.deepEqual(deviceDifferences(H100, other), [
      'name: NVIDIA H100 80GB HBM3 → B',
      'compute capability: 9.0 → 9.1',
      'multiprocessors: 132 → 114',
      'memory: 85021163520 → 1',
      'copy engines: 3 → 2',
      'PCIe link: gen5 x16 → unknown',
    ]);
    assert.deepEqual(deviceDifferences(H100, { ...H100, pcie: { ...H100.pcie!, generation: null } }), [
      'PCIe link: gen5 x16 → gen? x16',
    ]);
    assert.deepEqual(deviceDifferences(H100, { ...H100 }), []);
  });

  it('pair devices by index, name a device on one side only, and prefix the index only over several', () => {
    const second = { ...H100, index: 1 };
    assert.deepEqual(devicesDifferences([H100], [{ ...H100, name: 'B' }]), ['name: NVIDIA H100 80GB HBM3 → B']);
    assert.deepEqual(devicesDifferences([second, H100], [H100, { ...second, name: 'B' }]), [
      'device 1 name: NVIDIA H100 80GB HBM3 → B',
    ]);
    assert.deepEqual(devicesDifferences([H100, second], [H100]), ['device 1: NVIDIA H100 80GB HBM3 → absent']);
    assert.deepEqual(devicesDifferences([{ ...H100, index: 2 }], [H100]), [
      'device 0: absent → NVIDIA H100 80GB HBM3',
      'device 2: NVIDIA H100 80GB HBM3 → absent',
    ]);
  });
});

describe('which pairs gate', () => {
  it('the modes a user acts on, and over several devices only all of them at once and the pipeline across two', () => {
    const gating = (role: object) => isGating(role as never);
    assert.deepEqual(
      [
        gating({ kind: 'serial' }),
        gating({ kind: 'stage', stage: 'h2d' }),
        gating({ kind: 'link' }),
        gating({ kind: 'cross-device' }),
      ],
      [true, true, true, true],
    );
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

  it('a regression is a comparison whose gating pairs hold a slower one: slower or mixed', () => {
    assert.deepEqual(
      (['slower', 'mixed', 'faster', 'same', 'noisy'] as const).map((verdict) => hasRegression({ verdict })),
      [true, true, false, false, false],
    );
    const comparison = compareResults([makeResult()], [makeResult({ scale: 1.1 })]);
    assert.deepEqual([comparison.verdict, hasRegression(comparison)], ['slower', true]);
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
    assert.deepEqual(compareResults([base], [gated]).notes, [
      'balanced: one side excludes host issue cost (--gate) and the other does not.',
    ]);
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
