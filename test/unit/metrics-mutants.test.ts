import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KERNEL_WAIT_MS, deviceTimeline, eventsWithin, stepMetrics } from '../../src/analysis/metrics.js';
import type { LinkRates } from '../../src/analysis/metrics.js';
import type { GpuEvent, HostCall } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// One step's metrics on one device (analysis/metrics.ts) at the edges mutation testing found unpinned: the device's
// timeline (order, longest op, per-op cost, synchronize reach), which events a step sees, each party's busy and
// overlap shares, the floor and its bound, and each idle gap's cause.

const close = (actual: number | null, expected: number, what = '') =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

function ev(start: number, end: number, extra: Partial<GpuEvent> = {}): GpuEvent {
  return gpuEvent({ stream: 's', start, end, ...extra });
}
const copy = (direction: GpuEvent['direction'], start: number, end: number, bytes: number | null = null) =>
  ev(start, end, { kind: 'memcpy', direction, bytes, stream: `copy-${direction}` });
const sync = (start: number, end: number): HostCall => ({
  kind: 'sync',
  name: 'cudaDeviceSynchronize',
  start,
  end,
  correlation: null,
});
const launch = (start: number, end: number): HostCall => ({
  kind: 'launch',
  name: 'cudaLaunchKernel',
  start,
  end,
  correlation: 1,
});
const window = (start: number, end: number) => ({ name: 'step', start, end, host: null });
const noRates: LinkRates = { h2d: null, d2h: null };
const span = (e: GpuEvent) => [e.start, e.end];

describe("a device's timeline", { timeout: 5_000 }, () => {
  it("orders events by start, and events of one start by end, without reordering the caller's list", () => {
    const given = [ev(5, 6), ev(0, 3), ev(0, 1)];
    const timeline = deviceTimeline(given, []);
    assert.deepEqual(timeline.events.map(span), [
      [0, 1],
      [0, 3],
      [5, 6],
    ]);
    assert.deepEqual(given.map(span), [
      [5, 6],
      [0, 3],
      [0, 1],
    ]);
  });

  it('knows its longest event, and an empty timeline has none, no per-op cost and no synchronizes', () => {
    assert.equal(deviceTimeline([ev(0, 1), ev(2, 5), ev(6, 7)], []).longestMs, 3);
    assert.deepEqual(deviceTimeline([], []), {
      events: [],
      longestMs: 0,
      host: [],
      perOpMs: 0,
      syncs: [],
      syncReach: [],
    });
  });

  it('takes the per-op cost from the least gap of one stream whose second op was issued before the first ended', () => {
    const timeline = deviceTimeline(
      [
        ev(0, 1, { issued: 0 }),
        ev(1.5, 2, { issued: 0.5 }), // issued in time, a gap of 0.5, but the other stream ran in it (1.2 to 2)
        ev(2.2, 3, { issued: 2.1 }), // issued after the op before it ended: the host's gap, not the GPU's
        ev(3.4, 4, { issued: 3 }), // issued exactly as the op before it ended, the device idle: 0.4
        ev(4.1, 5, { issued: null }), // no issue time: nothing known
        ev(0, 0.9, { stream: 'other', issued: 0 }),
        ev(1.2, 2, { stream: 'other', issued: 0.1 }), // a gap of 0.3, but the first stream ran in it (0 to 1)
      ],
      [],
    );
    close(timeline.perOpMs, 0.4, 'perOpMs');
  });

  it("takes no per-op cost from a stream's gap that another stream's op filled", () => {
    // Two streams taking turns, as a CUDA graph over several streams runs: each waits on the other, which costs it
    // nothing of its own.
    const turns = [0, 1, 2, 3].map((i) => ev(i, i + 1, { stream: i % 2 ? 'b' : 'a', issued: 0 }));
    assert.equal(deviceTimeline(turns, []).perOpMs, 0);
    const idle = [...turns, ev(4.25, 5, { stream: 'b', issued: 0 })];
    close(deviceTimeline(idle, []).perOpMs, 0.25, 'after the idle gap');
  });

  it('gives no per-op cost for ops that overlap on one stream, and 0 where no pair qualifies', () => {
    // The second starts before the first ends: no gap, and not a negative cost.
    assert.equal(deviceTimeline([ev(0, 2, { issued: 0 }), ev(1, 3, { issued: 0 })], []).perOpMs, 0);
    close(
      deviceTimeline([ev(0, 2, { issued: 0 }), ev(1, 3, { issued: 0 }), ev(3.5, 4, { issued: 0 })], []).perOpMs,
      0.5,
    );
    assert.equal(deviceTimeline([ev(0, 1, { issued: 0 }), ev(1.2, 2, { issued: null })], []).perOpMs, 0);
    assert.equal(deviceTimeline([ev(0, 1, { issued: 0 }), ev(1.2, 2, { issued: 1.1 })], []).perOpMs, 0);
  });

  it('counts a back-to-back pair, issued in time, as a per-op cost of 0', () => {
    assert.equal(
      deviceTimeline([ev(0, 1, { issued: 0 }), ev(1, 2, { issued: 0.5 }), ev(3, 4, { issued: 0 })], []).perOpMs,
      0,
    );
  });

  it('counts an op issued exactly as the one before it ended as issued in time', () => {
    close(deviceTimeline([ev(0, 1, { issued: 0 }), ev(1.25, 2, { issued: 1 })], []).perOpMs, 0.25, 'perOpMs');
  });

  it("measures a stream's gap from the latest end so far, not from a shorter op nested inside a longer one", () => {
    const timeline = deviceTimeline(
      [ev(0, 10, { issued: 0 }), ev(1, 2, { issued: 0 }), ev(10.5, 11, { issued: 5 })],
      [],
    );
    close(timeline.perOpMs, 0.5, 'perOpMs');
  });

  it('sorts host calls by start and keeps the synchronizes apart, with the latest end reached among the first i + 1', () => {
    const timeline = deviceTimeline([], [sync(12, 13), launch(1, 1.5), sync(2, 5), sync(0, 10)]);
    assert.deepEqual(
      timeline.host.map((c) => [c.kind, c.start]),
      [
        ['sync', 0],
        ['launch', 1],
        ['sync', 2],
        ['sync', 12],
      ],
    );
    assert.deepEqual(
      timeline.syncs.map((c) => c.start),
      [0, 2, 12],
    );
    assert.deepEqual(timeline.syncReach, [10, 10, 13]);
  });
});

