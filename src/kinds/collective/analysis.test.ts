import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REPORT_FACTS } from '../../report/kind-sections.js';
import { busFactor, type CommOp, collectiveBandwidth, commOverlap as overlapWith } from './analysis.js';
import { callMs, fitAlphaBeta, stepBound, withAlpha } from './buckets.js';

/** The overlap with the facts the report gives it. */
const commOverlap = (ops: readonly CommOp[]) => overlapWith(ops, REPORT_FACTS);

const GiB = 1024 ** 3;
const op = (kind: string, device: number, startMs: number, endMs: number, extra: Partial<CommOp> = {}): CommOp => ({
  kind,
  device,
  startMs,
  endMs,
  bytes: 0,
  ...(kind === 'collective' ? { collective: 'allreduce' as const } : {}),
  ...extra,
});
const close = (actual: number, expected: number, digits = 9) =>
  assert.ok(Math.abs(actual - expected) <= 10 ** -digits * Math.max(1, Math.abs(expected)), `${actual} ≠ ${expected}`);

describe('collective bandwidths as nccl-tests define them', () => {
  it('an all-reduce of 1 GiB in 4 ms on 2 ranks: algbw 268.4 GB/s, busbw the same (factor 2(n−1)/n = 1)', () => {
    const bw = collectiveBandwidth('allreduce', GiB, 2, 4);
    close(bw.algGbPerSecond, 268.435456);
    close(bw.busGbPerSecond, 268.435456);
  });

  it('on 8 ranks the all-reduce bus bandwidth is 1.75 × the algorithm bandwidth', () => {
    const bw = collectiveBandwidth('allreduce', GiB, 8, 4);
    close(bw.busGbPerSecond, 268.435456 * 1.75);
    assert.equal(busFactor('allreduce', 8), 1.75);
  });

  it("reduce-scatter and all-gather divide the whole array (the chunk scattered or gathered, 8 × each rank's part) by the time, bus factor (n−1)/n", () => {
    for (const collective of ['reducescatter', 'allgather'] as const) {
      const bw = collectiveBandwidth(collective, GiB, 8, 5);
      close(bw.algGbPerSecond, 214.7483648);
      close(bw.busGbPerSecond, 214.7483648 * 0.875);
    }
  });

  it('one rank moves nothing across a link: bus bandwidth 0; a time of 0 gives NaN, not Infinity', () => {
    assert.equal(collectiveBandwidth('allreduce', GiB, 1, 2).busGbPerSecond, 0);
    assert.ok(Number.isNaN(collectiveBandwidth('allreduce', GiB, 2, 0).algGbPerSecond));
  });
});

describe('exposed communication and the overlap fraction', () => {
  it('per device: communication time, the part computation covered, the rest exposed; copies are not computation', () => {
    const analysis = commOverlap([
      op('collective', 0, 0, 4),
      op('collective', 0, 6, 10),
      op('kernel', 0, 2, 7),
      op('h2d', 0, 0, 10),
      op('collective', 1, 1, 3),
      op('gemm', 1, 0, 5),
    ]);
    assert.deepEqual(analysis.perDevice, [
      { device: 0, commMs: 8, overlappedMs: 3, exposedMs: 5, overlap: 0.375 },
      { device: 1, commMs: 2, overlappedMs: 2, exposedMs: 0, overlap: 1 },
    ]);
    assert.deepEqual(analysis.total, { commMs: 10, overlappedMs: 5, exposedMs: 5, overlap: 0.5 });
  });

  it('collectives that overlap each other count once, and CUPTI engine intervals win over the events', () => {
    const analysis = commOverlap([
      op('collective', 0, 0, 4),
      op('collective', 0, 2, 6),
      op('kernel', 0, 0, 10, { engineStartMs: 5, engineEndMs: 10 }),
    ]);
    assert.deepEqual(analysis.perDevice, [{ device: 0, commMs: 6, overlappedMs: 1, exposedMs: 5, overlap: 1 / 6 }]);
  });

  it('lists devices by index, and a device whose collectives took no time has no overlap fraction', () => {
    const analysis = commOverlap([op('collective', 1, 0, 2), op('collective', 0, 3, 3), op('kernel', 1, 1, 5)]);
    assert.deepEqual(analysis.perDevice, [
      { device: 0, commMs: 0, overlappedMs: 0, exposedMs: 0, overlap: null },
      { device: 1, commMs: 2, overlappedMs: 1, exposedMs: 1, overlap: 0.5 },
    ]);
  });

  it('an op with half an engine interval keeps its events', () => {
    const analysis = commOverlap([op('collective', 0, 0, 4), op('kernel', 0, 0, 2, { engineStartMs: 1 })]);
    assert.equal(analysis.total.overlappedMs, 2);
  });

  it('without collectives there is no device and no overlap fraction', () => {
    const analysis = commOverlap([op('kernel', 0, 0, 1)]);
    assert.deepEqual(analysis.perDevice, []);
    assert.equal(analysis.total.overlap, null);
    assert.equal(analysis.total.commMs, 0);
  });
});

