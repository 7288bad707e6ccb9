import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Cause, causesOf } from '../../src/analysis/causes.js';
import type { FindingCode } from '../../src/analysis/document.js';
import { EDGE_KINDS, type ReplayGraph } from '../../src/analysis/graph.js';
import type { LinkRates } from '../../src/analysis/metrics.js';
import type { StepWindow } from '../../src/analysis/steps.js';
import { call, copy, gpu, graphOf, points } from '../helpers/replay-graph.js';

// The cause rules of analysis/causes.ts on graphs written out edge by edge: which edges each cause takes out, which
// durations and weights it changes, and the figures its sentence quotes. Edges that mutation testing (npm run
// mutation) found unpinned.

const NO_RATES: LinkRates = { h2d: null, d2h: null };

function causeOf(
  graph: ReplayGraph,
  code: FindingCode,
  pinned: LinkRates = NO_RATES,
  windows: readonly StepWindow[] = [],
): Cause | undefined {
  return causesOf({ graph, pinned, windows, device: null }).find((c) => c.code === code);
}

const close = (actual: number | undefined, expected: number, what = '') =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-12, `${what} ${actual} ≠ ${expected}`);

const MB = 1e6;

describe('pageable copies (causes.ts pageableCopies)', { timeout: 5_000 }, () => {
  // Op 0: a pageable H2D copy of 1 MB in 1 ms (1 GB/s), launched by call 1, which it blocked until done. Op 1: a pinned
  // copy of 4 µs, the trace's fastest. Op 2: a kernel shorter still, which is no copy's fixed cost.
  const at = points(3);
  const pageable = (more: { bytes?: number | null; direction?: 'h2d' | 'd2h' | 'd2d' | null; memory?: string } = {}) =>
    graphOf({
      ops: [
        copy(
          's1',
          more.direction === undefined ? 'h2d' : more.direction,
          0,
          1,
          more.bytes === undefined ? MB : more.bytes,
          {
            hostMemory: more.memory === 'pinned' ? 'pinned' : more.memory === 'none' ? null : 'pageable',
            correlation: 2,
          },
        ),
        copy('s2', 'd2h', 2, 2.004, 4096, { correlation: 1 }),
        gpu({ stream: 's2', start: 3, end: 3.002 }),
      ],
      calls: [call('launch', 1.9, 2.01, 1), call('launch', -0.01, 1.01, 2)],
      edges: [
        { kind: 'blocking', from: at.end(1), to: at.callEnd(0) },
        { kind: 'blocking', from: at.end(0), to: at.callEnd(1) },
        { kind: 'sync', from: at.end(0), to: at.callEnd(1) },
        { kind: 'issue', from: at.callStart(1), to: at.start(0) },
      ],
    });

  it("moves the copy at the pinned rate plus the fastest copy's fixed cost, its own call returning at once", () => {
    const cause = causeOf(pageable(), 'pageable-copy', { h2d: 10, d2h: 20 });
    assert.ok(cause);
    assert.deepEqual(cause.ops, [0]);
    assert.deepEqual(
      [...(cause.edit.opDuration ?? [])].map(([i]) => i),
      [0],
    );
    close(cause.edit.opDuration?.get(0), MB / (10 * 1e6) + 0.004, 'pinned time');
    assert.deepEqual([...(cause.edit.dropped ?? [])], [1], "only the blocking edge into the copy's own call");
    assert.deepEqual(cause.facts, { count: 1, streams: ['s1'], rateGbPerSecond: 10, observedGbPerSecond: 1 });
  });

  it('takes no fixed cost over 10 µs, however slow the fastest copy was', () => {
    const graph = graphOf({ ops: [copy('s1', 'h2d', 0, 1, MB, { hostMemory: 'pageable' })] });
    const cause = causeOf(graph, 'pageable-copy', { h2d: 10, d2h: null });
    close(cause?.edit.opDuration?.get(0), 0.1 + 0.01);
    assert.deepEqual([...(cause?.edit.dropped ?? [])], [], 'a copy without a call frees no call');
  });

  it('leaves reads back of 64 KiB or less to host-sync, and copies the trace gives no bytes for', () => {
    const rates = { h2d: 10, d2h: 10 };
    assert.equal(causeOf(pageable({ bytes: 64 * 1024 }), 'pageable-copy', rates), undefined);
    assert.deepEqual(causeOf(pageable({ bytes: 64 * 1024 + 1 }), 'pageable-copy', rates)?.ops, [0]);
    assert.equal(causeOf(pageable({ bytes: null }), 'pageable-copy', rates), undefined);
  });

  it('names only pageable host-to-device and device-to-host copies', () => {
    const rates = { h2d: 10, d2h: 10 };
    assert.equal(causeOf(pageable({ memory: 'pinned' }), 'pageable-copy', rates), undefined);
    assert.equal(causeOf(pageable({ memory: 'none' }), 'pageable-copy', rates), undefined);
    assert.equal(causeOf(pageable({ direction: 'd2d' }), 'pageable-copy', rates), undefined);
    assert.equal(causeOf(pageable({ direction: null }), 'pageable-copy', rates), undefined);
    assert.deepEqual(causeOf(pageable({ direction: 'd2h' }), 'pageable-copy', rates)?.ops, [0]);
  });

  it("takes the other direction's pinned rate where the copy's own is unknown, and none where neither is", () => {
    const h2d = causeOf(pageable(), 'pageable-copy', { h2d: null, d2h: 5 });
    assert.equal(h2d?.facts.rateGbPerSecond, 5);
    close(h2d?.edit.opDuration?.get(0), MB / (5 * 1e6) + 0.004);
    const d2h = causeOf(pageable({ direction: 'd2h' }), 'pageable-copy', { h2d: 4, d2h: null });
    assert.equal(d2h?.facts.rateGbPerSecond, 4);
    assert.equal(causeOf(pageable(), 'pageable-copy', NO_RATES), undefined);
    assert.equal(causeOf(pageable(), 'pageable-copy', { h2d: 0, d2h: 5 }), undefined, 'a zero rate is no rate');
    assert.equal(causeOf(pageable(), 'pageable-copy', { h2d: -1, d2h: 5 }), undefined);
  });

  it('names no copy that pinned memory would not make faster', () => {
    // 990,000 bytes at 1 GB/s take 0.99 ms, plus 10 µs: the 1 ms the copy took.
    const alone = (bytes: number) => graphOf({ ops: [copy('s1', 'h2d', 0, 1, bytes, { hostMemory: 'pageable' })] });
    assert.equal(causeOf(alone(990_000), 'pageable-copy', { h2d: 1, d2h: null }), undefined);
    close(causeOf(alone(980_000), 'pageable-copy', { h2d: 1, d2h: null })?.edit.opDuration?.get(0), 1.0 - 0.01);
  });

  it("judges a copy by its own duration wherever it starts, and frees the trace's first call", () => {
    // A copy from 10 to 11 ms, launched by call 0: 2 MB at 1 GB/s would take 2 ms, longer than it took.
    const at = points(1);
    const late = (bytes: number) =>
      graphOf({
        ops: [copy('s1', 'h2d', 10, 11, bytes, { hostMemory: 'pageable', correlation: 1 })],
        calls: [call('launch', 9.99, 11.01, 1)],
        edges: [{ kind: 'blocking', from: at.end(0), to: at.callEnd(0) }],
      });
    assert.equal(causeOf(late(2 * MB), 'pageable-copy', { h2d: 1, d2h: null }), undefined);
    const cause = causeOf(late(MB / 2), 'pageable-copy', { h2d: 1, d2h: null });
    close(cause?.edit.opDuration?.get(0), 0.5 + 0.01);
    assert.deepEqual([...(cause?.edit.dropped ?? [])], [0]);
  });

  it("counts every copy, quotes the last one's pinned rate and the rate all of them ran at together", () => {
    const graph = graphOf({
      ops: [
        copy('s1', 'h2d', 0, 1, MB, { hostMemory: 'pageable' }),
        copy('s2', 'd2h', 2, 4, 3 * MB, { hostMemory: 'pageable' }),
        copy('s1', 'h2d', 5, 5.5, 8 * 1024, { hostMemory: 'pageable' }),
        copy('s1', 'h2d', 6, 7, MB, { hostMemory: 'pageable' }),
      ],
    });
    const cause = causeOf(graph, 'pageable-copy', { h2d: 10, d2h: 20 });
    assert.ok(cause);
    assert.deepEqual(cause.ops, [0, 1, 3]);
    close(cause.edit.opDuration?.get(1), (3 * MB) / (20 * 1e6) + 0.01);
    assert.equal(cause.edit.opDuration?.has(2), false);
    assert.deepEqual(cause.facts.streams, ['s1', 's2']);
    assert.equal(cause.facts.count, 3);
    assert.equal(cause.facts.rateGbPerSecond, 10);
    close(cause.facts.observedGbPerSecond, (5 * MB) / 4 / 1e6);
  });
});

