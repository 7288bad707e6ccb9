import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calibrate } from '../../src/analysis/calibrate.js';
import { Builder, type EdgeKind, edgeAt, type ReplayGraph } from '../../src/analysis/graph.js';
import { replay } from '../../src/analysis/replay.js';

// Calibration (analysis/calibrate.ts) on graphs written out by hand: each task's observed start and end, its own
// duration, and the edges between points (2 × task for a start, 2 × task + 1 for an end). What it decides is visible
// in the graph it returns: which edges it kept and at what weight, each edge's lag (what a replay adds after it), the
// starts it anchors, and the order in which a replay visits the points.

type Written = readonly [EdgeKind, number, number, number];

function calibrated(
  times: readonly (readonly [number, number])[],
  written: readonly Written[],
  { perOpMs = 0.001, duration }: { perOpMs?: number; duration?: readonly number[] } = {},
): ReplayGraph {
  const observed = Float64Array.from(times.flat());
  const builder = new Builder();
  for (const [kind, from, to, weight] of written) builder.add(kind, from, to, weight);
  const graph = {
    ops: [],
    calls: [],
    observed,
    duration: Float64Array.from(duration ?? times.map(([start, end]) => end - start)),
    callOf: new Int32Array(0),
    anchor: new Float64Array(observed.length).fill(Number.NEGATIVE_INFINITY),
    concurrentCopies: { h2d: false, d2h: false },
  };
  return calibrate(graph, builder, perOpMs);
}

/** The kept edges as `kind from→to weight lag`, in the order they were written. */
function kept(graph: ReplayGraph): string[] {
  return Array.from({ length: graph.edges.count }, (_, k) => {
    const e = edgeAt(graph.edges, k);
    return `${e.kind} ${e.from}→${e.to} w=${+e.weight.toFixed(6)} lag=${+e.lag.toFixed(6)}`;
  });
}

/** The order by Kahn's algorithm, taking among the ready points the one observed first, ties by index. */
function readyFirst(graph: ReplayGraph): number[] {
  const points = graph.observed.length;
  const before: number[][] = Array.from({ length: points }, (_, p) => (p % 2 ? [p - 1] : []));
  for (let k = 0; k < graph.edges.count; k++) before[graph.edges.to[k]!]!.push(graph.edges.from[k]!);
  const placed = new Set<number>();
  const order: number[] = [];
  while (order.length < points) {
    let next = -1;
    for (let p = 0; p < points; p++) {
      if (placed.has(p) || !before[p]!.every((q) => placed.has(q))) continue;
      if (next < 0 || graph.observed[p]! < graph.observed[next]!) next = p;
    }
    placed.add(next);
    order.push(next);
  }
  return order;
}

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

describe('calibrate: the edges it keeps', { timeout: 5_000 }, () => {
  it('drops an edge whose point the trace has earlier than the edge allows, by more than the tolerance', () => {
    // Task 1 starts 0.01 ms before the edge from task 0's start (weight 1) allows it.
    const graph = calibrated(
      [
        [0, 1],
        [0.99, 2],
      ],
      [['link', 0, 2, 1]],
    );
    assert.deepEqual(kept(graph), []);
  });

  it('keeps an edge the trace contradicts by no more than the tolerance, at the weight the trace shows', () => {
    const graph = calibrated(
      [
        [-1, 0],
        [-0.0015, 1],
      ],
      [['stream', 1, 2, 0]],
    );
    assert.deepEqual(kept(graph), ['stream 1→2 w=-0.0015 lag=0']);
  });

  it('indexes each point’s incoming edges, and anchors at its observed time only a start no edge holds', () => {
    const graph = calibrated(
      [
        [0, 1],
        [1, 2],
        [1.5, 3],
      ],
      [
        ['stream', 1, 2, 0],
        ['wait', 1, 4, 0],
        ['host', 0, 4, 0.5],
      ],
    );
    const into = (p: number) => [...graph.edges.into.subarray(graph.edges.firstInto[p], graph.edges.firstInto[p + 1])];
    assert.deepEqual([0, 1, 2, 3, 4, 5].map(into), [[], [], [0], [], [1, 2], []]);
    assert.deepEqual([...graph.anchor], [0, Number.NEGATIVE_INFINITY, -Infinity, -Infinity, -Infinity, -Infinity]);
  });
});

