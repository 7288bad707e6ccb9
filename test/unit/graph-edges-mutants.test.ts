import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildGraph, type GraphOptions, linkHoldMs } from '../../src/analysis/graph-edges.js';
import { type EdgeKind, edgeAt, opStart, type ReplayGraph } from '../../src/analysis/graph.js';
import { replay } from '../../src/analysis/replay.js';
import type { GpuEvent, HostCall } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// The edges buildGraph reads from a trace (analysis/graph-edges.ts), each kind on a few ops and calls small enough to
// work out by hand: which points an edge joins and its weight, after calibration has dropped what the trace
// contradicts. Points are named `<op or call>.start` / `.end`.

const NO_RATES: GraphOptions = { linkRates: { h2d: null, d2h: null }, perOpMs: 0.001 };

function kernel(name: string, stream: string, start: number, end: number, more: Partial<GpuEvent> = {}): GpuEvent {
  return gpuEvent({ stream, start, end, name, ...more });
}

function copy(name: string, stream: string, start: number, end: number, more: Partial<GpuEvent> = {}): GpuEvent {
  return kernel(name, stream, start, end, {
    kind: 'memcpy',
    direction: 'h2d',
    bytes: 1e6,
    hostMemory: 'pinned',
    ...more,
  });
}

function launch(name: string, correlation: number | null, start: number, end: number, thread: number | null = 1) {
  return { kind: 'launch', name, start, end, correlation, thread } satisfies HostCall;
}

function sync(name: string, start: number, end: number, thread: number | null = 1) {
  return { kind: 'sync', name, start, end, correlation: null, thread } satisfies HostCall;
}

function pointName(graph: ReplayGraph, p: number): string {
  const task = p >> 1;
  const n = graph.ops.length;
  const name = task < n ? graph.ops[task]!.name : graph.calls[task - n]!.name;
  return `${name}.${p % 2 ? 'end' : 'start'}`;
}

/** The graph's edges of one kind as `from → to weight`, weights to the nanosecond. */
function edges(graph: ReplayGraph, kind: EdgeKind): string[] {
  const out: string[] = [];
  for (let k = 0; k < graph.edges.count; k++) {
    const e = edgeAt(graph.edges, k);
    if (e.kind !== kind) continue;
    out.push(`${pointName(graph, e.from)} → ${pointName(graph, e.to)} ${+e.weight.toFixed(6)}`);
  }
  return out.sort();
}

const names = (graph: ReplayGraph) => ({ ops: graph.ops.map((o) => o.name), calls: graph.calls.map((c) => c.name) });
const taskOf = (graph: ReplayGraph, name: string) => {
  const i = graph.ops.findIndex((o) => o.name === name);
  return i >= 0 ? i : graph.ops.length + graph.calls.findIndex((c) => c.name === name);
};
const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