describe('the α–β model of a collective', () => {
  it('fits α and the bus bandwidth exactly from two message sizes', () => {
    // α = 0.02 ms, 200 GB/s on 2 ranks (bus factor 1): 1 MB calls take 0.025 ms, 100 MB calls 0.52 ms.
    const model = fitAlphaBeta('allreduce', 2, [
      { calls: 10, bytes: 1e7, ms: 0.25 },
      { calls: 2, bytes: 2e8, ms: 1.04 },
    ]);
    assert.ok(model);
    close(model.alphaMs, 0.02);
    close(model.gbPerSecond, 200);
    close(callMs(model, 5e7), 0.27);
  });

  it('charges the bus bytes: on 4 ranks an all-reduce of S bytes costs α + 1.5·S / busbw', () => {
    const model = fitAlphaBeta('allreduce', 4, [
      { calls: 1, bytes: 1e6, ms: 0.01 + 1.5e6 / 300e6 },
      { calls: 1, bytes: 1e8, ms: 0.01 + 1.5e8 / 300e6 },
    ]);
    assert.ok(model);
    close(model.alphaMs, 0.01);
    close(model.gbPerSecond, 300);
  });

  it('one message size cannot separate α from the bandwidth: no fit, unless α is given', () => {
    const sample = { calls: 4, bytes: 4e8, ms: 2.08 };
    assert.equal(fitAlphaBeta('allreduce', 2, [sample, { ...sample, calls: 8, bytes: 8e8, ms: 4.16 }]), null);
    const given = withAlpha('allreduce', 2, sample, 0.02);
    assert.ok(given);
    close(given.gbPerSecond, 200);
    assert.equal(withAlpha('allreduce', 2, sample, 0.52), null);
  });

  it('ignores samples without calls or time, and refuses a fit in which bigger messages are faster', () => {
    const samples = [
      { calls: 10, bytes: 1e7, ms: 0.25 },
      { calls: 2, bytes: 2e8, ms: 1.04 },
    ];
    const model = fitAlphaBeta('allreduce', 2, [
      ...samples,
      { calls: 0, bytes: 5e8, ms: 3 },
      { calls: 1, bytes: 5e8, ms: 0 },
    ]);
    assert.ok(model);
    close(model.gbPerSecond, 200);
    assert.equal(
      fitAlphaBeta('allreduce', 2, [
        { calls: 1, bytes: 1e6, ms: 2 },
        { calls: 1, bytes: 1e8, ms: 1 },
      ]),
      null,
    );
    assert.equal(withAlpha('allreduce', 2, { calls: 1, bytes: 0, ms: 1 }, 0), null);
  });

  it('a negative intercept is refitted through the origin: α is a cost', () => {
    const model = fitAlphaBeta('allreduce', 2, [
      { calls: 1, bytes: 1e6, ms: 0.001 },
      { calls: 1, bytes: 2e6, ms: 0.003 },
    ]);
    assert.ok(model);
    assert.equal(model.alphaMs, 0);
    close(model.gbPerSecond, 1 / 1.4e-9 / 1e6);
  });

  it('on one rank the call is a local copy: its bytes at the algorithm bandwidth', () => {
    close(callMs({ collective: 'allreduce', ranks: 1, alphaMs: 0.01, gbPerSecond: 1000 }, 1e9), 1.01);
  });
});

describe('the bucket model of a data-parallel step', () => {
  const shape = { layers: 8, computeMs: 8, gradientBytes: 800 };
  const slowComm = (bytes: number) => 0.5 + bytes / 100;

  it('four buckets whose collectives outlast their compute: the collectives back to back after the first bucket', () => {
    assert.deepEqual(stepBound(shape, 4, slowComm), {
      buckets: 4,
      bucketBytes: 200,
      ms: 12,
      computeMs: 8,
      commMs: 10,
      lastCommMs: 2.5,
      limitedBy: 'communication',
    });
  });

  it('cheap collectives hide behind compute but for the last bucket', () => {
    const bound = stepBound(shape, 4, (bytes) => 0.1 + bytes / 1000);
    close(bound.ms, 8.3);
    assert.equal(bound.limitedBy, 'compute');
    close(bound.lastCommMs, 0.3);
  });

  it('is limited by compute when the collectives after the first bucket end before the compute and last collective would', () => {
    // 2 + 4 × 1.9 = 9.6 ms of collectives after the first bucket, under 8 + 1.9 ms.
    const bound = stepBound(shape, 4, () => 1.9);
    close(bound.ms, 9.9);
    assert.equal(bound.limitedBy, 'compute');
    // A tie (8 + 4 = 4 + 2 × 4) is the compute's.
    assert.equal(stepBound(shape, 2, () => 4).limitedBy, 'compute');
  });

  it('uneven buckets (8 layers in 3: 3, 3, 2) follow the recurrence', () => {
    const bound = stepBound(shape, 3, slowComm);
    assert.equal(bound.buckets, 3);
    assert.equal(bound.bucketBytes, 300);
    close(bound.ms, 12.5);
  });

  it('trades the last collective against per-call cost: 4 buckets of 1, 2, 3, 4, 8 are fastest', () => {
    const times = [1, 2, 3, 4, 8].map((b) => stepBound(shape, b, slowComm).ms);
    assert.deepEqual(times, [16.5, 13, 12.5, 12, 13]);
  });
});