describe('calibrate: which edge binds a point, and the lags', { timeout: 5_000 }, () => {
  // The binding edge's lag is the rest of the point's time; another's the least of its slack and its kind's usual lag.
  it('lets the edge that allows the latest time bind', () => {
    // Task 2 starts at 2.01: the stream edge from task 1's end allows 2.0, the wait edge from task 0's end 1.0.
    const graph = calibrated(
      [
        [0, 1],
        [1, 2],
        [2.01, 3],
      ],
      [
        ['wait', 1, 4, 0],
        ['stream', 3, 4, 0],
      ],
    );
    // No wait binds anywhere: a wait's usual lag is 0.
    assert.deepEqual(kept(graph), ['wait 1→4 w=0 lag=0', 'stream 3→4 w=0 lag=0.01']);
  });

  it('lets a wait bind before a stream edge that allows the same time, whichever comes first', () => {
    const times = [
      [0, 1],
      [0.5, 1],
      [1.003, 2],
    ] as const;
    const waitFirst = calibrated(times, [
      ['wait', 1, 4, 0],
      ['stream', 3, 4, 0],
    ]);
    assert.deepEqual(kept(waitFirst), ['wait 1→4 w=0 lag=0.003', 'stream 3→4 w=0 lag=0.001']);
    const streamFirst = calibrated(times, [
      ['stream', 3, 4, 0],
      ['wait', 1, 4, 0],
    ]);
    assert.deepEqual(kept(streamFirst), ['stream 3→4 w=0 lag=0.001', 'wait 1→4 w=0 lag=0.003']);
    // Taken out, the wait leaves the op after the stream's usual gap.
    close(replay(streamFirst, { dropped: new Set([1]) })[4]!, 1.001, 'start without its wait');
  });

  it('lets an edge that allows an earlier time not bind, whatever its kind', () => {
    const graph = calibrated(
      [
        [0, 0.9],
        [0, 1],
        [1.003, 2],
      ],
      [
        ['host', 3, 4, 0],
        ['wait', 1, 4, 0],
      ],
    );
    assert.deepEqual(kept(graph), ['host 3→4 w=0 lag=0.003', 'wait 1→4 w=0 lag=0']);
  });

  it('lets the first of two edges of one kind that allow the same time bind', () => {
    // Task 3's start waits on tasks 0 and 1 (both end at 1); task 4's start on task 2, 1 µs after: the usual wait lag
    // is the median of 5 µs and 1 µs.
    const graph = calibrated(
      [
        [0, 1],
        [0, 1],
        [0, 2],
        [1.005, 3],
        [2.001, 3],
      ],
      [
        ['wait', 1, 6, 0],
        ['wait', 3, 6, 0],
        ['wait', 5, 8, 0],
      ],
    );
    assert.deepEqual(kept(graph), ['wait 1→6 w=0 lag=0.005', 'wait 3→6 w=0 lag=0.003', 'wait 5→8 w=0 lag=0.001']);
  });

  it('binds an end on an edge only where it comes later than its start and own duration, beyond the tolerance', () => {
    // Call 1 (0 to 2.004) returns 4 µs after task 0 ends; call 3 (0.2 to 1.002) 2 µs after task 2 ends.
    const twoSyncs = (own: number) =>
      kept(
        calibrated(
          [
            [0.5, 2],
            [0, 2.004],
            [0, 1],
            [0.2, 1.002],
          ],
          [
            ['sync', 1, 3, 0],
            ['sync', 5, 7, 0],
          ],
          { duration: [1.5, own, 1, 0.005] },
        ),
      );
    // Call 1's own 5 µs leave its end to the sync edge, which binds with the rest as lag.
    assert.deepEqual(twoSyncs(0.005), ['sync 1→3 w=0 lag=0.004', 'sync 5→7 w=0 lag=0.002']);
    // Its own 2.003 ms, or 2.0025 (exactly the tolerance short), explain its end: the sync edge takes the usual lag.
    assert.deepEqual(twoSyncs(2.003), ['sync 1→3 w=0 lag=0.002', 'sync 5→7 w=0 lag=0.002']);
    assert.deepEqual(twoSyncs(2.0025), ['sync 1→3 w=0 lag=0.002', 'sync 5→7 w=0 lag=0.002']);
  });

  it('treats an end exactly the tolerance past its start and duration as explained by them', () => {
    const graph = calibrated(
      [
        [0, 0.5],
        [0, 0.5015],
        [0, 0.3],
        [0, 0.2],
      ],
      [
        ['sync', 1, 3, 0],
        ['sync', 5, 3, 0],
        ['sync', 7, 5, 0],
      ],
      { duration: [0.5, 0.5, 0.1, 0.2] },
    );
    // Task 1's end is explained by its start and duration; task 2's end (0.3) binds on task 3's end with lag 0.1.
    assert.deepEqual(kept(graph), ['sync 1→3 w=0 lag=0.0015', 'sync 5→3 w=0 lag=0.1', 'sync 7→5 w=0 lag=0.1']);
  });
});

