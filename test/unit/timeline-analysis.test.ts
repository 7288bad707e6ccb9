import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { intersect, measure, union } from '../../src/analysis/intervals.js';
import { analyzeRep, busyFractions, idleGaps, issueRate, overlapFractions } from '../../src/analysis/timeline.js';
import { analyzeTracedRep } from '../../src/report/timeline-common.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';

const close = (actual: number, expected: number, what = '') =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

function op(stream: string, kind: TimelineOp['kind'], startMs: number, endMs: number, issuedMs: number): TimelineOp {
  return {
    mode: 'm',
    device: 0,
    stream,
    kind,
    chunk: null,
    buffer: kind === 'kernel' || kind === 'host' ? null : 'buf',
    kernel: kind === 'kernel' ? 'k' : null,
    bytes: 1000,
    startMs,
    endMs,
    issuedMs,
  };
}

function rep(totalMs: number, issueMs: number, ops: TimelineOp[]): TracedRep {
  const ids = [...new Set(ops.map((o) => o.stream))];
  return {
    mode: 'm',
    device: 0,
    totalMs,
    issueMs,
    streams: ids.map((id) => ({ id, flags: 'non-blocking', priority: null })),
    ops,
  };
}

// Two streams sharing the H2D engine: s1's first copy queues behind s0's, and its D2H behind s0's D2H.
//   s0: H2D [0,4]  K [4,6]  D2H [6,9]
//   s1: H2D [4,7]  K [7,8]  D2H [9,10]
const twoStreams = rep(10, 0.012, [
  op('s0', 'h2d', 0, 4, 0),
  op('s0', 'kernel', 4, 6, 0.002),
  op('s0', 'd2h', 6, 9, 0.004),
  op('s1', 'h2d', 4, 7, 0.006),
  op('s1', 'kernel', 7, 8, 0.008),
  op('s1', 'd2h', 9, 10, 0.01),
]);

describe('interval arithmetic', () => {
  it('merges overlapping and touching intervals and drops empty ones', () => {
    assert.deepEqual(
      union([
        { start: 5, end: 6 },
        { start: 0, end: 2 },
        { start: 2, end: 3 },
        { start: 1, end: 1.5 },
        { start: 4, end: 4 },
      ]),
      [
        { start: 0, end: 3 },
        { start: 5, end: 6 },
      ],
    );
  });

  it('intersects two sets piece by piece', () => {
    const both = intersect(
      [
        { start: 0, end: 4 },
        { start: 6, end: 10 },
      ],
      [
        { start: 3, end: 7 },
        { start: 9, end: 12 },
      ],
    );
    assert.deepEqual(both, [
      { start: 3, end: 4 },
      { start: 6, end: 7 },
      { start: 9, end: 10 },
    ]);
    assert.equal(measure(both), 3);
  });
});

