import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type CommOp, collectiveBandwidth, commOverlap as overlapWith } from './analysis.js';
import { stepBound } from './buckets.js';
import { REPORT_FACTS } from '../../report/kind-sections.js';
import { COLLECTIVES } from '../../vocabulary.js';

// Integer times keep shifted and scaled copies exact, so the properties compare with equality.
const opArbitrary: fc.Arbitrary<CommOp> = fc
  .record({
    kind: fc.constantFrom('collective', 'kernel', 'gemm', 'h2d', 'd2h', 'host'),
    device: fc.integer({ min: 0, max: 2 }),
    start: fc.integer({ min: 0, max: 1000 }),
    length: fc.integer({ min: 0, max: 300 }),
  })
  .map(({ kind, device, start, length }) => ({ kind, device, startMs: start, endMs: start + length, bytes: 0 }));
const commOverlap = (ops: readonly CommOp[]) => overlapWith(ops, REPORT_FACTS);
const opsArbitrary = fc.array(opArbitrary, { maxLength: 40 });

describe('communication overlap, for any traced ops', () => {
  it('the overlap fraction lies in [0, 1] and exposed plus overlapped is the communication time, per device and in total', () => {
    fc.assert(
      fc.property(opsArbitrary, (ops) => {
        const { perDevice, total } = commOverlap(ops);
        for (const d of [...perDevice, total]) {
          assert.equal(d.exposedMs + d.overlappedMs, d.commMs);
          assert.ok(d.exposedMs >= 0 && d.overlappedMs >= 0);
          if (d.overlap !== null) assert.ok(d.overlap >= 0 && d.overlap <= 1);
          else assert.equal(d.commMs, 0);
        }
        assert.equal(
          total.commMs,
          perDevice.reduce((a, d) => a + d.commMs, 0),
        );
      }),
    );
  });

  it('is unchanged when every interval of a device moves by the same time', () => {
    fc.assert(
      fc.property(opsArbitrary, fc.integer({ min: -500, max: 500 }), (ops, shift) => {
        const moved = ops.map((op) => ({ ...op, startMs: op.startMs + shift, endMs: op.endMs + shift }));
        assert.deepEqual(commOverlap(moved), commOverlap(ops));
      }),
    );
  });

  it('more computation never exposes more communication', () => {
    fc.assert(
      fc.property(
        opsArbitrary,
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 1, max: 300 }),
        (ops, device, start, length) => {
          const more = commOverlap([
            ...ops,
            { kind: 'kernel', device, startMs: start, endMs: start + length, bytes: 0 },
          ]);
          assert.ok(more.total.exposedMs <= commOverlap(ops).total.exposedMs);
        },
      ),
    );
  });

  it('a device that only communicates exposes all of it', () => {
    fc.assert(
      fc.property(opsArbitrary, (ops) => {
        const comm = ops.filter((op) => op.kind === 'collective');
        for (const d of commOverlap(comm).perDevice) assert.equal(d.exposedMs, d.commMs);
      }),
    );
  });
});

describe('bandwidths and the bucket model, for any sizes', () => {
  it('bus bandwidth is the algorithm bandwidth times 2(n−1)/n for all-reduce and (n−1)/n otherwise', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...COLLECTIVES),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.double({ min: 1e-3, max: 1e4, noNaN: true }),
        (collective, ranks, bytes, ms) => {
          const bw = collectiveBandwidth(collective, bytes, ranks, ms);
          const factor = (collective === 'allreduce' ? 2 : 1) * ((ranks - 1) / ranks);
          assert.ok(Math.abs(bw.busGbPerSecond - bw.algGbPerSecond * factor) <= 1e-9 * bw.algGbPerSecond);
        },
      ),
    );
  });

  const shapeArbitrary = fc.record({
    layers: fc.integer({ min: 1, max: 48 }),
    computeMs: fc.integer({ min: 1, max: 100 }),
    gradientBytes: fc.integer({ min: 1, max: 1e6 }),
  });
  const costArbitrary = fc.record({
    alpha: fc.integer({ min: 0, max: 10 }),
    perByte: fc.double({ min: 0, max: 1e-3, noNaN: true }),
  });

  it('a step is never faster than its compute and last collective, nor than its collectives after the first bucket', () => {
    fc.assert(
      fc.property(
        shapeArbitrary,
        costArbitrary,
        fc.integer({ min: 1, max: 48 }),
        (shape, { alpha, perByte }, buckets) => {
          const bound = stepBound(shape, buckets, (bytes) => alpha + bytes * perByte);
          const slack = 1e-9 * bound.ms;
          assert.ok(bound.ms + slack >= bound.computeMs + bound.lastCommMs);
          assert.ok(bound.ms + slack >= bound.commMs);
          assert.ok(bound.buckets <= buckets && bound.buckets <= shape.layers);
        },
      ),
    );
  });

  it('with equal buckets the recurrence is max(C + a, C/B + B·a)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        (buckets, perBucket, computeMs, a) => {
          const bound = stepBound({ layers: buckets * perBucket, computeMs, gradientBytes: 1000 }, buckets, () => a);
          const expected = Math.max(computeMs + a, computeMs / buckets + buckets * a);
          assert.ok(Math.abs(bound.ms - expected) <= 1e-9 * expected);
        },
      ),
    );
  });
});