describe('the events a step sees', { timeout: 5_000 }, () => {
  const timeline = deviceTimeline(
    [ev(0, 1), ev(2, 3), ev(4, 10), ev(5, 6), ev(5.5, 5.5), ev(6, 6), ev(8, 9), ev(9, 9.5), ev(12, 13)],
    [],
  );

  it('are those that meet [start, end): ending at its start or starting at its end is outside', () => {
    assert.deepEqual(eventsWithin(timeline, 6, 9).map(span), [
      [4, 10],
      [6, 6],
      [8, 9],
    ]);
  });

  it('take an instant event at the very start, not one before it', () => {
    assert.deepEqual(eventsWithin(timeline, 5.5, 5.6).map(span), [
      [4, 10],
      [5, 6],
      [5.5, 5.5],
    ]);
  });

  it('are none in a window that meets no event', () => {
    assert.deepEqual(eventsWithin(timeline, 10.5, 11.5), []);
    assert.deepEqual(eventsWithin(timeline, 14, 20), []);
  });
});

describe("a step's busy and overlap shares", { timeout: 5_000 }, () => {
  // 0-4 compute, 3-6 NCCL, 2-6 H2D, 5.5-7 D2H, 7-8 D2D, 8.5-9 memset; idle 8-8.5 and 9-10.
  const events = [
    ev(0, 4),
    ev(3, 6, { communication: true, stream: 'nccl' }),
    copy('h2d', 2, 6),
    copy('d2h', 5.5, 7),
    { ...copy('d2d', 7, 8), defaultStream: true },
    ev(8.5, 9, { kind: 'memset', stream: 'm' }),
  ];
  const metrics = stepMetrics(deviceTimeline(events, []), window(0, 10), noRates);

  it('gives each engine its busy share of the step', () => {
    assert.equal(metrics.name, 'step');
    assert.equal(metrics.startMs, 0);
    assert.equal(metrics.ms, 10);
    assert.deepEqual(metrics.busy, { kernels: 0.6, h2d: 0.4, d2h: 0.15, memsets: 0.05, communication: 0.3 });
  });

  it("gives each overlap as a share of the first party's time, H2D with D2H of the shorter direction", () => {
    close(metrics.overlap.h2dWithKernel, 0.5, 'h2dWithKernel');
    close(metrics.overlap.d2hWithKernel, 0, 'd2hWithKernel');
    close(metrics.overlap.h2dWithD2h, 0.5 / 1.5, 'h2dWithD2h');
    close(metrics.overlap.copyWithKernel, 2 / 6, 'copyWithKernel');
    close(metrics.overlap.commWithCompute, 1 / 3, 'commWithCompute');
  });

  it('measures copy and communication time, and the parts of each no compute kernel hid', () => {
    assert.equal(metrics.copyMs, 6);
    assert.equal(metrics.exposedCopyMs, 4);
    assert.equal(metrics.commMs, 3);
    assert.equal(metrics.exposedCommMs, 2);
    assert.equal(metrics.idleMs, 1.5);
  });

  it('takes H2D with D2H over the shorter direction, whichever it is', () => {
    const swapped = stepMetrics(deviceTimeline([copy('h2d', 0, 1.5), copy('d2h', 1, 5)], []), window(0, 10), noRates);
    close(swapped.overlap.h2dWithD2h, 0.5 / 1.5, 'h2dWithD2h');
  });

  it('clips events that cross the step to their part inside it', () => {
    const m = stepMetrics(
      deviceTimeline([ev(-2, 2), copy('h2d', 9, 12, 3e6), ev(4, 5, { communication: true })], []),
      window(0, 10),
      { h2d: 1, d2h: null },
    );
    assert.deepEqual(m.busy, { kernels: 0.3, h2d: 0.1, d2h: 0, memsets: 0, communication: 0.1 });
    assert.equal(m.floor.kernelMs, 2);
    close(m.floor.h2dMs, 1, 'h2dMs');
  });

  it('has no overlap share where the first party did not run', () => {
    const m = stepMetrics(deviceTimeline([ev(0, 4)], []), window(0, 10), noRates);
    assert.deepEqual(m.overlap, {
      h2dWithKernel: null,
      d2hWithKernel: null,
      h2dWithD2h: null,
      copyWithKernel: null,
      commWithCompute: null,
    });
    const oneWay = stepMetrics(deviceTimeline([copy('h2d', 0, 1)], []), window(0, 10), noRates);
    assert.equal(oneWay.overlap.h2dWithD2h, null);
    const otherWay = stepMetrics(deviceTimeline([copy('d2h', 0, 1)], []), window(0, 10), noRates);
    assert.equal(otherWay.overlap.h2dWithD2h, null);
  });

  it('measures a step that does not start at 0 from its own start', () => {
    const m = stepMetrics(deviceTimeline([ev(4, 8)], []), window(6, 10), noRates);
    assert.deepEqual([m.startMs, m.ms, m.busy.kernels, m.floor.kernelMs, m.efficiency], [6, 4, 0.5, 2, 0.5]);
  });

  it('gives a step of no length no shares and an efficiency of 0, not NaN', () => {
    const m = stepMetrics(deviceTimeline([ev(0, 4)], []), window(2, 2), noRates);
    assert.deepEqual(m.busy, { kernels: 0, h2d: 0, d2h: 0, memsets: 0, communication: 0 });
    assert.equal(m.efficiency, 0);
  });
});

