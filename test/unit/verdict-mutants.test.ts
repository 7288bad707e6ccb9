import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareResults, devicesDifferences } from '../../src/compare/verdict.js';
import type { RunResult } from '../../src/result/schema.js';
import { H100, makeResult } from '../helpers/results.js';

// Edges of pairing two runs that the mutation run of 2026-11-23 left alive (docs/measurements/2026-11-23-mutation).

describe('pairing two runs', () => {
  it('prefixes a difference with its device index when either side has several devices', () => {
    assert.deepEqual(devicesDifferences([H100, { ...H100, index: 1 }], [{ ...H100, name: 'B' }]), [
      'device 0 name: NVIDIA H100 80GB HBM3 → B',
      'device 1: NVIDIA H100 80GB HBM3 → absent',
    ]);
  });

  it('says when the config changed since the baseline, and pairs it by name', () => {
    const base = makeResult();
    const changed: RunResult = { ...base, config: { ...base.config, hash: 'changed' } };
    const comparison = compareResults([base], [changed]);
    assert.deepEqual(comparison.notes, [
      `balanced: the config changed since the baseline (hash ${base.config.hash} → changed).`,
    ]);
    assert.equal(comparison.pairs.length, base.modes.filter((m) => m.role.kind !== 'issue-cost').length);
  });

  it('pairs each baseline once: a second candidate of the same config has none left', () => {
    const base = makeResult();
    const comparison = compareResults([base], [base, base]);
    assert.deepEqual(comparison.unpaired, ['balanced: no baseline']);
  });
});
