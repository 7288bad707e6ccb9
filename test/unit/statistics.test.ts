import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pipelineBound } from '../../src/measure/bound.js';
import { quantile, summarize } from '../../src/measure/stats.js';

describe('statistics of one timed quantity', () => {
  it('computes median, quartiles, mean, spread and relative noise', () => {
    const s = summarize([5, 1, 4, 2, 3]);
    assert.deepEqual([s.n, s.median, s.min, s.max, s.mean, s.q1, s.q3, s.iqr], [5, 3, 1, 5, 3, 2, 4, 2]);
    assert.ok(Math.abs(s.stdev - Math.sqrt(2.5)) < 1e-12);
    assert.ok(Math.abs(s.relativeNoise - Math.sqrt(2.5) / 3) < 1e-12);
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

  it('reports zero noise and no outliers for a single sample', () => {
    const s = summarize([4.2]);
    assert.deepEqual([s.stdev, s.relativeNoise, s.outliers.length], [0, 0, 0]);
  });
});

describe('the overlap bound', () => {
  // Figures from the reference H100 (shared/GPU-FACTS.md): copies 4.9 ms each way, kernel 2.8 ms, both copies at once 5.81 ms.
  const h100 = { h2dMs: 4.9, kernelMs: 2.8, d2hMs: 4.9, linkMs: 5.81, copyEngines: 3 };

  it('is set by the shared link when both directions together are the slowest', () => {
    const b = pipelineBound({ ...h100, chunks: 32 });
    assert.equal(b.limitedBy, 'link');
    assert.equal(b.steadyMs, 5.81);
    assert.ok(Math.abs(b.fillDrainMs - 2.8 / 32) < 1e-12);
    assert.ok(Math.abs(b.ms - (5.81 + 2.8 / 32)) < 1e-12);
  });

  it('falls back to the slowest stage alone, plus the other stages\' share of one chunk, without a link figure', () => {
    const b = pipelineBound({ ...h100, linkMs: null, chunks: 32 });
    assert.equal(b.limitedBy, 'H2D');
    assert.ok(Math.abs(b.ms - (4.9 + (2.8 + 4.9) / 32)) < 1e-12);
  });

  it('is set by the kernel for a compute-bound pipeline', () => {
    const b = pipelineBound({ ...h100, kernelMs: 20, chunks: 16 });
    assert.equal(b.limitedBy, 'kernels');
    assert.ok(Math.abs(b.ms - (20 + 9.8 / 16)) < 1e-12);
  });

  it('makes H2D and D2H take turns with one copy engine', () => {
    const b = pipelineBound({ ...h100, copyEngines: 1, chunks: 16 });
    assert.equal(b.limitedBy, 'copy engine');
    assert.ok(Math.abs(b.ms - (9.8 + 2.8 / 16)) < 1e-12);
  });

  it('is the serial sum without a copy engine', () => {
    const b = pipelineBound({ ...h100, copyEngines: 0, chunks: 16 });
    assert.equal(b.limitedBy, 'serial');
    assert.ok(Math.abs(b.ms - 12.6) < 1e-12);
  });
});