describe('buildGraph: the ops and calls it reads (graph-edges.ts)', { timeout: 5_000 }, () => {
  it("keeps the caller's ops where they are already in start order, ties by end, without copying them", () => {
    const events = [kernel('a', 'x', 0, 1), kernel('b', 'y', 0, 2), kernel('c', 'x', 1, 3)];
    assert.equal(buildGraph(events, [], NO_RATES).ops, events);
    const longFirst = [kernel('long', 'x', 0, 5), kernel('short', 'y', 1, 2)];
    assert.equal(buildGraph(longFirst, [], NO_RATES).ops, longFirst);
    const together = [kernel('a', 'x', 0, 1), kernel('b', 'y', 0, 1)];
    assert.equal(buildGraph(together, [], NO_RATES).ops, together);
  });

  it("sorts ops by start, ties by end, into a copy of the caller's list", () => {
    const events = [kernel('c', 'x', 1, 3), kernel('b', 'y', 0, 2), kernel('a', 'x', 0, 1)];
    assert.deepEqual(names(buildGraph(events, [], NO_RATES)).ops, ['a', 'b', 'c']);
    assert.deepEqual(
      events.map((e) => e.name),
      ['c', 'b', 'a'],
    );
    const tie = [kernel('long', 'y', 0, 2), kernel('short', 'x', 0, 1), kernel('next', 'x', 1, 3)];
    assert.deepEqual(names(buildGraph(tie, [], NO_RATES)).ops, ['short', 'long', 'next']);
    const later = [kernel('later', 'x', 1, 2), kernel('sooner', 'y', 0, 3)];
    assert.deepEqual(names(buildGraph(later, [], NO_RATES)).ops, ['sooner', 'later']);
  });

  it("keeps this device's launches and every synchronize, in start order, and drops other devices' launches", () => {
    const events = [kernel('k1', 's', 1, 2, { correlation: 1 }), kernel('k0', 's', 2, 3)];
    const calls = [
      sync('sync', 0.5, 0.6),
      launch('other device', 9, 0.3, 0.31),
      launch('no correlation', null, 0.2, 0.21),
      launch('launch k1', 1, 0, 0.01),
    ];
    assert.deepEqual(names(buildGraph(events, calls, NO_RATES)).calls, ['launch k1', 'sync']);
  });

  it('gives each op and each call that waited for nothing its own time, and replays the trace unchanged', () => {
    const events = [kernel('k1', 's', 0.02, 0.5, { correlation: 1 }), kernel('k2', 's', 0.501, 1, { correlation: 2 })];
    const calls = [launch('L1', 1, 0, 0.005), launch('L2', 2, 0.01, 0.016)];
    const graph = buildGraph(events, calls, NO_RATES);
    close(graph.duration[taskOf(graph, 'k1')]!, 0.48, 'k1');
    close(graph.duration[taskOf(graph, 'k2')]!, 0.499, 'k2');
    close(graph.duration[taskOf(graph, 'L2')]!, 0.006, 'L2');
    const time = replay(graph);
    graph.observed.forEach((t, p) => close(time[p]!, t, pointName(graph, p)));
  });
});