describe('the legacy default stream (causes.ts defaultStream)', { timeout: 5_000 }, () => {
  // The default stream runs 0–1 and 3–4. Stream b runs beside it (0.5–1.5), f overlaps it by 2 µs, more than a
  // whole µs of Kineto's clock; e overlaps it by 1 µs and h by 1.5 µs, within it; a, c and g never run beside it.
  const ops = [
    gpu({ stream: 'D', start: 0, end: 1, defaultStream: true }),
    gpu({ stream: 'a', start: 1.005, end: 2 }),
    gpu({ stream: 'b', start: 0.5, end: 1.5 }),
    gpu({ stream: 'D', start: 3, end: 4, defaultStream: true }),
    gpu({ stream: 'c', start: 1.5, end: 2.9 }),
    gpu({ stream: 'b', start: 2, end: 2.5 }),
    gpu({ stream: 'e', start: 0.999, end: 1.2 }),
    gpu({ stream: 'f', start: 0.998, end: 1.2 }),
    gpu({ stream: 'g', start: 2.5, end: 3.0015 }),
    gpu({ stream: 'D', start: 4.5, end: 5, defaultStream: true }),
    gpu({ stream: 'h', start: 1 - 0.0015, end: 1.2 }),
  ];
  const at = points(ops.length);
  const edges = [
    { kind: 'wait' as const, from: at.end(0), to: at.start(1) },
    { kind: 'wait' as const, from: at.end(4), to: at.start(3) },
    { kind: 'wait' as const, from: at.end(5), to: at.start(3) },
    { kind: 'wait' as const, from: at.end(0), to: at.start(6) },
    { kind: 'wait' as const, from: at.end(0), to: at.start(7) },
    { kind: 'wait' as const, from: at.end(8), to: at.start(9) },
    { kind: 'wait' as const, from: at.end(1), to: at.start(4) },
    { kind: 'wait' as const, from: at.end(3), to: at.start(9) },
    { kind: 'link' as const, from: at.end(0), to: at.start(4) },
    { kind: 'wait' as const, from: at.end(2), to: at.start(3) },
    { kind: 'wait' as const, from: at.end(0), to: at.start(10) },
  ];

  it('takes out the waits between the default stream and the streams that never ran beside it, and only those', () => {
    const cause = causeOf(graphOf({ ops, edges }), 'default-stream');
    assert.ok(cause);
    assert.deepEqual([...(cause.edit.dropped ?? [])], [0, 1, 3, 5, 10]);
    assert.deepEqual(cause.ops, [0, 1, 4, 3, 6, 8, 9, 10]);
    assert.deepEqual(cause.facts, { count: 5, streams: ['D', 'a', 'c', 'e', 'g', 'h'] });
    assert.equal(cause.edit.opDuration, undefined);
  });

  it('names nothing without work on the default stream, or where every stream it waited with ran beside it', () => {
    const off = ops.map((op) => ({ ...op, defaultStream: false }));
    assert.equal(causeOf(graphOf({ ops: off, edges }), 'default-stream'), undefined);
    assert.equal(causeOf(graphOf({ ops, edges: [edges[2]!, edges[4]!, edges[9]!] }), 'default-stream'), undefined);
  });
});

