import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildGraph } from '../../src/analysis/graph-edges.js';
import {
  Builder,
  edgeAt,
  edgesInto,
  edgesOfKindInto,
  medianOf,
  medianOfSorted,
  opEnd,
  opStart,
  type ReplayGraph,
  upperBound,
} from '../../src/analysis/graph.js';
import { replay } from '../../src/analysis/replay.js';
import type { GpuEvent, HostCall } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// The replay graph's helpers (analysis/graph.ts) and the replay itself (analysis/replay.ts) on one small step: two
// launches, their kernels on one stream, a third kernel on another stream, and a synchronize at the end.

const kernel = (name: string, stream: string, start: number, end: number, correlation: number): GpuEvent =>
  gpuEvent({ stream, start, end, name, correlation });

const launch = (name: string, correlation: number, start: number, end: number): HostCall => ({
  kind: 'launch',
  name,
  start,
  end,
  correlation,
  thread: 1,
});

/**
 * L1 launches k1 (0.01 to 1), L2 k2 (1.001 to 2, after k1 on stream s), L3 k3 on stream t (0.03 to 0.8); each
 * launch reaches its op 5 µs after its call returns. S waits for k2 and returns at 2.001.
 */
function step(): ReplayGraph {
  const events = [kernel('k1', 's', 0.01, 1, 1), kernel('k2', 's', 1.001, 2, 2), kernel('k3', 't', 0.03, 0.8, 3)];
  const calls: HostCall[] = [
    launch('L1', 1, 0, 0.005),
    launch('L2', 2, 0.01, 0.015),
    launch('L3', 3, 0.02, 0.025),
    { kind: 'sync', name: 'S', start: 0.03, end: 2.001, correlation: null, thread: 1 },
  ];
  return buildGraph(events, calls, { linkRates: { h2d: null, d2h: null }, perOpMs: 0.001 });
}

const op = (graph: ReplayGraph, name: string) => graph.ops.findIndex((o) => o.name === name);
const call = (graph: ReplayGraph, name: string) => graph.ops.length + graph.calls.findIndex((c) => c.name === name);
const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

/** The index of the one edge of `kind` into point `to`. */
function edgeInto(graph: ReplayGraph, to: number, kind: Parameters<typeof edgesOfKindInto>[2]): number {
  const found = edgesOfKindInto(graph.edges, to, kind);
  assert.equal(found.length, 1, `one ${kind} edge into ${to}`);
  return found[0]!;
}

describe('replay graph helpers (graph.ts)', { timeout: 5_000 }, () => {
  it("lists a point's incoming edges, all of them or one kind's, and reads an edge back as an object", () => {
    const graph = step();
    const k2 = opStart(op(graph, 'k2'));
    const into = [...edgesInto(graph.edges, k2)].map((k) => edgeAt(graph.edges, k).kind).sort();
    assert.deepEqual(into, ['issue', 'stream']);
    const stream = edgeInto(graph, k2, 'stream');
    assert.deepEqual(edgeAt(graph.edges, stream), {
      kind: 'stream',
      from: opEnd(op(graph, 'k1')),
      to: k2,
      weight: 0,
      lag: graph.edges.lag[stream],
    });
    close(edgeAt(graph.edges, stream).lag, 0.001, "k2's lag after k1");
    assert.deepEqual(edgesOfKindInto(graph.edges, k2, 'wait'), []);
    assert.deepEqual(edgesOfKindInto(graph.edges, opStart(op(graph, 'k1')), 'stream'), []);
  });

  it('keeps every edge a builder is given past its first 1024', () => {
    const builder = new Builder();
    for (let k = 0; k < 3000; k++) builder.add(k % 2 ? 'wait' : 'stream', k, k + 1, k / 10);
    assert.equal(builder.count, 3000);
    for (const k of [0, 1023, 1024, 2047, 2048, 2999]) {
      assert.equal(builder.kind[k], k % 2 ? 3 : 2, `kind of ${k}`);
      assert.equal(builder.from[k], k);
      assert.equal(builder.to[k], k + 1);
      close(builder.weight[k]!, k / 10, `weight of ${k}`);
    }
  });

  it('replays a stream of 1,100 kernels, more edges than a builder starts with, as the trace has it', () => {
    const events = Array.from({ length: 1100 }, (_, i) => ({ ...kernel(`k${i}`, 's', i, i + 0.999, i), issued: 0 }));
    const graph = buildGraph(events, [], { linkRates: { h2d: null, d2h: null }, perOpMs: 0.001 });
    assert.equal(graph.edges.count, 1099);
    const last = edgeAt(graph.edges, 1098);
    assert.deepEqual([last.kind, last.from, last.to], ['stream', opEnd(1098), opStart(1099)]);
    const time = replay(graph, { opDuration: new Map([[0, 0.5]]) });
    close(time[opStart(1099)]!, 1099 - 0.499, 'the last kernel, after the first ends 0.499 ms sooner');
  });

  it('finds where a value goes in sorted times: after every equal one', () => {
    const sorted = Float64Array.from([1, 2, 2, 3]);
    assert.deepEqual(
      [0.5, 1, 2, 2.5, 3, 5].map((v) => upperBound(sorted, v)),
      [0, 1, 3, 3, 4, 4],
    );
    assert.equal(upperBound(new Float64Array(0), 1), 0);
  });

  it('takes the median of values in any order: the middle one, or the mean of the middle two', () => {
    assert.equal(medianOf([3, 10, 2]), 3);
    assert.equal(medianOf([4, 1, 30, 2]), 3);
    assert.equal(medianOf([]), null);
    assert.equal(medianOfSorted(Float64Array.from([1, 2, 10])), 2);
    assert.equal(medianOfSorted(Float64Array.from([1, 2, 4, 10])), 3);
    assert.equal(medianOfSorted(new Float64Array(0)), null);
  });
});

