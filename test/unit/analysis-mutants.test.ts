import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clip, intersect, union } from '../../src/analysis/intervals.js';
import { activity, analyzeRep, idleGaps, issueRate, streamOrder } from '../../src/analysis/timeline.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';

// Edges of the timeline analysis that mutation testing (npm run mutation) found unpinned.

const close = (actual: number, expected: number, what = '') =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

function op(stream: string, kind: TimelineOp['kind'], startMs: number, endMs: number, issuedMs = 0): TimelineOp {
  return {
    mode: 'm',
    device: 0,
    stream,
    kind,
    chunk: null,
    buffer: kind === 'kernel' ? null : 'b',
    kernel: kind === 'kernel' ? 'k' : null,
    bytes: 1,
    startMs,
    endMs,
    issuedMs,
  };
}
const rep = (totalMs: number, ops: TimelineOp[], streams = [...new Set(ops.map((o) => o.stream))]): TracedRep => ({
  mode: 'm',
  device: 0,
  totalMs,
  issueMs: 0.01,
  streams: streams.map((id) => ({ id, flags: 'non-blocking' as const, priority: null })),
  ops,
});

describe('interval edges', () => {
  it('pieces that only touch share no time, and a reversed window clips to nothing', () => {
    assert.deepEqual(intersect([{ start: 0, end: 2 }], [{ start: 2, end: 4 }]), []);
    assert.deepEqual(clip([{ start: 0, end: 10 }], 5, 3), []);
    assert.deepEqual(clip([{ start: 0, end: 10 }], 3, 5), [{ start: 3, end: 5 }]);
  });

  it('orders pieces of equal start by their end before merging', () => {
    assert.deepEqual(
      union([
        { start: 0, end: 5 },
        { start: 0, end: 1 },
        { start: 6, end: 7 },
      ]),
      [
        { start: 0, end: 5 },
        { start: 6, end: 7 },
      ],
    );
  });

  it('walks both lists to their ends, whichever ends first', () => {
    const a = [
      { start: 0, end: 1 },
      { start: 2, end: 3 },
      { start: 4, end: 9 },
    ];
    const b = [
      { start: 0.5, end: 6 },
      { start: 8, end: 10 },
    ];
    assert.deepEqual(intersect(a, b), [
      { start: 0.5, end: 1 },
      { start: 2, end: 3 },
      { start: 4, end: 6 },
      { start: 8, end: 9 },
    ]);
    assert.deepEqual(intersect(b, a), intersect(a, b));
  });
});

describe('timeline edges', () => {
  it('clips activity to the rep', () => {
    const r = rep(5, [op('s0', 'h2d', -1, 2), op('s1', 'h2d', 4, 8)]);
    assert.deepEqual(activity(r, ['h2d']), [
      { start: 0, end: 2 },
      { start: 4, end: 5 },
    ]);
  });

  it("measures a gap from the latest end so far, when a stream's ops overlap", () => {
    // s0's kernel [0,5] and a copy inside it [2,3]: the stream waited from 5, not from 3, for the copy at 6.
    const gaps = idleGaps(rep(8, [op('s0', 'kernel', 0, 5), op('s0', 'h2d', 2, 3), op('s0', 'd2h', 6, 7)]));
    assert.deepEqual(
      gaps.map((g) => [g.op, g.startMs, g.endMs]),
      [[2, 5, 6]],
    );
    close(gaps[0]!.dependencyMs, 1);
  });

  it('assumes two copy engines unless told: an H2D waits for a D2H only with one', () => {
    const r = rep(4, [op('s0', 'd2h', 0, 2), op('s1', 'h2d', 1, 3)]);
    const [gap] = idleGaps(r);
    assert.deepEqual([gap!.engineMs, gap!.dependencyMs], [0, 1]);
    assert.deepEqual(
      idleGaps(r, { copyEngines: 1 }).map((g) => [g.engineMs, g.dependencyMs]),
      [[1, 0]],
    );
    // A kernel never waits for an engine.
    assert.deepEqual(
      idleGaps(rep(4, [op('s0', 'kernel', 0, 2), op('s1', 'kernel', 1, 3)]), { copyEngines: 1 }).map((g) => g.engineMs),
      [0],
    );
  });

  it('blames no negative time on the host when the op was issued before the gap began', () => {
    const [gap] = idleGaps(rep(4, [op('s0', 'h2d', 0, 1, 0), op('s0', 'kernel', 2, 3, 0.5)]));
    assert.deepEqual([gap!.hostMs, gap!.engineMs, gap!.dependencyMs], [0, 0, 1]);
    const [late] = idleGaps(rep(4, [op('s0', 'h2d', 0, 1, 0), op('s0', 'kernel', 2, 3, 2.5)]));
    assert.deepEqual([late!.hostMs, late!.dependencyMs], [1, 0]);
  });

  it("lists the rep's streams first, then those only its ops name, and each stream's ops by start then issue order", () => {
    const r = rep(
      6,
      [op('s0', 'h2d', 3, 4), op('s1', 'kernel', 0, 1), op('s0', 'kernel', 1, 2), op('s0', 'd2h', 1, 2)],
      ['s1', 'idle'],
    );
    assert.deepEqual(streamOrder(r), ['s1', 'idle', 's0']);
    // s0's ops by start, then issue order: the kernel (index 2) and the D2H (3) both at 1, then the H2D (0) at 3.
    assert.deepEqual(
      idleGaps(r)
        .filter((g) => g.stream === 's0')
        .map((g) => [g.op, g.startMs, g.endMs]),
      [
        [2, 0, 1],
        [0, 2, 3],
      ],
    );
    const streams = analyzeRep(r).streams;
    assert.deepEqual(
      streams.map((s) => [s.stream, s.idleMs, s.tailMs]),
      [
        ['s1', 0, 5],
        ['idle', 0, 6],
        ['s0', 2, 2],
      ],
    );
    const total = analyzeRep(r).idle;
    assert.deepEqual([total.idleMs, total.hostMs, total.engineMs, total.dependencyMs], [2, 0, 0, 2]);
  });

  it('rates issue and completion per µs and is not issue-bound with no ops', () => {
    const rate = issueRate({ ...rep(2, [op('s0', 'kernel', 0, 1)]), issueMs: 0.5 });
    close(rate.issuedPerUs, 1 / 500);
    close(rate.completedPerUs, 1 / 2000);
    assert.equal(rate.hostIssueBound, false);
    assert.equal(issueRate({ ...rep(2, []), issueMs: 0.5 }).hostIssueBound, false);
    const none = issueRate({ ...rep(0, []), issueMs: 0 });
    assert.deepEqual([none.issuedPerUs, none.completedPerUs], [0, 0]);
  });
});