describe("a step's floor", { timeout: 5_000 }, () => {
  const rates: LinkRates = { h2d: 1, d2h: 0.5 }; // 1 GB/s is 1e6 bytes a ms

  it('is the summed compute kernel time where that is the longest term, NCCL, copies and memsets left out', () => {
    const m = stepMetrics(
      deviceTimeline(
        [
          ev(0, 2),
          ev(1, 3, { stream: 'b' }),
          ev(3, 8, { communication: true }),
          copy('h2d', 3, 4, 1e6),
          ev(4, 5, { kind: 'memset' }),
        ],
        [],
      ),
      window(0, 10),
      rates,
    );
    assert.deepEqual(m.floor, { ms: 4, bound: 'kernels', kernelMs: 4, h2dMs: 1, d2hMs: null, opCostMs: 0 });
    close(m.efficiency, 0.4, 'efficiency');
  });

  it("is a direction's bytes over its link rate where that is longest, D2D copies counted in neither direction", () => {
    const m = stepMetrics(
      deviceTimeline([ev(0, 1), copy('h2d', 1, 2, 2e6), copy('d2h', 2, 3, 1.5e6), copy('d2d', 3, 4, 9e6)], []),
      window(0, 10),
      rates,
    );
    assert.equal(m.floor.bound, 'd2h');
    close(m.floor.ms, 3, 'floor');
    close(m.floor.h2dMs, 2, 'h2dMs');
    close(m.floor.d2hMs, 3, 'd2hMs');
    assert.equal(m.floor.kernelMs, 1);
    const h2dBound = stepMetrics(deviceTimeline([ev(0, 1), copy('h2d', 1, 2, 5e6)], []), window(0, 10), rates);
    assert.equal(h2dBound.floor.bound, 'h2d');
    close(h2dBound.floor.ms, 5, 'floor');
  });

  it('has no link term for a direction without a rate, or without copies', () => {
    const m = stepMetrics(
      deviceTimeline([ev(0, 1), copy('h2d', 1, 2, 2e6), copy('d2h', 2, 3, 1.5e6)], []),
      window(0, 10),
      { h2d: null, d2h: 0.5 },
    );
    assert.deepEqual([m.floor.bound, m.floor.h2dMs], ['d2h', null]);
    const noCopies = stepMetrics(deviceTimeline([ev(0, 1)], []), window(0, 10), rates);
    assert.deepEqual(noCopies.floor, { ms: 1, bound: 'kernels', kernelMs: 1, h2dMs: null, d2hMs: null, opCostMs: 0 });
  });

  it('keeps the first of terms that tie: kernels before H2D', () => {
    const m = stepMetrics(deviceTimeline([ev(0, 2), copy('h2d', 2, 3, 2e6)], []), window(0, 10), rates);
    assert.equal(m.floor.bound, 'kernels');
  });

  it("adds the bounding term's op count times the per-op cost", () => {
    // Three H2D copies back to back on one stream, each issued in time, 0.25 apart: a per-op cost of 0.25.
    const events = [
      ev(0, 0.5, { issued: 0 }),
      copy('h2d', 1, 2, 2e6),
      { ...copy('h2d', 2.25, 3, 2e6), issued: 1 },
      { ...copy('h2d', 3.25, 4, 2e6), issued: 2 },
    ];
    const m = stepMetrics(deviceTimeline(events, []), window(0, 10), rates);
    assert.equal(m.floor.bound, 'h2d');
    close(m.floor.opCostMs, 0.75, 'opCostMs');
    close(m.floor.ms, 6.75, 'floor');
    close(m.efficiency, 0.675, 'efficiency');
  });

  it("counts a copy's bytes in proportion to its part inside the step, an instant copy's all, an unknown size's none", () => {
    const m = stepMetrics(
      deviceTimeline([copy('h2d', 8, 12, 4e6), copy('h2d', 5, 5, 1e6), copy('h2d', 6, 7, null)], []),
      window(0, 10),
      { h2d: 1, d2h: null },
    );
    close(m.floor.h2dMs, 3, 'h2dMs');
  });

  it('counts the clipped part of a compute kernel that crosses either edge of the step', () => {
    const m = stepMetrics(deviceTimeline([ev(-1, 2), ev(9, 13, { stream: 'b' })], []), window(0, 10), noRates);
    assert.equal(m.floor.kernelMs, 3);
  });
});

