import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeviceParts, LayoutShape } from '../../src/measure/bound.js';
import { chunkCandidates, predictedShape, workloadFloor } from '../../src/measure/floor.js';
import { explainGap, topCause } from '../../src/measure/gap.js';
import { DISTINCT_PARTS as parts } from '../helpers/device-parts.js';

// The workload's floor (floor.ts) and the causes of the gap (gap.ts) at the edges mutation testing found unpinned:
// the range searched, ties, the serial run as the floor, and which cause is the top one.

const close = (actual: number | null, expected: number, what = '') =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${what} ${actual} ≠ ${expected}`);

const measured: LayoutShape = { chunks: 8, streams: 2, issue: 'stream', kernelsChunkedMs: null };

describe('the chunk counts the floor is searched over', () => {
  it('are the powers of two up to the most chunks the elements allow, that count included, and never past 4,096', () => {
    assert.deepEqual(chunkCandidates(8), [1, 2, 4, 8]);
    assert.deepEqual(chunkCandidates(6), [1, 2, 4]);
    assert.deepEqual(chunkCandidates(1), [1]);
    assert.deepEqual(chunkCandidates(0), []);
    assert.deepEqual(chunkCandidates(1 << 20).at(-1), 4096);
    assert.equal(chunkCandidates(1 << 20).length, 13);
  });
});

describe("the workload's floor", () => {
  it('tries no more streams than chunks: one chunk is one stream', () => {
    const one = workloadFloor(parts, measured, 1);
    assert.deepEqual([one.chunks, one.streams], [1, 1]);
  });

  it('keeps the first of layouts that tie, the fewest chunks and streams', () => {
    // Without fixed costs or a link, every layout of enough streams ties at the slowest stage.
    const flat: DeviceParts = {
      ...parts,
      h2dOpMs: 0,
      d2hOpMs: 0,
      launchOpMs: 0,
      hostCopyMs: 0,
      hostLaunchMs: 0,
      gated: true,
      linkMs: null,
      h2dMs: 0,
      kernelWholeMs: 0,
    };
    const floor = workloadFloor(flat, measured, 64);
    close(floor.bound.ms, 6);
    assert.deepEqual([floor.chunks, floor.streams], [1, 1]);
  });

  it('has nothing to evaluate with no chunk count allowed', () => {
    assert.throws(() => workloadFloor(parts, measured, 0), RangeError);
  });

  it('is the serial run only when that is strictly faster than every predicted layout, with serial as its one term', () => {
    const predicted = workloadFloor(parts, measured, 64);
    assert.notEqual(predicted.bound.term, 'serial');
    assert.deepEqual(workloadFloor(parts, measured, 64, predicted.bound.ms), predicted);
    const serialMs = predicted.bound.ms - 0.5;
    const term = { term: 'serial', steadyMs: serialMs, perOpMs: 0, fillDrainMs: 0, ms: serialMs };
    assert.deepEqual(workloadFloor(parts, measured, 64, serialMs), {
      chunks: 1,
      streams: 1,
      bound: { ...term, terms: [term] },
    });
  });
});

describe('the measured layout at other counts', () => {
  const chunked: LayoutShape = { chunks: 8, streams: 4, issue: 'stream', kernelsChunkedMs: 10 };

  it("keeps the kernels' chunked time at the very layout that measured it, and none where none was measured", () => {
    assert.deepEqual(predictedShape(parts, chunked, 8, 4), chunked);
    assert.deepEqual(predictedShape(parts, measured, 16, 4), {
      chunks: 16,
      streams: 4,
      issue: 'stream',
      kernelsChunkedMs: null,
    });
  });

  it('caps it by the whole-buffer kernels plus their launches at the same chunks over other streams', () => {
    // 3 ms whole + 7 more chunks × 2 launches × 0.005 ms, under the 10 ms measured at 8 × 4.
    close(predictedShape(parts, chunked, 8, 2).kernelsChunkedMs, 3 + 7 * 2 * 0.005);
  });

  it("adds or saves each chunk's launches when stream-issued, and nothing for a graph replay", () => {
    const low: LayoutShape = { ...chunked, kernelsChunkedMs: 2 };
    close(predictedShape(parts, low, 12, 4).kernelsChunkedMs, 2 + 4 * 2 * 0.005);
    close(predictedShape(parts, { ...low, issue: 'graph' }, 12, 4).kernelsChunkedMs, 2);
    assert.equal(predictedShape(parts, { ...low, issue: 'graph' }, 12, 4).issue, 'graph');
  });
});

describe('the causes of the gap', () => {
  const bound = { term: 'link' as const, steadyMs: 5, perOpMs: 0, fillDrainMs: 1, ms: 6, terms: [] };

  it('leaves out a cause that explains none of the time', () => {
    assert.deepEqual(explainGap(6, bound, 4), [
      { cause: 'shared link', ms: 1 },
      { cause: 'fill and drain', ms: 1 },
    ]);
  });

  it('names the largest positive part, the first of equals, and none when nothing was lost', () => {
    assert.deepEqual(
      topCause([
        { cause: 'per-op cost', ms: 1 },
        { cause: 'host issue', ms: 3 },
        { cause: 'shared link', ms: 2 },
      ]),
      { cause: 'host issue', ms: 3 },
    );
    assert.deepEqual(
      topCause([
        { cause: 'per-op cost', ms: 2 },
        { cause: 'host issue', ms: 2 },
      ]),
      { cause: 'per-op cost', ms: 2 },
    );
    assert.equal(
      topCause([
        { cause: 'per-op cost', ms: 0 },
        { cause: 'host issue', ms: -1 },
      ]),
      null,
    );
    assert.equal(topCause([]), null);
  });
});