describe("calibrate: a kind's usual lag", { timeout: 5_000 }, () => {
  /** Four ops on one stream and a fifth on another whose stream edge never binds; the wait that does bind is 4th. */
  function streams(gaps: readonly number[], perOpMs = 0.001) {
    const times: [number, number][] = [];
    let at = 0;
    for (const gap of gaps) {
      at += gap;
      times.push([at, at + 1]);
      at += 1;
    }
    const written: Written[] = gaps.slice(1).map((_, i) => ['stream', 2 * i + 1, 2 * (i + 1), 0] as const);
    return calibrated(times, written, { perOpMs });
  }

  it('is, for a stream edge that does not bind, the median gap the binding stream edges show', () => {
    const graph = calibrated(
      [
        [0, 1],
        [1.001, 2],
        [2.002, 3],
        [3.004, 4],
        [2.5, 5.5],
        [5.51, 6],
      ],
      [
        ['stream', 1, 2, 0],
        ['stream', 3, 4, 0],
        ['stream', 5, 6, 0],
        ['stream', 1, 10, 0],
        ['wait', 9, 10, 0],
      ],
    );
    assert.deepEqual(kept(graph), [
      'stream 1→2 w=0 lag=0.001',
      'stream 3→4 w=0 lag=0.002',
      'stream 5→6 w=0 lag=0.004',
      'stream 1→10 w=0 lag=0.002',
      'wait 9→10 w=0 lag=0.01',
    ]);
  });

  it('is the median gap where the only binding stream edge is the first edge', () => {
    assert.deepEqual(kept(streams([0, 0.004], 0.001)), ['stream 1→2 w=0 lag=0.004']);
    const graph = calibrated(
      [
        [0, 1],
        [1.002, 2],
        [1.5, 2.5],
        [2.51, 3],
      ],
      [
        ['stream', 1, 2, 0],
        ['stream', 1, 6, 0],
        ['wait', 5, 6, 0],
      ],
      { perOpMs: 0.001 },
    );
    const lags = ['stream 1→2 w=0 lag=0.002', 'stream 1→6 w=0 lag=0.002', 'wait 5→6 w=0 lag=0.01'];
    assert.deepEqual(kept(graph), lags);
  });

  it('is the least gap the caller measured where no stream edge binds, for stream and link edges alike', () => {
    const graph = calibrated(
      [
        [0, 1],
        [1.5, 2.5],
        [2.51, 3],
      ],
      [
        ['stream', 1, 4, 0],
        ['link', 0, 4, 1],
        ['wait', 3, 4, 0],
      ],
      { perOpMs: 0.003 },
    );
    const lags = ['stream 1→4 w=0 lag=0.003', 'link 0→4 w=1 lag=0.003', 'wait 3→4 w=0 lag=0.01'];
    assert.deepEqual(kept(graph), lags);
  });

  it("is none for a host edge that does not bind: the host's next call follows at once", () => {
    const graph = calibrated(
      [
        [0, 1],
        [1.5, 2.5],
        [2.51, 3],
        [3.002, 4],
      ],
      [
        ['host', 1, 4, 0],
        ['wait', 3, 4, 0],
        ['issue', 0, 2, 1.4],
        ['host', 5, 6, 0],
      ],
    );
    // The issue edge binds task 1's start with lag 0.1: that is an issue edge's usual lag, not a host edge's; nor is
    // the 2 µs after which the host edge into task 3 binds.
    assert.deepEqual(kept(graph), [
      'host 1→4 w=0 lag=0',
      'wait 3→4 w=0 lag=0.01',
      'issue 0→2 w=1.4 lag=0.1',
      'host 5→6 w=0 lag=0.002',
    ]);
  });

  it("is, for another kind, the median of that kind's binding lags alone", () => {
    // An issue edge binds task 1's start (lag 0.05, the earlier point); a wait binds task 2's (lag 0.003).
    const graph = calibrated(
      [
        [0, 1],
        [0.05, 2],
        [2.003, 3],
      ],
      [
        ['issue', 0, 2, 0],
        ['wait', 3, 4, 0],
        ['wait', 1, 4, 0],
      ],
    );
    assert.deepEqual(kept(graph), ['issue 0→2 w=0 lag=0.05', 'wait 3→4 w=0 lag=0.003', 'wait 1→4 w=0 lag=0.003']);
  });
});