describe('copies waiting for each other (causes.ts serialisedCopies)', { timeout: 5_000 }, () => {
  const at = points(2);
  // Two copies of one direction on streams A and B, the second waiting for the first: 1 ms each.
  const pair = (bytes: number, concurrent: boolean, direction: 'h2d' | 'd2h' = 'h2d') =>
    graphOf({
      ops: [copy('A', direction, 0, 1, bytes), copy('B', direction, 1.005, 2, bytes)],
      edges: [
        { kind: 'stream', from: at.end(0), to: at.start(1) },
        { kind: 'wait', from: at.end(0), to: at.start(1) },
      ],
      concurrentCopies: direction === 'h2d' ? { h2d: concurrent } : { d2h: concurrent },
    });

  it('takes out the wait where the device runs one copy at a time, whatever the rates', () => {
    const cause = causeOf(pair(MB, false), 'serialised-copies');
    assert.ok(cause);
    assert.deepEqual([...(cause.edit.dropped ?? [])], [1]);
    assert.deepEqual(cause.ops, [0, 1]);
    assert.deepEqual(cause.facts, { count: 1, streams: ['A', 'B'] });
  });

  it('where copies overlap, takes it out only if the first held the link for less than 80% of its time', () => {
    assert.deepEqual(
      [...(causeOf(pair(MB, true), 'serialised-copies', { h2d: 10, d2h: null })?.edit.dropped ?? [])],
      [1],
    );
    assert.equal(causeOf(pair(MB, true), 'serialised-copies', { h2d: 1, d2h: 10 }), undefined, 'the link ran full');
    assert.equal(causeOf(pair(800_000, true), 'serialised-copies', { h2d: 1, d2h: null }), undefined, 'exactly 80%');
    assert.ok(causeOf(pair(790_000, true), 'serialised-copies', { h2d: 1, d2h: null }));
    assert.equal(causeOf(pair(MB, true), 'serialised-copies', { h2d: null, d2h: 10 }), undefined, 'no rate: no room');
  });

  it("weighs the link's hold against the first copy's own time, wherever it starts", () => {
    // The first copy runs 1–3 ms: at 1 GB/s, 1.5 MB hold the link 75% of it, 1.7 MB 85%.
    const later = (bytes: number) =>
      graphOf({
        ops: [copy('A', 'h2d', 1, 3, bytes), copy('B', 'h2d', 3.005, 5, bytes)],
        edges: [{ kind: 'wait', from: at.end(0), to: at.start(1) }],
        concurrentCopies: { h2d: true },
      });
    assert.ok(causeOf(later(1.5 * MB), 'serialised-copies', { h2d: 1, d2h: null }));
    assert.equal(causeOf(later(1.7 * MB), 'serialised-copies', { h2d: 1, d2h: null }), undefined);
  });

  it("reads the copies' own direction: its rate and whether such copies ran together", () => {
    const d2h = pair(MB, true, 'd2h');
    assert.ok(causeOf(d2h, 'serialised-copies', { h2d: 1, d2h: 10 }));
    assert.equal(causeOf(d2h, 'serialised-copies', { h2d: 10, d2h: 1 }), undefined);
    const h2dOnly = graphOf({ ...specOf(pair(MB, false)), concurrentCopies: { h2d: false, d2h: true } });
    assert.ok(causeOf(h2dOnly, 'serialised-copies', { h2d: 1, d2h: 1 }));
  });

  it('names no wait between a kernel and a copy, copies of two directions, of one stream, or device-to-device', () => {
    const waitOf = (first: ReturnType<typeof copy>, second: ReturnType<typeof copy>) =>
      causeOf(
        graphOf({ ops: [first, second], edges: [{ kind: 'wait', from: at.end(0), to: at.start(1) }] }),
        'serialised-copies',
      );
    assert.ok(waitOf(copy('A', 'h2d', 0, 1, MB), copy('B', 'h2d', 1, 2, MB)), 'the pair itself');
    assert.equal(waitOf(gpu({ stream: 'A', start: 0, end: 1 }), copy('B', 'h2d', 1, 2, MB)), undefined);
    assert.equal(waitOf(copy('A', 'h2d', 0, 1, MB), gpu({ stream: 'B', start: 1, end: 2 })), undefined);
    assert.equal(waitOf(copy('A', 'h2d', 0, 1, MB), copy('B', 'd2h', 1, 2, MB)), undefined);
    assert.equal(waitOf(copy('A', 'h2d', 0, 1, MB), copy('A', 'h2d', 1, 2, MB)), undefined);
    assert.equal(waitOf(copy('A', 'd2d', 0, 1, MB), copy('B', 'd2d', 1, 2, MB)), undefined);
  });
});

