import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Cause } from '../../src/analysis/cause.js';
import { exposedCommunication, overlapWith } from '../../src/analysis/communication.js';
import { slowdownBeside } from '../../src/analysis/contention.js';
import { edgeAt, opEnd, opStart, type ReplayGraph } from '../../src/analysis/graph.js';
import { buildGraph } from '../../src/analysis/graph-edges.js';
import { replay } from '../../src/analysis/replay.js';
import type { StepWindow } from '../../src/analysis/steps.js';
import type { DeviceShape, GpuEvent, HostCall, LaunchShape } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// exposed-communication's counterfactual (src/analysis/communication.ts) on small traces built here: which compute
// is the backward pass, which kernel each collective waits for once it starts as its bucket is ready, which edges
// that takes out, and how much longer the compute beside the moved collectives runs.

const DEADLINE = { timeout: 5_000 };

function op(stream: string, start: number, end: number, extra: Partial<GpuEvent> = {}): GpuEvent {
  const name = extra.communication ? 'ncclKernel_AllReduce' : 'gemm';
  // Issued at 0: nothing but the graph's edges holds an op back in a replay.
  return gpuEvent({ stream, start, end, name, issued: 0, ...extra });
}
const nccl = (stream: string, start: number, end: number, extra: Partial<GpuEvent> = {}) =>
  op(stream, start, end, { communication: true, ...extra });
const launch = (correlation: number, start: number, thread: number): HostCall => ({
  kind: 'launch',
  name: 'cudaLaunchKernel',
  start,
  end: start + 0.01,
  correlation,
  thread,
});

const graphOf = (ops: GpuEvent[], calls: HostCall[] = []) =>
  buildGraph(ops, calls, { linkRates: { h2d: null, d2h: null }, perOpMs: 0 });
const step = (start: number, end: number, name = 'ProfilerStep#1'): StepWindow => ({ name, start, end, host: null });

function causeOf(graph: ReplayGraph, windows: StepWindow[], device: DeviceShape | null = null): Cause | null {
  return exposedCommunication({ graph, windows, device, pinned: { h2d: null, d2h: null } });
}

/** The added waits as [kernel it waits for, collective]. */
const waits = (cause: Cause) => (cause.edit.added ?? []).map((e) => [e.from >> 1, e.to >> 1]);
/** The dropped edges as `kind from→to`, by op index (a host call as `call` and its index). */
const dropped = (graph: ReplayGraph, cause: Cause) =>
  [...(cause.edit.dropped ?? [])]
    .map((k) => edgeAt(graph.edges, k))
    .map((e) => {
      const task = (t: number) => (t < graph.ops.length ? `${t}` : `call${t - graph.ops.length}`);
      return `${e.kind} ${task(e.from >> 1)}→${task(e.to >> 1)}`;
    })
    .sort();

/**
 * Four 1 ms kernels on stream 7 (ops 0 to 3), then two 1 ms all-reduces on stream 9 (ops 4 and 5) that waited for the
 * last kernel: no thread is known, so the backward pass is the compute before the first collective.
 */
const serial = () => [op('7', 0, 1), op('7', 1, 2), op('7', 2, 3), op('7', 3, 4), nccl('9', 4, 5), nccl('9', 5, 6)];