describe('calibrate: the order a replay visits the points in', { timeout: 5_000 }, () => {
  it('is the observed order, ties by index, where no edge holds a point', () => {
    const starts = [5, 3, 8, 1, 9, 2, 7, 3, 4, 6, 0.5];
    const graph = calibrated(
      starts.map((s) => [s, s + 0.25] as const),
      [],
    );
    const points = [...graph.observed.keys()].sort((a, b) => graph.observed[a]! - graph.observed[b]! || a - b);
    assert.deepEqual([...graph.order], points);
  });

  it('puts a point after the points its edges come from, though the trace has it a hair earlier', () => {
    const graph = calibrated(
      [
        [1, 2],
        [1.9995, 3],
        [2.5, 2.6],
      ],
      [['stream', 1, 2, 0]],
    );
    assert.deepEqual([...graph.order], [0, 1, 2, 4, 5, 3]);
    const startAfterStart = calibrated(
      [
        [1, 2],
        [0.999, 1.5],
      ],
      [['host', 0, 2, 0]],
    );
    assert.deepEqual([...startAfterStart.order], [0, 2, 3, 1]);
  });

  it('puts a point held by two edges after both, though it was observed before the second', () => {
    const graph = calibrated(
      [
        [1, 2],
        [1.5, 2.0005],
        [1.9995, 3],
      ],
      [
        ['stream', 1, 4, 0],
        ['wait', 3, 4, 0],
      ],
    );
    assert.deepEqual([...graph.order], [0, 2, 1, 3, 4, 5]);
  });

  it('is, on a larger graph, always the ready point observed first, ties by index', () => {
    // A fixed pseudo-random graph of 40 tasks; edges go from lower to higher tasks only, so it has no cycle. Half the
    // tasks start a hair (1 µs) before the op they wait for ends.
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const times: [number, number][] = [];
    const written: Written[] = [];
    for (let j = 0; j < 40; j++) {
      const from = Math.floor(random() * j);
      const start = j > 0 && random() < 0.5 ? times[from]![1] - 0.001 : Math.round(random() * 50) / 10;
      times.push([start, start + 0.01 + Math.round(random() * 10) / 10]);
      if (j > 0 && start >= times[from]![1] - 0.001) written.push(['wait', 2 * from + 1, 2 * j, 0]);
      const other = Math.floor(random() * j);
      if (j > 0 && start >= times[other]![0]) written.push(['host', 2 * other, 2 * j, 0]);
      if (j > 0 && times[j]![1] >= times[other]![1]) written.push(['sync', 2 * other + 1, 2 * j + 1, 0]);
    }
    const graph = calibrated(times, written);
    assert.equal(graph.edges.count, written.length, 'every edge holds');
    assert.deepEqual([...graph.order], readyFirst(graph));
  });

  it('breaks a cycle at the first of the points observed earliest', () => {
    const graph = calibrated(
      [
        [1, 1.001],
        [1, 1.001],
      ],
      [
        ['wait', 1, 2, 0],
        ['wait', 3, 0, 0],
      ],
    );
    assert.deepEqual([...graph.order], [0, 1, 2, 3]);
  });

  it('breaks a cycle of points within the tolerance of each other at its earliest point', () => {
    const graph = calibrated(
      [
        [1.0005, 1.001],
        [1, 1.001],
        [3, 4],
      ],
      [
        ['wait', 1, 2, 0],
        ['wait', 3, 0, 0],
        ['stream', 3, 4, 0],
      ],
    );
    assert.deepEqual([...graph.order], [2, 3, 0, 1, 4, 5]);
  });
});
