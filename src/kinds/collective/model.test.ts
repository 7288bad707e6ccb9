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

describe('the collective alone, read from the modes and priced into the bound', () => {
  // A template to vary: the all-reduce alone in 8 buckets from ddp.yaml; every field a test reads is set below.
  const [ddp] = loadResults(join(measured, '2026-11-26-h100x2-kinds', 'final', 'ddp.json'));
  assert.ok(ddp);
  const template = ddp.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'collective') as ModeResult;
  const serial = ddp.modes.find((m) => m.role.kind === 'serial') as ModeResult;
  const mode = (fields: Partial<ModeResult>): ModeResult => {
    const { collective: _, ...rest } = template;
    return { ...rest, ...fields };
  };
  const alone = (collective: 'allreduce' | 'reducescatter', calls: number, bytes: number, samplesMs = [2]) =>
    mode({
      role: { kind: 'stage', stage: 'collective', collective, buckets: calls },
      bytes: { h2d: 0, d2h: 0, collective: bytes },
      collective: { collective, calls, bytes },
      samplesMs,
    });
  const layout = (chunks: number, collectiveBytes = 800) =>
    mode({
      role: {
        kind: 'overlapped',
        layout: { chunks, streams: 2, order: 'depth-first', topology: 'stage-per-stream' },
      },
      bytes: { h2d: 0, d2h: 0, collective: collectiveBytes },
      collective: { collective: 'allreduce', calls: chunks, bytes: collectiveBytes },
    });
  // 8 calls of 100 bytes in 2 ms: 0.25 ms a call. Over 8 layers of 1 ms compute, the calls back to back limit.
  const context = (computeMs: number, modes = [alone('allreduce', 8, 800)], items = 8): TermContext => ({
    modes,
    computeMs,
    items,
  });
  const gpu = (ms: number) => ({
    term: 'kernels' as const,
    steadyMs: ms,
    perOpMs: 0,
    fillDrainMs: 0,
    ms,
    terms: [{ term: 'kernels' as const, steadyMs: ms, perOpMs: 0, fillDrainMs: 0, ms }],
  });

  it('takes only collective stages that have samples, each at its fastest rep', () => {
    const kernel = mode({
      role: { kind: 'stage', stage: 'kernel', kernel: 'backward' },
      bytes: { h2d: 0, d2h: 0, collective: 400 },
      collective: { collective: 'allreduce', calls: 2, bytes: 400 },
    });
    const unsampled = alone('allreduce', 2, 400, []);
    const samples = aloneSamples([serial, layout(8), kernel, unsampled, alone('allreduce', 4, 400, [3, 2.5, 4])]);
    assert.deepEqual(samples, [{ collective: 'allreduce', calls: 4, bytes: 400, ms: 2.5 }]);
  });

  it("reads a mode's own collective record before its role, and a file's from before it by the role", () => {
    const recorded = mode({
      role: { kind: 'stage', stage: 'collective', collective: 'allreduce', buckets: 2 },
      bytes: { h2d: 0, d2h: 0, collective: 999 },
      collective: { collective: 'reducescatter', calls: 8, bytes: 800 },
      samplesMs: [1.5],
    });
    assert.deepEqual(aloneSamples([recorded]), [{ collective: 'reducescatter', calls: 8, bytes: 800, ms: 1.5 }]);
    const before = mode({
      role: { kind: 'stage', stage: 'collective', collective: 'allreduce', buckets: 4 },
      bytes: { h2d: 0, d2h: 0, collective: 1000 },
      samplesMs: [3],
    });
    assert.deepEqual(aloneSamples([before]), [{ collective: 'allreduce', calls: 4, bytes: 1000, ms: 3 }]);
    const oneCall = mode({
      role: { kind: 'stage', stage: 'collective', collective: 'allreduce' },
      bytes: { h2d: 0, d2h: 0, collective: 500 },
      samplesMs: [3],
    });
    assert.deepEqual(aloneSamples([oneCall]), [{ collective: 'allreduce', calls: 1, bytes: 500, ms: 3 }]);
  });

  it('skips a collective alone of no bytes, and keeps to the first collective found', () => {
    const empty = mode({
      role: { kind: 'stage', stage: 'collective', collective: 'allreduce', buckets: 2 },
      bytes: { h2d: 0, d2h: 0 },
      samplesMs: [1],
    });
    const modes = [empty, alone('allreduce', 8, 800), alone('reducescatter', 4, 800), alone('allreduce', 4, 800, [1])];
    assert.deepEqual(
      aloneSamples(modes).map((s) => [s.collective, s.calls]),
      [
        ['allreduce', 8],
        ['allreduce', 4],
      ],
    );
  });

  it("gives a call larger than every sample's at least a sample's time per call", () => {
    close(leastCallMs([sample(8, 2, 800)], 1000), 0.25);
  });

  it("prices a measured count from its own rep, even at the layout's count", () => {
    // 8 calls of 50 bytes in 5 ms: 1.25 ms for 100 bytes; the floor of both samples would say 0.625 ms.
    close(bucketCost([sample(4, 2, 400), sample(8, 5, 400)], 8, true)?.(100) ?? 0, 1.25);
  });

  it("prices the layout's own unmeasured count from the floor, and predicts no other from one message size", () => {
    const step = bucketStep(layout(16), 16, context(1, undefined, 16));
    assert.ok(step, 'the layout at its own chunk count keeps a bound');
    assert.equal(step.buckets, 16);
    // Each 50-byte bucket at the sample's 0.125 ms (α = 0); 16 of them after the first layer's 1/16 ms of compute.
    close(step.ms, 1 / 16 + 16 * 0.125);
    assert.equal(bucketStep(layout(8), 16, context(1, undefined, 16)), null);
    assert.equal(bucketStep(serial, 16, context(1, undefined, 16)), null, 'serial is no layout: no own count');
  });

  it('gives no step without the collective alone or without items to cut', () => {
    assert.equal(bucketStep(layout(8), 8, context(1, [])), null);
    assert.equal(bucketStep(layout(8), 8, context(1, undefined, 0)), null);
    const own = gpu(1);
    assert.equal(bucketBound(own, layout(8), 8, context(1, [])), own, 'the own count keeps the GPU bound');
    assert.equal(bucketBound(own, layout(8), 16, context(1, [])), null, 'and no other count is predicted');
  });

  it('leaves a mode without collectives to the GPU bound at any count', () => {
    const own = gpu(1);
    assert.equal(bucketBound(own, layout(8, 0), 16, context(1)), own);
  });

  it('makes the communication term the bound where it is longer than the GPU bound, beside its terms', () => {
    // 8 buckets of 100 bytes at 0.25 ms, after the first layer's 0.125 ms: 2.125 ms, the calls back to back.
    const communication = { term: 'communication', steadyMs: 2.125, perOpMs: 0, fillDrainMs: 0, ms: 2.125 };
    const bound = bucketBound(gpu(1.5), layout(8), 8, context(1));
    assert.deepEqual(bound, { ...communication, terms: [...gpu(1.5).terms, communication] });
    const gpuBound = bucketBound(gpu(3), layout(8), 8, context(1));
    assert.deepEqual(gpuBound, { ...gpu(3), terms: [...gpu(3).terms, communication] });
    const tie = bucketBound(gpu(2.125), layout(8), 8, context(1));
    assert.equal(tie?.term, 'kernels', 'a tie keeps the GPU term');
  });

  it('names the collective, its buckets and what limits the step in its words', () => {
    const words = bucketTerm.words;
    assert.ok(words);
    assert.equal(words.layout(1), '1 bucket');
    assert.equal(words.layout(8), '8 buckets');
    assert.equal(
      words.limit(layout(8), 8, context(1)),
      "the all-reduces back to back (2.000 ms) after the first bucket's compute",
    );
    assert.equal(words.limit(layout(8), 8, context(10)), "the compute, then the last bucket's all-reduce (0.250 ms)");
    assert.equal(
      words.limit(layout(8), 8, context(1, [alone('reducescatter', 8, 800)])),
      "the reduce-scatters back to back (2.000 ms) after the first bucket's compute",
    );
    assert.equal(words.limit(layout(8), 8, context(1, [])), 'the all-reduces (the collective alone was not measured)');
  });

  it('says why no other bucket count is predicted, and nothing where two message sizes were measured', () => {
    const words = bucketTerm.words;
    assert.ok(words);
    assert.equal(
      words.unpredicted(layout(8), context(1, [])),
      'the all-reduce alone was not measured, so no other bucket count is predicted',
    );
    assert.equal(
      words.unpredicted(layout(8), context(1)),
      'the all-reduce alone was measured in 8 buckets only: sweep pipeline.chunks to predict others',
    );
    // 100 bytes a call and 25 bytes a call: two message sizes (their products, 1,600, would be one).
    const two = context(1, [alone('allreduce', 4, 400), alone('allreduce', 8, 200)]);
    assert.equal(words.unpredicted(layout(8), two), null);
  });
});