describe('buildGraph: issue, host and stream edges', { timeout: 5_000 }, () => {
  it("joins a launch call's start to its op's start, weighted by the call's time, and a stream's ops", () => {
    const events = [kernel('k1', 's', 0.02, 0.5, { correlation: 1 }), kernel('k2', 's', 0.501, 1, { correlation: 2 })];
    const calls = [launch('L1', 1, 0, 0.005), launch('L2', 2, 0.01, 0.016)];
    const graph = buildGraph(events, calls, NO_RATES);
    assert.deepEqual(edges(graph, 'issue'), ['L1.start → k1.start 0.005', 'L2.start → k2.start 0.006']);
    assert.deepEqual(edges(graph, 'host'), ['L1.end → L2.start 0.005']);
    assert.deepEqual(edges(graph, 'stream'), ['k1.end → k2.start 0']);
    assert.deepEqual(edges(graph, 'wait'), []);
  });

  it("weights a blocking copy's issue edge by where in its call the copy started", () => {
    const events = [copy('c', 's', 0.2, 1.15, { correlation: 3, hostMemory: 'pageable' })];
    const calls = [launch('C', 3, 0.1, 1.1)];
    assert.deepEqual(edges(buildGraph(events, calls, NO_RATES), 'issue'), ['C.start → c.start 0.1']);
  });

  it('takes only a launch as the call that issued an op, not a synchronize that shares its correlation id', () => {
    const events = [kernel('k', 's', 1, 2, { correlation: 5 })];
    const calls = [launch('L', 5, 0, 0.01), { ...sync('S', 0.5, 0.6), correlation: 5 }];
    assert.deepEqual(edges(buildGraph(events, calls, NO_RATES), 'issue'), ['L.start → k.start 0.01']);
  });

  // Two kernels long after the calls, so that a call's points are not its index's.
  const later = [kernel('k0', 'k', 5, 6), kernel('k1', 'k', 6, 7)];

  it('hangs a call made inside another off its start, and a call right after another off its end', () => {
    const calls = [
      sync('first', 1, 1.05),
      sync('outer', 2, 3),
      sync('inner', 2.2, 2.4),
      sync('next', 3.5, 3.6),
      sync('touching', 3.6, 3.7),
    ];
    assert.deepEqual(edges(buildGraph(later, calls, NO_RATES), 'host'), [
      'first.end → outer.start 0.95',
      'inner.end → next.start 1.1',
      'next.end → touching.start 0',
      'outer.start → inner.start 0.2',
    ]);
  });

  it("follows another thread's call, as well as its own, where that thread took over until it", () => {
    const calls = [
      sync('main 0', 0, 0.05, 1),
      sync('main 1', 0.06, 0.1, 1),
      sync('autograd', 0.2, 1.0, 2),
      sync('main 2', 1.2, 1.3, 1),
    ];
    assert.deepEqual(edges(buildGraph(later, calls, NO_RATES), 'host'), [
      'autograd.end → main 2.start 0.2',
      'main 0.end → main 1.start 0.01',
      'main 1.end → main 2.start 0',
    ]);
    const handedBackAtOnce = [sync('main 1', 0, 0.1, 1), sync('autograd', 0.2, 1.2, 2), sync('main 2', 1.2, 1.3, 1)];
    assert.deepEqual(edges(buildGraph([], handedBackAtOnce, NO_RATES), 'host'), [
      'autograd.end → main 2.start 0',
      'main 1.end → main 2.start 0',
    ]);
  });

  it("follows only its own thread where the other's call ended with its own or ran on past its start", () => {
    const endedWithIt = [sync('main 1', 0, 1, 1), sync('other', 0.2, 1, 2), sync('main 2', 1.2, 1.3, 1)];
    assert.deepEqual(edges(buildGraph([], endedWithIt, NO_RATES), 'host'), ['main 1.end → main 2.start 0.2']);
    const ranOn = [sync('main 1', 0, 0.1, 1), sync('other', 0.2, 1.25, 2), sync('main 2', 1.2, 1.3, 1)];
    assert.deepEqual(edges(buildGraph([], ranOn, NO_RATES), 'host'), ['main 1.end → main 2.start 1.1']);
  });

  it('takes calls that name no thread as one thread', () => {
    const calls = [sync('a', 0, 0.1, null), { ...sync('b', 0.3, 0.4), thread: undefined }];
    assert.deepEqual(edges(buildGraph([], calls, NO_RATES), 'host'), ['a.end → b.start 0.2']);
  });

  it('holds an op without a known call at its issue time, or at its start where the trace gives none', () => {
    const events = [
      kernel('first', 's', 0, 1, { correlation: 1 }),
      kernel('issued early', 's', 1.5, 2, { issued: 1.2 }),
      kernel('issued late', 's', 2.5, 3, { issued: 2.8 }),
      kernel('not said', 's', 3.5, 4),
    ];
    const graph = buildGraph(events, [launch('L', 1, -0.1, -0.09)], NO_RATES);
    const anchor = (name: string) => graph.anchor[opStart(taskOf(graph, name))]!;
    assert.equal(anchor('first'), Number.NEGATIVE_INFINITY);
    assert.equal(anchor('issued early'), 1.2);
    assert.equal(anchor('issued late'), 2.5);
    assert.equal(anchor('not said'), 3.5);
    // Freed from the op before it on its stream, an op starts when it was issued, not sooner.
    const stream = [...Array(graph.edges.count).keys()].filter((k) => edgeAt(graph.edges, k).kind === 'stream');
    const time = replay(graph, { dropped: new Set(stream) });
    close(time[opStart(taskOf(graph, 'issued early'))]!, 1.2, 'issued early');
    close(time[opStart(taskOf(graph, 'not said'))]!, 3.5, 'not said');
  });
});