describe('timeline analysis', () => {
  it('counts each engine busy over the union of its ops, so concurrent ops count once', () => {
    const busy = busyFractions(twoStreams);
    close(busy.h2d, 0.7, 'h2d'); // [0,7]
    close(busy.d2h, 0.4, 'd2h'); // [6,10]
    close(busy.sm, 0.3, 'sm'); // [4,6] ∪ [7,8]
    close(busy.host, 0);
    close(busy.idle, 0);
  });

  it('reports the time no op ran as idle', () => {
    const busy = busyFractions(rep(8, 0.01, [op('s0', 'h2d', 1, 3, 0), op('s0', 'kernel', 4, 6, 0)]));
    close(busy.idle, 0.5); // [0,1], [3,4], [6,8]
    close(busy.h2d, 0.25);
  });

  it('measures copy–kernel and H2D–D2H overlap as fractions of the rep', () => {
    const overlap = overlapFractions(twoStreams);
    close(overlap.copyWithKernel, 0.3); // copies cover [0,10], so all 3 ms of kernels overlap a copy
    close(overlap.h2dWithD2h, 0.1); // [6,7]
  });

  it('blames a queued copy on its busy engine and a gap before issue on the host', () => {
    const gaps = idleGaps(twoStreams);
    assert.deepEqual(
      gaps.map((g) => [g.stream, g.op, g.startMs, g.endMs]),
      [
        ['s1', 3, 0, 4],
        ['s1', 5, 8, 9],
      ],
    );
    const [first, second] = gaps;
    close(first!.hostMs, 0.006, 'issued 6 µs after the start');
    close(first!.engineMs, 3.994, 'the rest behind s0’s H2D');
    close(first!.dependencyMs, 0);
    close(second!.engineMs, 1, 's0’s D2H held the D2H engine until 9');
    close(second!.hostMs + second!.dependencyMs, 0);
  });

  it('blames the part of a gap after issue with a free engine on a dependency', () => {
    // The kernel was issued at 2.5 but started at 3: 1.5 ms waiting for the host, then 0.5 ms with nothing to blame.
    const [gap] = idleGaps(rep(4, 2.6, [op('s0', 'h2d', 0, 1, 0), op('s0', 'kernel', 3, 4, 2.5)]));
    close(gap!.hostMs, 1.5);
    close(gap!.engineMs, 0);
    close(gap!.dependencyMs, 0.5);
  });

  it('maps host issue times to GPU time through the host offset', () => {
    const [gap] = idleGaps(rep(4, 2.6, [op('s0', 'h2d', 0, 1, 0), op('s0', 'kernel', 3, 4, 2.5)]), { hostOffsetMs: 1 });
    close(gap!.hostMs, 0.5); // issued at GPU time 1.5
    close(gap!.dependencyMs, 1.5);
  });

  it('lets a D2H keep an H2D waiting only when the device has one copy engine', () => {
    const shared = rep(3, 0.01, [op('s0', 'd2h', 0, 2, 0), op('s1', 'h2d', 2, 3, 0)]);
    const oneEngine = idleGaps(shared, { copyEngines: 1 })[0]!;
    const twoEngines = idleGaps(shared, { copyEngines: 2 })[0]!;
    close(oneEngine.engineMs, 2);
    close(oneEngine.dependencyMs, 0);
    close(twoEngines.engineMs, 0);
    close(twoEngines.dependencyMs, 2);
  });

  it('totals the causes per stream and keeps the finished tail apart', () => {
    const analysis = analyzeRep(twoStreams);
    const [s0, s1] = analysis.streams;
    assert.deepEqual([s0!.stream, s1!.stream], ['s0', 's1']);
    close(s0!.idleMs, 0);
    close(s0!.tailMs, 1, 's0 finished at 9 of 10');
    close(s1!.idleMs, 5);
    close(s1!.engineMs, 4.994);
    close(s1!.hostMs, 0.006);
    close(s1!.tailMs, 0);
    close(analysis.idle.idleMs, 5);
    close(analysis.idle.engineMs + analysis.idle.hostMs + analysis.idle.dependencyMs, 5);
  });

  it('compares ops issued per µs with ops completed per µs', () => {
    const issue = issueRate(twoStreams);
    assert.equal(issue.ops, 6);
    close(issue.issuedPerUs, 0.5); // 6 ops in 12 µs
    close(issue.completedPerUs, 0.0006); // 6 ops in 10 ms
    close(issue.gpuBusyMs, 10);
    assert.equal(issue.hostIssueBound, false);
  });

  it('calls a rep host-issue-bound when issue outlasts the GPU’s busy time', () => {
    // Four 10 µs kernels, one issued every 50 µs: the GPU is busy 40 µs of a 200 µs issue loop.
    const trickle = rep(
      0.162,
      0.2,
      [0, 1, 2, 3].map((i) => op('s0', 'kernel', 0.05 * i + 0.001, 0.05 * i + 0.011, 0.05 * i)),
    );
    const issue = issueRate(trickle);
    close(issue.gpuBusyMs, 0.04);
    assert.equal(issue.hostIssueBound, true);
    const analysis = analyzeRep(trickle);
    // Every kernel but the first sat 39 µs after its predecessor waiting to be issued, then started 1 µs after issue.
    close(analysis.idle.hostMs, 3 * 0.039, 'waiting for issue');
    close(analysis.idle.dependencyMs, 4 * 0.001, 'launch latency after issue');
  });

  it('gives zeros, not NaN, for an empty rep', () => {
    const analysis = analyzeRep(rep(0, 0, []));
    assert.deepEqual(analysis.busy, { h2d: 0, d2h: 0, sm: 0, host: 0, idle: 0 });
    assert.equal(analysis.issue.issuedPerUs, 0);
    assert.equal(analysis.issue.hostIssueBound, false);
  });
});

describe('timeline analysis of a Result', () => {
  it('blames no wait on the host when a gate held the streams until the rep was issued', () => {
    const result = syntheticRunResult();
    const rep = result.timeline!.reps[1]!;
    const open = analyzeTracedRep(result, rep);
    const gated = analyzeTracedRep({ ...result, policy: { ...result.policy, gate: true } }, rep);
    assert.ok(open.idle.hostMs > 0.1);
    assert.equal(gated.idle.hostMs, 0);
    close(gated.idle.dependencyMs + gated.idle.engineMs, open.idle.idleMs);
  });
});