describe('exposed-communication: where each collective starts', () => {
  it('each collective waits for the kernel that finishes its share of the backward pass', DEADLINE, () => {
    const graph = graphOf(serial());
    const cause = causeOf(graph, [step(0, 6)])!;
    assert.equal(cause.code, 'exposed-communication');
    assert.deepEqual(cause.ops, [4, 5]);
    assert.deepEqual(cause.facts, { count: 2, streams: ['9'] });
    // The first all-reduce is half the communication: ready once 2 of the 4 ms of compute are done (kernel 1); the
    // second once all of it is (kernel 3).
    assert.deepEqual(waits(cause), [
      [1, 4],
      [3, 5],
    ]);
    for (const e of cause.edit.added ?? []) assert.deepEqual([e.kind, e.weight, e.lag], ['wait', 0, 0]);
    // The wait on the last kernel goes; the all-reduces' own stream order stays.
    assert.deepEqual(dropped(graph, cause), ['wait 3→4']);
    const time = replay(graph, cause.edit);
    assert.deepEqual([time[opStart(4)], time[opEnd(4)], time[opStart(5)], time[opEnd(5)]], [2, 3, 4, 5]);
  });

  it('a kernel that ends exactly as the first collective starts is part of the backward pass', DEADLINE, () => {
    // Without kernel 3 the backward pass would be 3 ms and the first all-reduce would wait for kernel 0.
    const cause = causeOf(graphOf(serial()), [step(0, 6)])!;
    assert.deepEqual(waits(cause)[0], [1, 4]);
  });

  it('uneven collectives take uneven shares of the backward pass', DEADLINE, () => {
    // 1 ms then 3 ms of all-reduce over 4 ms of compute: the first is ready after 1 ms (kernel 0).
    const ops = [op('7', 0, 1), op('7', 1, 2), op('7', 2, 3), op('7', 3, 4), nccl('9', 4, 5), nccl('9', 5, 8)];
    assert.deepEqual(waits(causeOf(graphOf(ops), [step(0, 8)])!), [
      [0, 4],
      [3, 5],
    ]);
  });

  it('copies and memsets are not the backward pass', DEADLINE, () => {
    // A 2 ms copy before the collectives: counted as compute it would move the first all-reduce's wait.
    const ops = [
      op('5', 0, 2, { kind: 'memcpy', direction: 'h2d', bytes: 1024, hostMemory: 'pinned' }),
      op('7', 0.5, 1.5),
      op('7', 1.5, 2.5),
      op('7', 2.5, 3.5),
      op('7', 3.5, 4),
      nccl('9', 4, 5),
      nccl('9', 5, 6),
    ];
    assert.deepEqual(waits(causeOf(graphOf(ops), [step(0, 6)])!), [
      [2, 5],
      [4, 6],
    ]);
  });

  it('a collective on the compute stream leaves its stream; a wait on another collective stays', DEADLINE, () => {
    // The first all-reduce follows kernel 3 on stream 7; the second, on stream 9, waited for the first.
    const ops = [op('7', 0, 1), op('7', 1, 2), op('7', 2, 3), op('7', 3, 4), nccl('7', 4, 5), nccl('9', 5, 6)];
    const graph = graphOf(ops);
    const cause = causeOf(graph, [step(0, 6)])!;
    assert.deepEqual(dropped(graph, cause), ['stream 3→4']);
    const kept = [...Array(graph.edges.count).keys()]
      .map((k) => edgeAt(graph.edges, k))
      .filter((e) => e.to === opStart(5))
      .map((e) => `${e.kind} ${e.from >> 1}`);
    assert.deepEqual(kept, ['wait 4']);
  });

  it(
    'under autograd, the backward pass is the compute another thread launched before the last collective',
    DEADLINE,
    () => {
      // Thread 1 launched the forward kernel (op 0); thread 2, autograd's, the backward kernels (ops 1 to 3), the two
      // all-reduces (ops 5, 6) and the optimizer's kernel (op 7), which starts with the last all-reduce and is no part
      // of the backward pass. Op 4, whose launch the trace lacks, is no thread's.
      const ops = [
        op('7', 0, 1, { correlation: 1 }),
        op('7', 1, 2, { correlation: 2 }),
        op('7', 2, 3, { correlation: 3 }),
        op('7', 3, 4, { correlation: 4 }),
        op('8', 3.5, 3.9),
        nccl('9', 4, 5, { correlation: 5 }),
        nccl('9', 5, 6, { correlation: 6 }),
        op('7', 5, 7, { correlation: 7 }),
      ];
      const calls = [
        launch(1, -0.5, 1),
        launch(2, 0.5, 2),
        launch(3, 0.6, 2),
        launch(4, 0.7, 2),
        launch(5, 0.8, 2),
        launch(6, 0.9, 2),
        launch(7, 1.0, 2),
      ];
      const graph = graphOf(ops, calls);
      const cause = causeOf(graph, [step(-0.5, 7)])!;
      assert.deepEqual(cause.ops, [5, 6]);
      // 3 ms of backward, two equal all-reduces: the first ready after 1.5 ms (kernel 2), the second at its end.
      assert.deepEqual(waits(cause), [
        [2, 5],
        [3, 6],
      ]);
      // Their launches no longer hold them, nor the kernel the first waited for.
      assert.deepEqual(dropped(graph, cause), ['issue call4→5', 'issue call5→6', 'wait 3→5']);
    },
  );

  it(
    "without the step's first launch, no thread is the main one: the compute before the collectives is taken",
    DEADLINE,
    () => {
      // As above, but op 0's launch is missing: thread 2's kernels are not told apart, and the backward pass is all
      // 4.4 ms of compute that ended before the first all-reduce (ops 0 to 4), whose halves end with ops 2 and 4.
      const ops = [
        op('7', 0, 1),
        op('7', 1, 2, { correlation: 2 }),
        op('7', 2, 3, { correlation: 3 }),
        op('7', 3, 4, { correlation: 4 }),
        op('8', 3.5, 3.9),
        nccl('9', 4, 5, { correlation: 5 }),
        nccl('9', 5, 6, { correlation: 6 }),
        op('7', 5, 7, { correlation: 7 }),
      ];
      const calls = [launch(2, 0.5, 2), launch(3, 0.6, 2), launch(4, 0.7, 2), launch(5, 0.8, 2), launch(6, 0.9, 2)];
      const cause = causeOf(graphOf(ops, [...calls, launch(7, 1.0, 2)]), [step(0, 7)])!;
      assert.deepEqual(waits(cause), [
        [2, 5],
        [4, 6],
      ]);
    },
  );

  it('a trace whose steps have no collectives, or no compute before them, names no cause', DEADLINE, () => {
    assert.equal(causeOf(graphOf([op('7', 0, 1), op('7', 1, 2)]), [step(0, 2)]), null);
    assert.equal(causeOf(graphOf([nccl('9', 0, 1), nccl('9', 1, 2), op('7', 2, 3)]), [step(0, 3)]), null);
  });

  it('steps without collectives or without a backward pass are passed over, not the steps after', DEADLINE, () => {
    const ops = [
      op('7', 0, 1),
      op('7', 1, 2),
      nccl('9', 10, 11),
      op('7', 11, 12),
      op('7', 20, 21),
      op('7', 21, 22),
      nccl('9', 22, 23),
    ];
    const cause = causeOf(graphOf(ops), [step(0, 3, 'a'), step(10, 12, 'b'), step(20, 23, 'c')])!;
    assert.deepEqual(cause.ops, [6]);
    assert.deepEqual(waits(cause), [[5, 6]]);
  });

  it('a backward pass or collectives that take no time give nothing to share out', DEADLINE, () => {
    const instant = [op('7', 0, 0), op('7', 0, 0), nccl('9', 0, 1)];
    assert.equal(causeOf(graphOf(instant), [step(0, 1)]), null);
    const emptyComm = [op('7', 0, 1), op('7', 1, 2), nccl('9', 2, 2)];
    assert.equal(causeOf(graphOf(emptyComm), [step(0, 3)]), null);
  });
});