describe('buildGraph: copies sharing a link', { timeout: 5_000 }, () => {
  it("joins a direction's copies in start order, each after the whole of the one before where none overlap", () => {
    const events = [
      kernel('k0', 'k', 0, 0.5),
      kernel('k1', 'k', 0.6, 0.7),
      copy('h1', 'a', 1, 2),
      copy('d1', 'c', 1.5, 1.7, { direction: 'd2h' }),
      copy('h2', 'b', 2, 3),
      copy('d2', 'd', 2.5, 2.9, { direction: 'd2h' }),
    ];
    const graph = buildGraph(events, [], { linkRates: { h2d: 10, d2h: 10 }, perOpMs: 0.001 });
    assert.deepEqual(graph.concurrentCopies, { h2d: false, d2h: false });
    assert.deepEqual(edges(graph, 'link'), ['d1.start → d2.start 0.2', 'h1.start → h2.start 1']);
  });

  it('holds the link only for the bytes at its rate where copies of a direction ran at once on two streams', () => {
    const events = [
      copy('h1', 'a', 0, 1),
      copy('h2', 'b', 0.5, 1.5),
      copy('d1', 'c', 2, 3, { direction: 'd2h', bytes: 4e6 }),
      copy('d2', 'd', 3, 4, { direction: 'd2h' }),
    ];
    const graph = buildGraph(events, [], { linkRates: { h2d: 10, d2h: 1 }, perOpMs: 0.001 });
    assert.deepEqual(graph.concurrentCopies, { h2d: true, d2h: false });
    assert.deepEqual(edges(graph, 'link'), ['d1.start → d2.start 1', 'h1.start → h2.start 0.1']);
  });

  it('sees d2h copies run at once apart from h2d ones, and neither in kernels that overlap', () => {
    const events = [
      kernel('k1', 'a', 0, 1),
      kernel('k2', 'b', 0.5, 1.5),
      copy('h', 'c', 2, 3),
      copy('d1', 'd', 2.5, 3.5, { direction: 'd2h' }),
      copy('d2', 'e', 3, 4, { direction: 'd2h' }),
    ];
    assert.deepEqual(buildGraph(events, [], NO_RATES).concurrentCopies, { h2d: false, d2h: true });
  });

  it('does not take copies as overlapping where one starts as the other ends, or within the tolerance before', () => {
    const backToBack = [copy('h1', 'a', 0, 1), copy('h2', 'b', 1, 2)];
    assert.equal(buildGraph(backToBack, [], NO_RATES).concurrentCopies.h2d, false);
    const withinTolerance = [copy('h1', 'a', 0, 1), copy('h2', 'b', 0.999, 2)];
    assert.equal(buildGraph(withinTolerance, [], NO_RATES).concurrentCopies.h2d, false);
    const atTolerance = [copy('h1', 'a', 0, 1), copy('h2', 'b', 0.9985, 2)];
    assert.equal(buildGraph(atTolerance, [], NO_RATES).concurrentCopies.h2d, false);
  });

  it('measures overlap against the longest copy so far, not a copy inside it on its own stream', () => {
    const events = [copy('long', 'a', 0, 10), copy('inside', 'a', 1, 2), copy('other', 'b', 3, 4)];
    assert.equal(buildGraph(events, [], NO_RATES).concurrentCopies.h2d, true);
    const sameStream = [copy('long', 'a', 0, 10), copy('inside', 'a', 1, 2)];
    assert.equal(buildGraph(sameStream, [], NO_RATES).concurrentCopies.h2d, false);
  });

  it("holds the link for bytes / rate, at most the copy's time, and its whole time where either is unknown", () => {
    const op = { start: 1, end: 1.5, bytes: 1e6 };
    close(linkHoldMs(op, 10), 0.1, '1 MB at 10 GB/s');
    close(linkHoldMs(op, 1), 0.5, '1 MB at 1 GB/s is more than its 0.5 ms');
    close(linkHoldMs(op, null), 0.5, 'rate unknown');
    close(linkHoldMs(op, 0), 0.5, 'rate 0');
    close(linkHoldMs(op, -3), 0.5, 'negative rate');
    close(linkHoldMs(op, Number.NaN), 0.5, 'NaN rate');
    close(linkHoldMs({ ...op, bytes: null }, 10), 0.5, 'bytes unknown');
    close(linkHoldMs({ ...op, bytes: 0 }, 0), 0.5, 'no bytes, rate 0');
    close(linkHoldMs({ start: 2, end: 1, bytes: 1e6 }, 10), 0, 'reversed');
    close(linkHoldMs({ start: 2, end: 1, bytes: null }, null), 0, 'reversed, unknown');
  });
});