/** A graph's spec back from the graph (its ops and edges), to build a variant of it. */
function specOf(graph: ReplayGraph) {
  const { edges } = graph;
  return {
    ops: graph.ops,
    calls: graph.calls,
    edges: Array.from({ length: edges.count }, (_, k) => ({
      kind: EDGE_KINDS[edges.kind[k]!]!,
      from: edges.from[k]!,
      to: edges.to[k]!,
      weight: edges.weight[k]!,
      lag: edges.lag[k]!,
    })),
  };
}

describe('copies on the streams that compute (causes.ts copiesOnComputeStreams)', { timeout: 5_000 }, () => {
  it('frees an H2D copy from the kernel before it, a D2H copy from the kernel after it, keeping kernel order', () => {
    // Stream C: kernel, H2D, kernel, D2H, kernel; stream X's kernel in between, which is not C's.
    const ops = [
      gpu({ stream: 'C', start: 0, end: 1 }),
      copy('C', 'h2d', 1, 2, MB),
      gpu({ stream: 'X', start: 1.5, end: 2.5 }),
      gpu({ stream: 'C', start: 2, end: 3 }),
      copy('C', 'd2h', 3, 4, MB),
      gpu({ stream: 'C', start: 4, end: 5 }),
    ];
    const at = points(ops.length);
    const graph = graphOf({
      ops,
      edges: [
        { kind: 'stream', from: at.end(0), to: at.start(1), lag: 0.003 },
        { kind: 'stream', from: at.end(1), to: at.start(3) },
        { kind: 'stream', from: at.end(3), to: at.start(4) },
        { kind: 'stream', from: at.end(4), to: at.start(5), lag: 0.004 },
        { kind: 'wait', from: at.end(2), to: at.start(5) },
      ],
    });
    const cause = causeOf(graph, 'copy-on-compute-stream');
    assert.ok(cause);
    assert.deepEqual([...(cause.edit.dropped ?? [])], [0, 3]);
    assert.deepEqual(cause.edit.added, [
      { kind: 'stream', from: at.end(0), to: at.start(3), weight: 0, lag: 0.003 },
      { kind: 'stream', from: at.end(3), to: at.start(5), weight: 0, lag: 0.004 },
    ]);
    assert.deepEqual(cause.ops, [1, 4]);
    assert.deepEqual(cause.facts, { count: 2, streams: ['C'] });
  });

  it('leaves copies that hold nothing, copies on streams without compute, and edges the graph does not have', () => {
    const ops = [
      copy('Y', 'h2d', 0, 1, MB), // first on its stream: nothing before it to wait for
      gpu({ stream: 'Y', start: 1, end: 2 }),
      copy('Y', 'd2h', 2, 3, MB), // last on its stream: nothing after it to hold
      gpu({ stream: 'N', start: 0, end: 1, communication: true }),
      copy('N', 'h2d', 1, 2, MB), // NCCL's stream does not compute
      gpu({ stream: 'W', start: 0, end: 1 }),
      copy('W', 'h2d', 1, 2, MB), // its stream edge is from the kernel's start, not its end
      gpu({ stream: 'V', start: 0, end: 1 }),
      copy('V', 'd2d', 1, 2, MB),
      gpu({ stream: 'V', start: 2, end: 3 }),
      gpu({ stream: 'U', start: 0, end: 1 }),
      copy('U', 'h2d', 1, 2, MB), // no stream edge into it at all
    ];
    const at = points(ops.length);
    const edges = [
      { kind: 'stream' as const, from: at.end(0), to: at.start(1) },
      { kind: 'stream' as const, from: at.end(1), to: at.start(2) },
      { kind: 'stream' as const, from: at.end(3), to: at.start(4) },
      { kind: 'stream' as const, from: at.start(5), to: at.start(6) },
      { kind: 'stream' as const, from: at.end(7), to: at.start(8) },
      { kind: 'stream' as const, from: at.end(8), to: at.start(9) },
      { kind: 'wait' as const, from: at.end(10), to: at.start(11) },
    ];
    assert.equal(causeOf(graphOf({ ops, edges }), 'copy-on-compute-stream'), undefined);
  });

  it('moves a D2H copy that starts its stream off the kernel after it, with no edge to add around it', () => {
    const ops = [
      gpu({ stream: 'R', start: 0, end: 1 }),
      copy('Q', 'd2h', 0, 1, MB),
      gpu({ stream: 'Q', start: 1, end: 2 }),
    ];
    const at = points(3);
    const graph = graphOf({ ops, edges: [{ kind: 'stream', from: at.end(1), to: at.start(2) }] });
    const cause = causeOf(graph, 'copy-on-compute-stream');
    assert.deepEqual([...(cause?.edit.dropped ?? [])], [0]);
    assert.deepEqual(cause?.edit.added, []);
    assert.deepEqual(cause?.ops, [1]);
  });

  it('drops the edge into an H2D copy with nothing after it, adding no edge around it', () => {
    const ops = [gpu({ stream: 'Z', start: 0, end: 1 }), copy('Z', 'h2d', 1, 2, MB)];
    const at = points(2);
    const graph = graphOf({ ops, edges: [{ kind: 'stream', from: at.end(0), to: at.start(1) }] });
    const cause = causeOf(graph, 'copy-on-compute-stream');
    assert.deepEqual([...(cause?.edit.dropped ?? [])], [0]);
    assert.deepEqual(cause?.edit.added, []);
    assert.deepEqual(cause?.ops, [1]);
  });
});