/** Four threads of 64 registers a block: one block fills an SM's registers. */
const HEAVY: LaunchShape = { blocks: 100, threadsPerBlock: 1024, registersPerThread: 64, sharedBytesPerBlock: 0 };
/** Small enough to fit beside anything. */
const LIGHT: LaunchShape = { blocks: 1, threadsPerBlock: 32, registersPerThread: 8, sharedBytesPerBlock: 0 };
/** NCCL's: one block on each of 50 SMs. */
const CHANNELS: LaunchShape = { blocks: 50, threadsPerBlock: 512, registersPerThread: 32, sharedBytesPerBlock: 0 };
const DEVICE: DeviceShape = {
  index: 0,
  multiprocessors: 100,
  registersPerSm: 65536,
  sharedBytesPerSm: 228 * 1024,
  threadsPerSm: 2048,
};

describe('exposed-communication: compute slowed beside the moved collectives', () => {
  /** `serial()` with launch shapes; op 6, a light kernel on stream 8, runs beside where the second all-reduce lands. */
  const shaped = (compute = HEAVY, comm: (LaunchShape | null)[] = [CHANNELS, CHANNELS]) => [
    op('7', 0, 1, { launch: compute }),
    op('7', 1, 2, { launch: compute }),
    op('7', 2, 3, { launch: compute }),
    op('7', 3, 4, { launch: compute }),
    nccl('9', 4, 5, { launch: comm[0] }),
    op('8', 4.2, 4.8, { launch: LIGHT }),
    nccl('9', 5, 6, { launch: comm[1] }),
  ];

  it(
    'the shapes here make a heavy kernel take twice as long beside the collective, a light one no longer',
    DEADLINE,
    () => {
      assert.equal(slowdownBeside(HEAVY, CHANNELS, DEVICE), 2);
      assert.equal(slowdownBeside(LIGHT, CHANNELS, DEVICE), 1);
    },
  );

  it('replays until the slowed kernel settles: the first round to move it by at most 0.1 µs', DEADLINE, () => {
    const graph = graphOf(shaped());
    const cause = causeOf(graph, [step(0, 6)], DEVICE)!;
    // The first all-reduce moves beside kernel 2 (2 to 3 ms). Twice as slow for the share of its time it spends
    // beside the 1 ms all-reduce, kernel 2 takes d = 1 + 1/d' given last round's d': 2, 3/2, 5/3 … the ratios of
    // Fibonacci numbers, which move by 1/(F(n) F(n-1)): 1/(144 × 89) < 1e-4 first at 233/144.
    assert.deepEqual([...(cause.edit.opDuration ?? new Map()).keys()], [2]);
    assert.ok(Math.abs(cause.edit.opDuration!.get(2)! - 233 / 144) < 1e-12, `${cause.edit.opDuration!.get(2)}`);
    // The rest of the edit is the move itself.
    assert.deepEqual(waits(cause), [
      [1, 4],
      [3, 6],
    ]);
    assert.deepEqual(dropped(graph, cause), ['wait 3→4']);
    const time = replay(graph, cause.edit);
    assert.ok(Math.abs(time[opEnd(6)]! - (5 + 233 / 144 - 1)) < 1e-12);
  });

  it('takes the first collective that gives its launch shape', DEADLINE, () => {
    const cause = causeOf(graphOf(shaped(HEAVY, [null, CHANNELS])), [step(0, 6)], DEVICE)!;
    assert.ok(Math.abs(cause.edit.opDuration!.get(2)! - 233 / 144) < 1e-12);
  });

  it('without the device, a collective shape or a shaped compute kernel, no kernel is slowed', DEADLINE, () => {
    const plain = (cause: Cause | null) => {
      assert.ok(cause);
      assert.equal(cause.edit.opDuration, undefined);
      assert.deepEqual(waits(cause), [
        [1, 4],
        [3, 6],
      ]);
    };
    plain(causeOf(graphOf(shaped()), [step(0, 6)], null));
    plain(causeOf(graphOf(shaped(HEAVY, [null, null])), [step(0, 6)], DEVICE));
    const unshaped = shaped().map((o) => (o.communication ? o : { ...o, launch: null }));
    plain(causeOf(graphOf(unshaped), [step(0, 6)], DEVICE));
  });

  it('kernels that fit beside the collectives run as long as before', DEADLINE, () => {
    const cause = causeOf(graphOf(shaped(LIGHT)), [step(0, 6)], DEVICE)!;
    assert.deepEqual([...(cause.edit.opDuration ?? new Map()).keys()], []);
  });

  it('a kernel partly beside a collective is slowed for that part only', DEADLINE, () => {
    // Kernel 2 runs 2 to 4 ms; the first all-reduce moves to 2 to 3 (after kernel 1), half of kernel 2's time.
    const ops = [
      op('7', 0, 1, { launch: HEAVY }),
      op('7', 1, 2, { launch: HEAVY }),
      op('7', 2, 4, { launch: HEAVY }),
      nccl('9', 4, 5, { launch: CHANNELS }),
      nccl('9', 5, 6, { launch: CHANNELS }),
    ];
    const cause = causeOf(graphOf(ops), [step(0, 6)], DEVICE)!;
    assert.deepEqual(waits(cause), [
      [1, 3],
      [2, 4],
    ]);
    // 2 ms × (1 + share), share = 1 ms beside over its time d: d = 2 + 2/d settles at 1 + √3.
    assert.ok(Math.abs(cause.edit.opDuration!.get(2)! - (1 + Math.sqrt(3))) < 1e-3, `${cause.edit.opDuration!.get(2)}`);
  });

  it('a kernel that takes no time is not slowed', DEADLINE, () => {
    const ops = [
      op('7', 0, 1, { launch: HEAVY }),
      op('7', 1, 2, { launch: HEAVY }),
      op('8', 2.5, 2.5, { launch: HEAVY }),
      nccl('9', 2, 3, { launch: CHANNELS }),
      nccl('9', 3, 4, { launch: CHANNELS }),
    ];
    const cause = causeOf(graphOf(ops), [step(0, 4)], DEVICE)!;
    assert.equal(cause.edit.opDuration?.has(2) ?? false, false);
  });

  /** x, f(x), f(f(x)) … until a step moves it by at most 1e-4 (the settled test), or `rounds` values. */
  const settle = (x: number, f: (x: number) => number, rounds = 12) => {
    let previous = Number.NaN;
    for (let k = 1; k < rounds && !(Math.abs(x - previous) <= 1e-4); k++) [previous, x] = [x, f(x)];
    return x;
  };

  it('replays at most 12 times: a kernel three times as slow has not settled by then', DEADLINE, () => {
    // 60 of the 100 SMs held: the heavy kernels' 100 blocks take 3 waves on the 40 left. Kernel 2 beside the moved
    // all-reduce takes d = 1 + 2/d' given last round's d': 3, 5/3, 11/5 … towards 2, by less than 1e-4 only after 12.
    const cause = causeOf(graphOf(shaped(HEAVY, [{ ...CHANNELS, blocks: 60 }, null])), [step(0, 6)], DEVICE)!;
    assert.equal(slowdownBeside(HEAVY, { ...CHANNELS, blocks: 60 }, DEVICE), 3);
    const twelfth = settle(3, (d) => 1 + 2 / d);
    assert.ok(Math.abs(twelfth - 2) > 1e-4 && Math.abs(twelfth - 2) < 1e-3);
    assert.ok(Math.abs(cause.edit.opDuration!.get(2)! - twelfth) < 1e-12, `${cause.edit.opDuration!.get(2)}`);
  });

  it('replays until every slowed kernel has settled, not the first', DEADLINE, () => {
    // Thread 1 launched op 0 and op 3, a heavy kernel on stream 8 whose 0.5 ms lies inside the moved all-reduce
    // (2 to 3 ms): twice as slow it still does, and settles at once at 1 ms. Kernel 4 beside it settles as above.
    const ops = [
      op('7', -1, 0, { correlation: 1 }),
      op('7', 0, 1, { correlation: 2, launch: HEAVY }),
      op('7', 1, 2, { correlation: 3, launch: HEAVY }),
      op('8', 2, 2.5, { correlation: 8, launch: HEAVY }),
      op('7', 2, 3, { correlation: 4, launch: HEAVY }),
      op('7', 3, 4, { correlation: 5, launch: HEAVY }),
      nccl('9', 4, 5, { correlation: 6, launch: CHANNELS }),
      nccl('9', 5, 6, { correlation: 7, launch: CHANNELS }),
    ];
    const calls = [1, 2, 3, 8, 4, 5, 6, 7].map((c, j) => launch(c, -2 + 0.1 * j, c === 1 || c === 8 ? 1 : 2));
    const graph = graphOf(ops, calls);
    const cause = causeOf(graph, [step(-1, 6)], DEVICE)!;
    assert.deepEqual(waits(cause), [
      [2, 6],
      [5, 7],
    ]);
    assert.deepEqual([...cause.edit.opDuration!.keys()].sort(), [3, 4]);
    assert.equal(cause.edit.opDuration!.get(3), 1);
    assert.ok(Math.abs(cause.edit.opDuration!.get(4)! - 233 / 144) < 1e-12, `${cause.edit.opDuration!.get(4)}`);
  });

  it('finds what runs beside a kernel among the collectives as replayed, in their new order', DEADLINE, () => {
    // Thread 2 launched the backward kernels (ops 1, 2, 3, 5) and three all-reduces: op 6 (3 ms) and op 7 after it
    // on stream 9, op 8 (0.5 ms) on stream 10. Moved, op 6 runs 3 to 6 ms, op 7 after it 6 to 7, op 8 4 to 4.5: out of
    // their trace order. Op 4, thread 1's heavy kernel from 2 to 5 ms, runs beside ops 6 and 8: 2.5 of its 3 ms.
    const ops = [
      op('7', -1, 0, { correlation: 1 }),
      op('7', 0, 1, { correlation: 2 }),
      op('7', 1, 2, { correlation: 3 }),
      op('7', 2, 3, { correlation: 4 }),
      op('8', 2, 5, { correlation: 9, launch: HEAVY }),
      op('7', 3, 4, { correlation: 5 }),
      nccl('9', 4, 7, { correlation: 6, launch: CHANNELS }),
      nccl('9', 7, 8, { correlation: 7, launch: CHANNELS }),
      nccl('10', 7.5, 8, { correlation: 8, launch: CHANNELS }),
    ];
    const calls = [1, 2, 3, 9, 4, 5, 6, 7, 8].map((c, j) => launch(c, -2 + 0.1 * j, c === 1 || c === 9 ? 1 : 2));
    const graph = graphOf(ops, calls);
    const cause = causeOf(graph, [step(-1, 8)], DEVICE)!;
    const time = replay(graph, cause.edit);
    assert.deepEqual(
      [6, 7, 8].map((i) => [time[opStart(i)], time[opEnd(i)]].map((t) => Number(t!.toFixed(9)))),
      [
        [3, 6],
        [6, 7],
        [4, 4.5],
      ],
    );
    // First 3 × (1 + 2.5/3) = 5.5 ms; then, reaching past 7 ms, beside all 4.5 ms of them: d = 3 + 13.5/d'.
    const expected = settle(5.5, (d) => 3 + 13.5 / d);
    assert.ok(Math.abs(cause.edit.opDuration!.get(4)! - expected) < 1e-12, `${cause.edit.opDuration!.get(4)}`);
  });
});

