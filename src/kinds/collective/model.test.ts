import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { packageRoot } from '../../paths.js';
import { loadResults } from '../../result/load.js';
import type { ModeResult } from '../../model/mode.js';
import type { TermContext } from '../api/index.js';
import {
  type AloneSample,
  aloneSamples,
  bucketBound,
  bucketCost,
  bucketStep,
  bucketTerm,
  leastCallMs,
} from './model.js';

// The collective's term in the overlap bound: the bucket model at a layout's chunks, from the collective alone.

const measured = join(packageRoot(), 'docs', 'measurements');
const close = (actual: number, expected: number, tolerance = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} ≠ ${expected}`);
const sample = (calls: number, ms: number, bytes = 1024): AloneSample => ({
  collective: 'allreduce',
  calls,
  bytes,
  ms,
});

describe("a collective call's least time", () => {
  it('is never above what any α ≥ 0 and bandwidth that agree with the samples give', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 2, noNaN: true }),
        fc.double({ min: 1e-6, max: 1e-2, noNaN: true }),
        fc.uniqueArray(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 4096 }),
        (alpha, perByte, counts, bytes) => {
          const total = 1 << 20;
          const samples = counts.map((calls) => sample(calls, calls * alpha + total * perByte, total));
          assert.ok(leastCallMs(samples, bytes) <= alpha + bytes * perByte + 1e-9);
        },
      ),
    );
  });

  it('is the sample itself at the size it was measured', () => {
    close(leastCallMs([sample(8, 2, 800)], 100), 0.25);
  });
});

describe('a bucket count priced from the collective alone', () => {
  it('takes the collective alone at that count where it was measured, its calls sharing its fastest rep by bytes', () => {
    const cost = bucketCost([sample(4, 2, 400), sample(8, 3, 400)], 8, false);
    close(cost?.(50) ?? 0, 0.375);
  });

  it("prices the layout's own count from the samples' floor, and predicts another only from two message sizes", () => {
    const one = [sample(8, 2, 800)];
    close(bucketCost(one, 16, true)?.(50) ?? 0, 0.125);
    assert.equal(bucketCost(one, 16, false), null, 'one message size cannot tell α from the bandwidth');
    // α 0.5 ms a call, 1 ms per 400 bytes: 2 calls 2 ms, 4 calls 3 ms; 8 calls of 50 bytes 0.625 ms each.
    close(bucketCost([sample(2, 2, 400), sample(4, 3, 400)], 8, false)?.(50) ?? 0, 0.625);
  });
});

describe("the collective's term on the DDP step recorded on two H100s", () => {
  // ddp.yaml, 8 buckets of 64 MiB over two H100s: the all-reduce alone in 8 buckets, 2.128 ms at its fastest.
  const [result] = loadResults(join(measured, '2026-11-26-h100x2-kinds', 'final', 'ddp.json'));
  assert.ok(result);
  const mode = result.modes.find((m) => m.role.kind === 'overlapped') as ModeResult;
  const kernels = result.modes.filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel');
  const context: TermContext = {
    modes: result.modes.filter((m) => m !== mode),
    computeMs: kernels.reduce((sum, m) => sum + Math.min(...m.samplesMs), 0),
    items: 32,
  };
  const gpu = { term: 'kernels' as const, steadyMs: 3.35, perOpMs: 0, fillDrainMs: 0, ms: 3.35, terms: [] };

  it('is the bucket model of the communication section: the compute, then the last bucket, 3.597 ms', () => {
    const step = bucketStep(mode, 8, context);
    assert.ok(step);
    assert.equal(step.limitedBy, 'compute');
    close(step.ms, 3.597, 5e-4);
    const bound = bucketBound(gpu, mode, 8, context);
    assert.equal(bound?.term, 'communication');
    close(bound?.ms ?? 0, step.ms);
  });

  it('predicts no other bucket count from one message size, and says so in the words it gives', () => {
    assert.equal(bucketBound(gpu, mode, 16, context), null);
    assert.equal(aloneSamples(context.modes).length, 1);
    assert.match(
      bucketTerm.words?.unpredicted(mode, context) ?? '',
      /^the all-reduce alone was measured in 8 buckets only/,
    );
    assert.equal(bucketTerm.words?.change(8, 16), 'use 16 buckets, pipeline.chunks 16 (now 8)');
    assert.match(
      bucketTerm.words?.limit(mode, 8, context) ?? '',
      /^the compute, then the last bucket's all-reduce \(0\.26\d ms\)/,
    );
  });

  it('leaves a mode without collectives to the GPU bound', () => {
    assert.equal(bucketBound(gpu, { ...mode, bytes: { h2d: 0, d2h: 128 } }, 16, context), gpu);
  });
});
