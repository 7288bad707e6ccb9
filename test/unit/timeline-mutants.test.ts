import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busyFractions, idleGaps, issueRate } from '../../src/analysis/timeline.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';

// Further edges of the timeline analysis that mutation testing (npm run mutation) found unpinned.

function op(stream: string, kind: TimelineOp['kind'], startMs: number, endMs: number): TimelineOp {
  return {
    mode: 'm',
    device: 0,
    stream,
    kind,
    chunk: null,
    buffer: kind === 'kernel' || kind === 'host' ? null : 'b',
    kernel: kind === 'kernel' ? 'k' : null,
    bytes: 1,
    startMs,
    endMs,
    issuedMs: 0,
  };
}
const rep = (totalMs: number, ops: TimelineOp[], issueMs = 0.01): TracedRep => ({
  mode: 'm',
  device: 0,
  totalMs,
  issueMs,
  streams: [...new Set(ops.map((o) => o.stream))].map((id) => ({ id, flags: 'non-blocking' as const, priority: null })),
  ops,
});

describe('timeline analysis, engines and host', () => {
  it("counts host functions as the host's busy time", () => {
    const busy = busyFractions(rep(10, [op('s0', 'host', 2, 5), op('s0', 'kernel', 5, 6)]));
    assert.deepEqual([busy.host, busy.sm, busy.idle], [0.3, 0.1, 0.6]);
  });

  it('with one copy engine, makes every copy direction wait for either, and a peer copy for a peer copy', () => {
    const waits = (first: TimelineOp['kind'], second: TimelineOp['kind']) =>
      idleGaps(rep(4, [op('s0', first, 0, 2), op('s1', second, 1, 3)]), { copyEngines: 1 }).map((g) => g.engineMs);
    assert.deepEqual(
      [
        waits('h2d', 'h2d'),
        waits('h2d', 'd2h'),
        waits('d2h', 'h2d'),
        waits('d2h', 'd2h'),
        waits('peer', 'peer'),
        waits('h2d', 'peer'),
      ],
      [[1], [1], [1], [1], [1], [0]],
    );
    const two = (first: TimelineOp['kind'], second: TimelineOp['kind']) =>
      idleGaps(rep(4, [op('s0', first, 0, 2), op('s1', second, 1, 3)])).map((g) => g.engineMs);
    assert.deepEqual(
      [two('h2d', 'h2d'), two('d2h', 'd2h'), two('peer', 'peer'), two('d2h', 'h2d')],
      [[1], [1], [1], [0]],
    );
  });

  it('is not issue-bound when issuing took exactly as long as the GPU was busy', () => {
    assert.equal(issueRate(rep(4, [op('s0', 'kernel', 0, 2)], 2)).hostIssueBound, false);
    assert.equal(issueRate(rep(4, [op('s0', 'kernel', 0, 2)], 2.001)).hostIssueBound, true);
  });
});