describe('overlapWith: the time a span spends beside the pieces', () => {
  const pieces = [
    { start: 0, end: 10 },
    { start: 1, end: 2 },
    { start: 3, end: 4 },
    { start: 12, end: 13 },
  ];

  it('counts a long early piece that reaches past the later ones', DEADLINE, () => {
    const besides = overlapWith(pieces);
    assert.equal(besides(5, 6), 1);
    assert.equal(besides(9, 12.5), 1.5);
    assert.equal(besides(0, 20), 10 + 1 + 1 + 1);
  });

  it('counts each piece that reaches into the span, for the part inside it', DEADLINE, () => {
    const besides = overlapWith(pieces);
    assert.equal(besides(1.5, 3.5), 2 + 0.5 + 0.5);
    assert.equal(besides(-5, 0.5), 0.5);
    assert.equal(besides(10, 12), 0);
    assert.equal(besides(13, 14), 0);
    assert.equal(besides(11, 12.25), 0.25);
  });

  it('a first piece is reached from the span after it', DEADLINE, () => {
    assert.equal(overlapWith([{ start: 0, end: 4 }])(1, 2), 1);
    assert.equal(overlapWith([])(1, 2), 0);
  });

  it('reads only the pieces near the span, not every piece of the trace', DEADLINE, () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ start: i, end: i + 0.5 }));
    let reads = 0;
    const counted = new Proxy(many, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const besides = overlapWith(counted);
    reads = 0;
    assert.equal(besides(500.25, 501.25), 0.5);
    // A bisection of 1000 (10 reads) and the two pieces the span reaches, each read twice at most.
    assert.ok(reads <= 16, `${reads} reads`);
  });

  it('equals the sum over every piece, in the same order', DEADLINE, () => {
    const interval = fc
      .tuple(fc.double({ min: 0, max: 50, noNaN: true }), fc.double({ min: 0, max: 20, noNaN: true }))
      .map(([start, length]) => ({ start, end: start + length }));
    fc.assert(
      fc.property(
        fc.array(interval, { maxLength: 30 }),
        fc.array(interval, { minLength: 1, maxLength: 10 }),
        (p, k) => {
          const sorted = [...p].sort((a, b) => a.start - b.start);
          const besides = overlapWith(sorted);
          for (const { start, end } of k) {
            const every = sorted.reduce((s, q) => s + Math.max(0, Math.min(end, q.end) - Math.max(start, q.start)), 0);
            assert.equal(besides(start, end), every);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