describe('replay (replay.ts)', { timeout: 5_000 }, () => {
  it('gives the trace back unchanged', () => {
    const graph = step();
    const time = replay(graph);
    graph.observed.forEach((t, p) => close(time[p]!, t, `point ${p}`));
  });

  it("moves what waited for a shorter kernel: k2 after k1's new end plus the stream's gap, S after k2", () => {
    const graph = step();
    const time = replay(graph, { opDuration: new Map([[op(graph, 'k1'), 0.49]]) });
    close(time[opEnd(op(graph, 'k1'))]!, 0.5, 'k1 ends');
    close(time[opStart(op(graph, 'k2'))]!, 0.501, 'k2 starts');
    close(time[opEnd(op(graph, 'k2'))]!, 1.5, 'k2 ends');
    close(time[2 * call(graph, 'S') + 1]!, 1.501, 'S returns');
    close(time[opStart(op(graph, 'k3'))]!, 0.03, 'k3, which waited for none of it, starts');
  });

  it("brings an op forward with its launch call made shorter, and the next call's launch after it", () => {
    const graph = step();
    const time = replay(graph, { callDuration: new Map([[call(graph, 'L1') - graph.ops.length, 0.001]]) });
    close(time[opStart(op(graph, 'k1'))]!, 0.006, 'k1 starts');
    close(time[2 * call(graph, 'L1') + 1]!, 0.001, 'L1 returns');
    close(time[2 * call(graph, 'L2')]!, 0.006, 'L2 starts');
  });

  it("moves an op by a new weight of its launch edge, no further than its launch call's own time", () => {
    const graph = step();
    const k1 = opStart(op(graph, 'k1'));
    const issue = edgeInto(graph, k1, 'issue');
    close(replay(graph, { weight: new Map([[issue, 0.002]]) })[k1]!, 0.007, 'lighter');
    close(replay(graph, { weight: new Map([[issue, 0.5]]) })[k1]!, 0.01, 'heavier than the call: the call’s time');
  });

  it('starts an op without an edge at the next that holds it, and one without any where it was', () => {
    const graph = step();
    const k2 = opStart(op(graph, 'k2'));
    const stream = edgeInto(graph, k2, 'stream');
    const issue = edgeInto(graph, k2, 'issue');
    // L2 returned at 0.015; a launch reaches its op 5 µs after its call, as L1's and L3's did.
    close(replay(graph, { dropped: new Set([stream]) })[k2]!, 0.02, 'after its launch');
    close(replay(graph, { dropped: new Set([stream, issue]) })[k2]!, 1.001, 'no edge left');
  });

  it('holds a point at the latest of the edges an edit adds, after each one’s weight and lag', () => {
    const graph = step();
    const k2 = op(graph, 'k2');
    const k3 = op(graph, 'k3');
    // k2 made to wait for k3 (which ended at 0.8) as well, by three added edges: the latest allows 1.12.
    const time = replay(graph, {
      added: [
        { kind: 'wait', from: opEnd(k3), to: opStart(k2), weight: 0.3, lag: 0.02 },
        { kind: 'wait', from: opEnd(k3), to: opStart(k2), weight: 0.1, lag: 0.02 },
        { kind: 'wait', from: opStart(k3), to: opStart(k2), weight: 0, lag: 0 },
      ],
    });
    close(time[opStart(k2)]!, 1.12, 'k2 starts');
    close(time[opEnd(k2)]!, 2.119, 'k2 ends');
    close(time[2 * call(graph, 'S') + 1]!, 2.12, 'S returns');
  });
});