describe('synchronizes in the middle of a step (causes.ts hostSyncs)', { timeout: 5_000 }, () => {
  const step = (name: string, start: number, end: number): StepWindow => ({ name, start, end, host: { start, end } });
  // Listed out of order: the rule sorts the steps' host spans.
  const steps = [step('step 2', 10, 20), step('step 1', 0, 10)];

  it("drops a synchronize followed by a launch in its own step, and leaves one at its step's end", () => {
    const ops = [
      gpu({ stream: 's', start: 0.1, end: 1, correlation: 1 }),
      gpu({ stream: 's', start: 4.1, end: 5, correlation: 2 }),
      gpu({ stream: 't', start: 10.6, end: 11, correlation: 3 }),
    ];
    const at = points(ops.length);
    const calls = [
      call('launch', 0, 0.05, 1),
      call('sync', 1, 3), // mid-step: step 1 launches again at 4
      call('launch', 4, 4.05, 2),
      call('sync', 6, 7), // the end of step 1, though step 2 launches later
      call('sync', 10, 10.02), // at step 2's start, mid-step: step 2 launches at 10.5
      call('launch', 10.5, 10.55, 3),
      call('sync', 15, 16), // after step 2's last launch; the launch at 20 is no step's
      call('launch', 20, 20.05, null),
      call('sync', 8, 9), // a second synchronize at the end of step 1: no launch
    ];
    const graph = graphOf({
      ops,
      calls,
      edges: [
        { kind: 'sync', from: at.end(0), to: at.callEnd(1) },
        { kind: 'sync', from: at.end(1), to: at.callEnd(3) },
        { kind: 'sync', from: at.end(1), to: at.callEnd(4) },
        { kind: 'blocking', from: at.end(1), to: at.callEnd(4) },
        { kind: 'sync', from: at.end(2), to: at.callEnd(6) },
        { kind: 'sync', from: at.end(1), to: at.callEnd(8) },
      ],
    });
    const cause = causeOf(graph, 'host-sync', NO_RATES, steps);
    assert.ok(cause);
    assert.deepEqual([...(cause.edit.dropped ?? [])], [0, 2], 'the blocking edge into a synchronize is no wait of it');
    assert.deepEqual(
      [...(cause.edit.callDuration ?? [])],
      [
        [1, 0],
        [4, 0],
      ],
    );
    assert.deepEqual(cause.ops, [0, 1]);
    assert.deepEqual(cause.facts, { count: 2, streams: ['s'] });
  });

  it('is mid-step only where a launch starts after the synchronize has returned', () => {
    const ops = [
      gpu({ stream: 's', start: 0.1, end: 1, correlation: 1 }),
      gpu({ stream: 's', start: 4.1, end: 5, correlation: 2 }),
    ];
    const at = points(2);
    const graphWith = (launchAt: number) =>
      graphOf({
        ops,
        calls: [call('launch', 0, 0.05, 1), call('sync', 1, 4), call('launch', launchAt, launchAt + 0.05, 2)],
        edges: [{ kind: 'sync', from: at.end(0), to: at.callEnd(1) }],
      });
    assert.equal(causeOf(graphWith(4), 'host-sync', NO_RATES, steps), undefined);
    assert.ok(causeOf(graphWith(4.001), 'host-sync', NO_RATES, steps));
    const untimed = [{ ...steps[1]!, host: null }];
    assert.ok(causeOf(graphWith(4.001), 'host-sync', NO_RATES, untimed), 'without host steps, the whole trace is one');
    assert.equal(causeOf(graphWith(4), 'host-sync', NO_RATES, untimed), undefined);
    const outside = [step('late', 5, 10)];
    assert.equal(
      causeOf(graphWith(4.001), 'host-sync', NO_RATES, outside),
      undefined,
      'launches of no step count for none',
    );
  });

  it('takes a blocking read back of 64 KiB or less as a synchronize, and no larger copy', () => {
    // The step reads back first, launches a kernel, then makes a blocking copy of 1 MB: no read back.
    const readBack = (bytes: number | null, direction: 'd2h' | 'h2d' = 'd2h') => {
      const ops = [
        copy('s', direction, 1, 1.2, bytes, { correlation: 2 }),
        gpu({ stream: 's', start: 4.1, end: 5, correlation: 3 }),
        copy('s', 'd2h', 6, 7, MB, { correlation: 4 }),
      ];
      const at = points(3);
      return graphOf({
        ops,
        calls: [call('launch', 0.9, 1.3, 2), call('launch', 4, 4.05, 3), call('launch', 5.9, 7.1, 4)],
        edges: [
          { kind: 'blocking', from: at.end(0), to: at.callEnd(0) },
          { kind: 'blocking', from: at.end(2), to: at.callEnd(2) },
        ],
      });
    };
    const cause = causeOf(readBack(64 * 1024), 'host-sync', NO_RATES, steps);
    assert.ok(cause);
    assert.deepEqual([...(cause.edit.dropped ?? [])], [0]);
    assert.deepEqual([...(cause.edit.callDuration ?? [])], [[0, 0]]);
    assert.deepEqual(cause.ops, [0]);
    assert.equal(causeOf(readBack(64 * 1024 + 1), 'host-sync', NO_RATES, steps), undefined);
    assert.equal(causeOf(readBack(null), 'host-sync', NO_RATES, steps), undefined, 'a copy of unknown size');
    assert.equal(causeOf(readBack(4, 'h2d'), 'host-sync', NO_RATES, steps), undefined);
  });

  it("keeps the host's work between two blocking reads back, taking both out", () => {
    const ops = [
      gpu({ stream: 's', start: 0.1, end: 1, correlation: 1 }),
      copy('s', 'd2h', 1, 1.01, 4, { correlation: 2 }),
      copy('s', 'd2h', 1.2, 1.21, 4, { correlation: 3 }),
      gpu({ stream: 's', start: 4.1, end: 5, correlation: 4 }),
    ];
    const at = points(4);
    const graph = graphOf({
      ops,
      calls: [
        call('launch', 0, 0.05, 1),
        call('launch', 0.9, 1.05, 2),
        call('launch', 1.1, 1.25, 3),
        call('launch', 4, 4.05, 4),
      ],
      edges: [
        { kind: 'blocking', from: at.end(1), to: at.callEnd(1) },
        { kind: 'blocking', from: at.end(2), to: at.callEnd(2) },
        { kind: 'host', from: at.callStart(0), to: at.callStart(1), weight: 0.9 },
        { kind: 'host', from: at.callStart(1), to: at.callStart(2), weight: 0.2 },
      ],
    });
    const cause = causeOf(graph, 'host-sync', NO_RATES, steps);
    assert.deepEqual([...(cause?.edit.dropped ?? [])], [0, 1]);
    assert.deepEqual(
      [...(cause?.edit.callDuration ?? [])],
      [
        [1, 0],
        [2, 0],
      ],
    );
    assert.deepEqual([...(cause?.edit.weight ?? [])], []);
  });

  it("takes `.item()`'s read back with its synchronize: neither call, nor the host's work between them", () => {
    const ops = [
      gpu({ stream: 's', start: 0.1, end: 1, correlation: 1 }),
      copy('s', 'd2h', 1, 1.01, 4, { correlation: 2 }),
      gpu({ stream: 's', start: 4.1, end: 5, correlation: 3 }),
      copy('s', 'd2h', 6.01, 6.02, 4, { correlation: 4 }),
    ];
    const at = points(4);
    // A second `.item()` (calls 4 and 5) at the step's end, which stays.
    const graph = graphOf({
      ops,
      calls: [
        call('launch', 0, 0.05, 1),
        call('launch', 0.9, 0.95, 2),
        call('sync', 1, 1.2),
        call('launch', 4, 4.05, 3),
        call('launch', 6, 6.05, 4),
        call('sync', 6.1, 6.3),
      ],
      edges: [
        { kind: 'host', from: at.callStart(0), to: at.callStart(2), weight: 0.3 },
        { kind: 'host', from: at.callStart(1), to: at.callStart(2), weight: 0.1 },
        { kind: 'sync', from: at.end(1), to: at.callEnd(2) },
        { kind: 'host', from: at.callStart(2), to: at.callStart(3), weight: 2 },
        { kind: 'host', from: at.callStart(4), to: at.callStart(5), weight: 0.1 },
        { kind: 'sync', from: at.end(3), to: at.callEnd(5) },
      ],
    });
    const cause = causeOf(graph, 'host-sync', NO_RATES, steps);
    assert.ok(cause);
    assert.deepEqual([...(cause.edit.weight ?? [])], [[1, 0]]);
    assert.deepEqual(
      [...(cause.edit.callDuration ?? [])].sort((a, b) => a[0] - b[0]),
      [
        [1, 0],
        [2, 0],
      ],
    );
    assert.deepEqual([...(cause.edit.dropped ?? [])], [2]);
    assert.deepEqual(cause.facts, { count: 1, streams: ['s'] });
  });
});