describe("each idle gap's cause", { timeout: 5_000 }, () => {
  it('is host wait where the op ending the gap was issued after the gap began, kernel wait for a short gap issued in time', () => {
    const events = [
      ev(0, 2),
      ev(3, 4, { issued: 2.5 }), // 2-3: issued after the gap began
      ev(4.01, 5, { issued: 1 }), // 4-4.01: short, issued in time
      ev(5.5, 6, { issued: 1 }), // 5-5.5: the host was in a synchronize
      ev(7, 8, { issued: 1 }), // 6-7: other
      ev(10, 11, { issued: 9 }), // after the step: the gap 8-10 is at its edge
    ];
    const m = stepMetrics(deviceTimeline(events, [sync(4.9, 5.2)]), window(0, 10), noRates);
    close(m.hostWaitMs, 1, 'host wait');
    close(m.kernelWaitMs, 0.01, 'kernel wait');
    close(m.syncWaitMs, 0.5, 'sync wait');
    close(m.otherIdleMs, 3, 'other');
    close(m.idleMs, 4.51, 'idle');
  });

  it('is host wait if any op starting at the gap end was issued late, but not one issued as the gap began', () => {
    const late = stepMetrics(
      // Ordered by end, the op issued in time comes first at 2: the one issued late must still be found.
      deviceTimeline([ev(0, 1), ev(2, 3, { issued: 1.5 }), ev(2, 2.5, { stream: 'b', issued: 0.5 })], []),
      window(0, 3),
      noRates,
    );
    assert.deepEqual([late.hostWaitMs, late.otherIdleMs], [1, 0]);
    const onTime = stepMetrics(
      deviceTimeline([ev(0, 1), ev(2, 3, { issued: 1 }), ev(2, 2.5, { stream: 'b', issued: null })], []),
      window(0, 3),
      noRates,
    );
    assert.deepEqual([onTime.hostWaitMs, onTime.otherIdleMs], [0, 1]);
  });

  it('is never host wait for an op with no issue time, whatever the clock: negative times included', () => {
    const m = stepMetrics(deviceTimeline([ev(-3, -2), ev(-1, 0, { issued: null })], []), window(-3, 0), noRates);
    assert.deepEqual([m.hostWaitMs, m.otherIdleMs], [0, 1]);
  });

  it('finds the op ending a gap among many before it', () => {
    const events = [ev(0, 1), ev(1, 2), ev(2, 3), ev(3, 4), ev(5, 6, { issued: 4.5 }), ev(6, 7), ev(7, 8)];
    const m = stepMetrics(deviceTimeline(events, []), window(0, 8), noRates);
    assert.equal(m.hostWaitMs, 1);
  });

  it('is never kernel wait at either edge of the step, however short', () => {
    const m = stepMetrics(deviceTimeline([ev(0.01, 9.99, { issued: 0 })], []), window(0, 10), noRates);
    assert.equal(m.kernelWaitMs, 0);
    close(m.otherIdleMs, 0.02, 'other');
  });

  it('is kernel wait only below KERNEL_WAIT_MS: a gap of exactly that is other', () => {
    assert.equal(KERNEL_WAIT_MS, 0.03);
    const m = stepMetrics(deviceTimeline([ev(-1, 0), ev(0.03, 1, { issued: -1 })], []), window(-1, 1), noRates);
    assert.deepEqual([m.kernelWaitMs, m.otherIdleMs], [0, 0.03]);
  });

  it('is sync wait from a synchronize that began exactly as the gap did, not one that ended then or began after', () => {
    const events = [ev(0, 1), ev(2, 3, { issued: 0 }), ev(4, 5, { issued: 0 }), ev(6, 7, { issued: 0 })];
    // Gaps 1-2, 3-4, 5-6: a synchronize from 1, one ending at 3, one starting just after 5.
    const m = stepMetrics(deviceTimeline(events, [sync(1, 1.5), sync(2.5, 3), sync(5.1, 5.5)]), window(0, 7), noRates);
    assert.deepEqual([m.syncWaitMs, m.otherIdleMs], [1, 2]);
  });

  it('is sync wait under an earlier, longer synchronize that a later, shorter one sits inside', () => {
    const events = [ev(0, 1), ev(6, 7, { issued: 0 })];
    const m = stepMetrics(
      deviceTimeline(events, [sync(0.5, 10), sync(0.8, 0.9), launch(0.95, 0.96)]),
      window(0, 7),
      noRates,
    );
    assert.deepEqual([m.syncWaitMs, m.otherIdleMs], [5, 0]);
  });

  it('is other without any synchronize, or after the last one ended', () => {
    const events = [ev(0, 1), ev(2, 3, { issued: 0 })];
    assert.equal(stepMetrics(deviceTimeline(events, []), window(0, 3), noRates).otherIdleMs, 1);
    const after = stepMetrics(deviceTimeline(events, [sync(0, 0.5), launch(1, 1.2)]), window(0, 3), noRates);
    assert.deepEqual([after.syncWaitMs, after.otherIdleMs], [0, 1]);
  });
});