describe('buildGraph: waits on another stream', { timeout: 5_000 }, () => {
  const early = { issued: 0 };

  it('joins a late op to the op on another stream that ended just before it, within 20 µs', () => {
    const graph = buildGraph([kernel('a', 'a', 5, 6, early), kernel('b', 'b', 6.01, 7, early)], [], NO_RATES);
    assert.deepEqual(edges(graph, 'wait'), ['a.end → b.start 0']);
  });

  it('joins no op that ended more than 20 µs before, and one that ended exactly 20 µs before', () => {
    const far = [kernel('a', 'a', 5, 6, early), kernel('b', 'b', 6.03, 7, early)];
    assert.deepEqual(edges(buildGraph(far, [], NO_RATES), 'wait'), []);
    const edge = [kernel('a', 'a', -1, 0, { issued: -5 }), kernel('b', 'b', 0.02, 1, { issued: -5 })];
    assert.deepEqual(edges(buildGraph(edge, [], NO_RATES), 'wait'), ['a.end → b.start 0']);
  });

  it('takes an op that ended within the tolerance after the start as what it waited for', () => {
    const graph = buildGraph([kernel('a', 'a', 5, 6.011, early), kernel('b', 'b', 6.01, 7, early)], [], NO_RATES);
    assert.deepEqual(edges(graph, 'wait'), ['a.end → b.start -0.001']);
  });

  it('joins nothing to an op that started within the tolerance of when it was issued', () => {
    const lateIssue = [kernel('a', 'a', 5, 6, early), kernel('b', 'b', 6.01, 7, { issued: 6.009 })];
    assert.deepEqual(edges(buildGraph(lateIssue, [], NO_RATES), 'wait'), []);
    const atTolerance = [kernel('a', 'a', -1, 0.001, { issued: -2 }), kernel('b', 'b', 0.0015, 1, { issued: 0 })];
    assert.deepEqual(edges(buildGraph(atTolerance, [], NO_RATES), 'wait'), []);
  });

  it('joins nothing where the other op ended no later than this op was issued or its stream was free', () => {
    const issuedAfter = [kernel('a', 'a', 5, 6, early), kernel('b', 'b', 6.01, 7, { issued: 6 })];
    assert.deepEqual(edges(buildGraph(issuedAfter, [], NO_RATES), 'wait'), []);
    const streamBusy = [
      kernel('a', 'a', 5, 6, early),
      kernel('b0', 'b', 5, 6.005, early),
      kernel('b', 'b', 6.01, 7, early),
    ];
    assert.deepEqual(edges(buildGraph(streamBusy, [], NO_RATES), 'wait'), []);
    const otherLater = [
      kernel('b0', 'b', 5, 6, early),
      kernel('a', 'a', 5, 6.005, early),
      kernel('b', 'b', 6.01, 7, early),
    ];
    assert.deepEqual(edges(buildGraph(otherLater, [], NO_RATES), 'wait'), ['a.end → b.start 0']);
  });

  it('passes over ops of its own stream, itself among them, looking for what an op waited for', () => {
    const graph = buildGraph([kernel('a', 'a', 5, 6, early), kernel('z', 'b', 6.01, 6.01, early)], [], NO_RATES);
    assert.deepEqual(edges(graph, 'wait'), ['a.end → z.start 0']);
    assert.deepEqual(edges(buildGraph([kernel('z', 'b', 6.01, 6.01, early)], [], NO_RATES), 'wait'), []);
  });

  it('takes an op launched by a call as issued when its call returned', () => {
    const calls = [launch('L', 1, 0, 0.005), launch('late L', 2, 6, 6.009)];
    const events = [
      kernel('a', 'a', 5, 6, early),
      kernel('b', 'b', 6.01, 7, { correlation: 1 }),
      kernel('c', 'c', 6.01, 7, { correlation: 2 }),
    ];
    assert.deepEqual(edges(buildGraph(events, calls, NO_RATES), 'wait'), ['a.end → b.start 0']);
    const first = [kernel('a', 'a', 5, 6, early), kernel('c', 'c', 6.01, 7, { correlation: 2 })];
    assert.deepEqual(edges(buildGraph(first, [launch('late L', 2, 6, 6.009)], NO_RATES), 'wait'), []);
  });
});