describe('the GPU waiting for launches (causes.ts hostBound)', { timeout: 5_000 }, () => {
  it('issues every launch that waited for nothing at once, with evidence from an op its launch released late', () => {
    const ops = [
      gpu({ stream: 's', start: 0, end: 1, correlation: 1 }),
      gpu({ stream: 's', start: 2, end: 3, correlation: 2 }),
      gpu({ stream: 't', start: 0, end: 0.5, correlation: 3 }),
      copy('s', 'd2h', 3.1, 3.6, MB, { correlation: 4 }),
      gpu({ stream: 'u', start: 5, end: 6 }),
    ];
    const at = points(ops.length);
    const graph = graphOf({
      ops,
      calls: [
        call('launch', -0.1, -0.09, 1),
        call('launch', 1.97, 1.98, 2),
        call('launch', -0.2, -0.19, 3),
        call('launch', 2.9, 3.7, 4),
        call('sync', 3.7, 4),
      ],
      edges: [
        { kind: 'issue', from: at.callStart(0), to: at.start(0), weight: 0.01, lag: 0.09 },
        { kind: 'issue', from: at.callStart(1), to: at.start(1), weight: 0.01, lag: 0.02 },
        { kind: 'stream', from: at.end(0), to: at.start(1) },
        { kind: 'issue', from: at.callStart(2), to: at.start(2), weight: 0.01, lag: 0.18 },
        { kind: 'issue', from: at.callStart(3), to: at.start(3), weight: 0.2 },
        { kind: 'stream', from: at.end(1), to: at.start(3) },
        { kind: 'blocking', from: at.end(3), to: at.callEnd(3) },
        { kind: 'host', from: at.callStart(0), to: at.callStart(1), weight: 2 },
        { kind: 'host', from: at.callStart(1), to: at.callStart(3), weight: 0.5 },
        { kind: 'sync', from: at.end(3), to: at.callEnd(4) },
        { kind: 'host', from: at.callStart(3), to: at.callStart(4), weight: 0.7 },
      ],
    });
    const cause = causeOf(graph, 'host-bound');
    assert.ok(cause);
    assert.deepEqual(cause.ops, [1]);
    assert.deepEqual(
      [...(cause.edit.callDuration ?? [])],
      [
        [0, 0],
        [1, 0],
        [2, 0],
      ],
    );
    assert.deepEqual([...(cause.edit.weight ?? [])], [[7, 0]], "a blocking call's and a synchronize's CPU work stay");
    assert.deepEqual(cause.facts, { count: 3, streams: ['s'] });
  });

  /** An op launched by a call at 0 that took `weight` to submit it, after its stream's op ending at `previousEnd`. */
  function late(start: number, lag: number, previousEnd: number, weight = 0) {
    const ops = [
      gpu({ stream: 's', start: -1, end: previousEnd }),
      gpu({ stream: 's', start, end: start + 1, correlation: 1 }),
    ];
    const at = points(2);
    return causeOf(
      graphOf({
        ops,
        calls: [call('launch', 0, 0.01, 1)],
        edges: [
          { kind: 'stream', from: at.end(0), to: at.start(1) },
          { kind: 'issue', from: at.callStart(0), to: at.start(1), weight, lag },
        ],
      }),
      'host-bound',
    );
  }

  it("takes an op as released by its launch within 50 µs of it, and where the graph's lag puts it", () => {
    assert.deepEqual(late(0.05, 0.05, -0.5)?.ops, [1]);
    assert.equal(late(0.0501, 0.0501, -0.5), undefined);
    assert.deepEqual(late(0.0515, 0.0415, -0.5, 0.01)?.ops, [1], "released at the call's start plus its weight");
    assert.deepEqual(late(0.0015, 0, -0.5)?.ops, [1], 'within 1.5 µs of the lag');
    assert.equal(late(0.0016, 0, -0.5), undefined);
    assert.equal(late(0.01, 0, -0.5), undefined, 'started later than the lag puts it: something else held it');
    assert.equal(late(0.01, 0.02, -0.5), undefined, 'the lag puts it later than it started');
  });

  it('takes it as waiting on the host only where its stream sat empty for more than 1.5 µs', () => {
    assert.equal(late(0.0415, 0.0415, 0.04), undefined);
    assert.deepEqual(late(0.0416, 0.0416, 0.04)?.ops, [1]);
  });

  it('names nothing for an op without a launch call or its issue edge, or the first on its stream', () => {
    const at = points(1);
    const first = graphOf({
      ops: [gpu({ stream: 's', start: 0.02, end: 1, correlation: 1 })],
      calls: [call('launch', 0, 0.01, 1)],
      edges: [{ kind: 'issue', from: at.callStart(0), to: at.start(0), lag: 0.02 }],
    });
    assert.equal(causeOf(first, 'host-bound'), undefined);
    const contradicted = graphOf({
      ops: [gpu({ stream: 's', start: -1, end: -0.5 }), gpu({ stream: 's', start: 0.02, end: 1, correlation: 1 })],
      calls: [call('launch', 0, 0.01, 1)],
      edges: [{ kind: 'stream', from: 1, to: 2 }],
    });
    assert.equal(
      causeOf(contradicted, 'host-bound'),
      undefined,
      'its issue edge gone: nothing says the launch held it',
    );
    const unlaunched = graphOf({
      ops: [gpu({ stream: 's', start: -1, end: 0 }), gpu({ stream: 's', start: 1, end: 2 })],
      edges: [{ kind: 'stream', from: 1, to: 2 }],
    });
    assert.equal(causeOf(unlaunched, 'host-bound'), undefined);
  });
});

describe('every cause of a graph (causes.ts causesOf)', { timeout: 5_000 }, () => {
  it('lists the causes with evidence in the order of the finding codes, and none of an empty graph', () => {
    const ops = [
      copy('s', 'h2d', 0, 1, MB, { hostMemory: 'pageable' }),
      gpu({ stream: 'D', start: 1.005, end: 2, defaultStream: true }),
    ];
    const at = points(2);
    const graph = graphOf({ ops, edges: [{ kind: 'wait', from: at.end(0), to: at.start(1) }] });
    assert.deepEqual(
      causesOf({ graph, pinned: { h2d: 10, d2h: null }, windows: [], device: null }).map((c) => c.code),
      ['pageable-copy', 'default-stream'],
    );
    assert.deepEqual(causesOf({ graph: graphOf({ ops: [] }), pinned: NO_RATES, windows: [], device: null }), []);
  });
});
