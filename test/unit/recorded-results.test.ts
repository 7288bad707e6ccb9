import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadResults } from '../../src/compare/load.js';
import { compareResults } from '../../src/compare/verdict.js';
import { renderRunMarkdown } from '../../src/report/markdown.js';
import { renderRunTable } from '../../src/report/run-table.js';
import { makeStyle } from '../../src/report/style.js';
import { runCli } from '../helpers/cli.js';

// Results recorded on the H100 host from the bundle: two back-to-back runs of configs/balanced.yaml, and one with
// the FMA loop's iterations raised 10% (1060 → 1166).
const fixture = (name: string) => join('test', 'fixtures', name);
const [first] = loadResults(fixture('h100-balanced-1.json'));

describe('recorded H100 results', () => {
  it('load as valid Results with the environment that makes them comparable', () => {
    assert.ok(first);
    assert.equal(first.environment.device.name, 'NVIDIA H100 80GB HBM3');
    assert.match(first.environment.device.uuid, /^GPU-/);
    assert.equal(first.environment.software.runtime, '13.0');
    assert.equal(first.environment.device.pcie?.generation, 5);
    assert.equal(first.policy.maxNoise, 0.005);
    assert.ok(first.modes.every((m) => m.samplesMs.length === m.stats.n));
    assert.equal(first.verification.status, 'passed');
  });

  it('re-render exactly from the saved file, as the table and as Markdown', () => {
    const table = runCli(['report', fixture('h100-balanced-1.json')]);
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout, renderRunTable(first!, makeStyle({ isTTY: false } as NodeJS.WriteStream)) + '\n');
    assert.match(table.stdout, /speedup over serial: 2\.1\d× ± 0\.0\d/);
    assert.match(renderRunMarkdown(first!), /\| overlapped \| 5\.9\d\d ms \|/);
  });

  it('compare two back-to-back runs as the same in every mode', () => {
    const comparison = compareResults(loadResults(fixture('h100-balanced-1.json')), loadResults(fixture('h100-balanced-2.json')));
    assert.deepEqual([...new Set(comparison.pairs.map((p) => p.verdict))], ['same']);
    assert.equal(comparison.pairs.length, 6);
  });

  it('find the 10% heavier kernel slower, and exit 1', () => {
    const comparison = compareResults(loadResults(fixture('h100-balanced-1.json')), loadResults(fixture('h100-balanced-heavier.json')));
    const kernel = comparison.pairs.find((p) => p.mode === 'kernel:fma');
    assert.equal(kernel?.verdict, 'slower');
    assert.ok(kernel && kernel.change > 0.08 && kernel.change < 0.12);
    assert.equal(runCli(['compare', fixture('h100-balanced-1.json'), fixture('h100-balanced-heavier.json')]).code, 1);
  });

  it('serve as the stored perf-regression baseline for the H100', () => {
    const baseline = loadResults(join('baselines', 'nvidia-h100-80gb-hbm3', 'results.json'));
    assert.deepEqual(baseline.map((r) => r.config.name), ['balanced', 'copy-bound', 'async-overlap', 'multi-kernel']);
    assert.equal(runCli(['compare', join('baselines', 'nvidia-h100-80gb-hbm3', 'results.json'), fixture('h100-balanced-2.json')]).code, 0);
  });
});