describe('buildGraph: calls that waited', { timeout: 5_000 }, () => {
  const launches = [launch('L1', 1, 0, 0.005), launch('L2', 2, 0.01, 0.015)];
  const kernels = [
    kernel('k1', 's', 0.02, 0.03, { correlation: 1 }),
    kernel('k2', 's', 0.03, 0.04, { correlation: 2 }),
  ];

  it("joins a long call that returned about when its op ended to that end; it keeps a launch's time", () => {
    const events = [...kernels, copy('c', 'c', 0.2, 1.15, { correlation: 3, hostMemory: 'pageable' })];
    const graph = buildGraph(events, [...launches, launch('C', 3, 0.1, 1.1)], NO_RATES);
    assert.deepEqual(edges(graph, 'blocking'), ['c.end → C.end -0.05']);
    close(graph.duration[taskOf(graph, 'C')]!, 0.005, "C's own time");
  });

  it('takes a call that returned exactly 0.1 ms after its op ended as blocked, and one 0.15 ms after as not', () => {
    const at = [...launches, launch('C', 3, 0, 0.2)];
    const op = (start: number, end: number) => [...kernels, copy('c', 'c', start, end, { correlation: 3 })];
    assert.deepEqual(edges(buildGraph(op(0.05, 0.1), at, NO_RATES), 'blocking'), ['c.end → C.end 0']);
    assert.deepEqual(edges(buildGraph(op(0.04, 0.05), at, NO_RATES), 'blocking'), []);
  });

  it('takes a call of at most 50 µs, or of at most five plain launches, as not blocked', () => {
    const at50 = [...launches, launch('C', 3, 0, 0.05)];
    const events = [...kernels, copy('c', 'c', 0.01, 0.04, { correlation: 3 })];
    const graph = buildGraph(events, at50, NO_RATES);
    assert.deepEqual(edges(graph, 'blocking'), []);
    close(graph.duration[taskOf(graph, 'C')]!, 0.05, "C's own time");
    const short = [...launches, launch('C', 3, 2, 2.04)];
    assert.deepEqual(
      edges(buildGraph([...kernels, copy('c', 'c', 2.01, 2.03, { correlation: 3 })], short, NO_RATES), 'blocking'),
      [],
    );
    // Under a profiler a launch takes 20 µs: a copy call of 80 µs is less than five of them.
    const slow = [launch('L1', 1, 0, 0.02), launch('L2', 2, 0.03, 0.05), launch('C', 3, 1, 1.08)];
    const slowOps = [...kernels, copy('c', 'c', 1.01, 1.07, { correlation: 3 })];
    assert.deepEqual(edges(buildGraph(slowOps, slow, NO_RATES), 'blocking'), []);
  });

  it('takes a call that began only after its op ended as not waiting for it', () => {
    const events = [...kernels, copy('c', 'c', 0.5, 1, { correlation: 3 })];
    assert.deepEqual(edges(buildGraph(events, [...launches, launch('C', 3, 1, 1.06)], NO_RATES), 'blocking'), []);
  });

  it("joins a synchronize to the last op that ended while it ran; it keeps a launch's time", () => {
    const events = [
      ...kernels,
      kernel('a', 'a', 1, 2),
      kernel('b', 'b', 1, 2.5),
      kernel('c', 'c', 1, 3.001),
      kernel('later', 'd', 3.5, 4),
    ];
    const graph = buildGraph(events, [...launches, sync('S', 1, 3), sync('after', 4, 5)], NO_RATES);
    assert.deepEqual(edges(graph, 'sync'), ['c.end → S.end -0.001']);
    close(graph.duration[taskOf(graph, 'S')]!, 0.005, "S's own time");
    close(graph.duration[taskOf(graph, 'after')]!, 1, 'a synchronize that waited for nothing keeps its time');
  });

  it('keeps a brief synchronize its own time where that is less than a launch’s', () => {
    const events = [...kernels, kernel('a', 'a', 0.5, 1.001)];
    const graph = buildGraph(events, [...launches, sync('brief', 1, 1.002)], NO_RATES);
    assert.deepEqual(edges(graph, 'sync'), ['a.end → brief.end 0']);
    close(graph.duration[taskOf(graph, 'brief')]!, 0.002, "brief's own time");
  });

  it('joins the first call of all to its op where it blocked on it', () => {
    const calls = [launch('C', 3, 0, 1), launch('L1', 1, 1.1, 1.105), launch('L2', 2, 1.11, 1.115)];
    const events = [
      copy('c', 'c', 0.1, 1.01, { correlation: 3 }),
      kernel('k1', 's', 1.12, 1.13, { correlation: 1 }),
      kernel('k2', 's', 1.13, 1.14, { correlation: 2 }),
    ];
    assert.deepEqual(edges(buildGraph(events, calls, NO_RATES), 'blocking'), ['c.end → C.end -0.01']);
  });

  it('joins a synchronize to the only op there is, and none to an op that ended as it began', () => {
    assert.deepEqual(edges(buildGraph([kernel('k', 's', 0, 1)], [sync('S', 0.5, 1.0005)], NO_RATES), 'sync'), [
      'k.end → S.end 0',
    ]);
    assert.deepEqual(edges(buildGraph([kernel('k', 's', 0, 1)], [sync('S', 1, 2)], NO_RATES), 'sync'), []);
  });
});

describe('buildGraph: the ops by end time that waits and synchronizes search', { timeout: 5_000 }, () => {
  it('finds the op that ended last among ops sorted by start but not by end', () => {
    const events = [
      kernel('long', 'a', 0, 10),
      kernel('m1', 'b', 1, 2),
      kernel('m2', 'c', 3, 4),
      kernel('m3', 'd', 5, 6),
      kernel('m4', 'e', 6.5, 7),
      kernel('m5', 'f', 7.5, 8),
    ];
    const calls = [sync('S2', 1.5, 2.0005), sync('S4', 3.5, 4.0005), sync('S6', 5.5, 6.0005), sync('S10', 9, 10.0005)];
    assert.deepEqual(edges(buildGraph(events, calls, NO_RATES), 'sync'), [
      'long.end → S10.end 0',
      'm1.end → S2.end 0',
      'm2.end → S4.end 0',
      'm3.end → S6.end 0',
    ]);
  });

  /** A synchronize from 0.1 ms before each op's end to just after it: each waits for that op. */
  const syncsAtEnds = (events: readonly GpuEvent[]) =>
    events.map((e) => sync(`S ${e.name}`, e.end - 0.1, e.end + 0.0005));
  const eachFound = (events: readonly GpuEvent[]) => events.map((e) => `${e.name}.end → S ${e.name}.end 0`).sort();

  it('finds it among ops nested one inside another, whose ends run backwards', () => {
    const events = Array.from({ length: 12 }, (_, i) => kernel(`n${i}`, `s${i}`, i * 0.1, 10 - i * 0.25));
    assert.deepEqual(edges(buildGraph(events, syncsAtEnds(events), NO_RATES), 'sync'), eachFound(events));
  });

  it('finds it where sorting by end takes exactly four moves an op before the last op, itself out of order', () => {
    // 12 ops: the first ten end backwards (45 moves), the 11th among the last three (48 = 4 × 12), the 12th first.
    const ends = [...Array.from({ length: 10 }, (_, i) => 10 - i * 0.25), 9.4, 5];
    const events = ends.map((end, i) => kernel(`n${i}`, `s${i}`, i * 0.1, end));
    assert.deepEqual(edges(buildGraph(events, syncsAtEnds(events), NO_RATES), 'sync'), eachFound(events));
  });

  it('takes, of two ops that ended together, the one that started later as the one a synchronize waited for', () => {
    const events = [kernel('sooner', 'a', 0, 2), kernel('later', 'b', 1, 2)];
    assert.deepEqual(edges(buildGraph(events, [sync('S', 1.5, 2.0005)], NO_RATES), 'sync'), ['later.end → S.end 0']);
  });
});
