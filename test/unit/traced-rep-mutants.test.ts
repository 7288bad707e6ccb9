import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import type { TracedRepTiming } from '../../src/measure/runner.js';
import {
  alignEngineTimes,
  kernelRangeBytes,
  timelineRep,
  timelineReps,
  withEngineTimes,
} from '../../src/measure/timeline.js';
import { builtinConfigsDir } from '../../src/paths.js';
import { buildPlan } from '../../src/plan/build.js';
import { traceSchedule } from '../../src/plan/trace.js';
import type { Plan, Schedule } from '../../src/plan/types.js';
import type { TimelineOp } from '../../src/result/timeline.js';

// A traced rep as the Result's timeline records it (src/measure/timeline.ts), which mutation testing found reached
// only by GPU and CLI tests: every op's kind, bytes and times, the streams' priorities, and CUPTI's engine times put
// on the events' clock.

const close = (actual: number | undefined, expected: number, what = '') =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

function planned(file: string): Plan {
  const path = join(builtinConfigsDir(), file);
  const { config, locate } = parseConfigText(readFileSync(path, 'utf8'), path);
  return buildPlan(config, resolveKernels(config, locate));
}

/**
 * Op i of the traced schedule ran from 0.1·i ms for 0.05 ms, issued at i µs; host ops ran on the JS thread 1 ms later.
 */
function traced(schedule: Schedule, extra: Partial<TracedRepTiming> = {}, hostTimes = true): TracedRepTiming {
  return {
    schedule,
    totalMs: 9,
    issueMs: 0.4,
    ops: traceSchedule(schedule).spans.map((span, i) => ({
      span,
      startMs: 0.1 * i,
      endMs: 0.1 * i + 0.05,
      issuedMs: 0.001 * i,
      ...(hostTimes && span.op.kind === 'host' ? { hostStartedMs: 1 + 0.1 * i, hostEndedMs: 1.02 + 0.1 * i } : {}),
    })),
    ...extra,
  };
}

const range = { least: 0, greatest: -5 };

describe("a kernel's bytes on the timeline", () => {
  it('counts one element of every buffer the kernel is given, per element of its range', () => {
    const plan = {
      kernels: [
        {
          label: 'mix',
          args: [
            { kind: 'buffer', buffer: 'wide' },
            { kind: 'chunk' },
            { kind: 'buffer', buffer: 'narrow' },
            { kind: 'buffer', buffer: 'gone' },
            { kind: 'buffer', buffer: 'table' },
          ],
        },
      ],
      buffers: [
        { name: 'narrow', elementBytes: 2, itemSize: 1, role: 'in' },
        { name: 'wide', elementBytes: 8, itemSize: 1, role: 'out' },
        { name: 'table', elementBytes: 4, itemSize: 1, role: 'resident' },
      ],
    } as unknown as Pick<Plan, 'kernels' | 'buffers'>;
    const bytes = kernelRangeBytes(plan);
    assert.equal(
      bytes({ kernel: 'mix', count: 100 }),
      1000,
      'a resident table is read whole, not per element of the range',
    );
    assert.equal(bytes({ kernel: 'other', count: 100 }), 0);
  });
});

describe('a traced rep on one device', () => {
  const plan = planned('host-stage.yaml');
  const overlapped = plan.schedules.find((s) => s.role.kind === 'overlapped') as Schedule;
  const rep = timelineRep(traced(overlapped), kernelRangeBytes(plan), range);

  it('records every work op with its kind, stream, chunk, bytes and times, in the order traced', () => {
    const spans = traceSchedule(overlapped).spans;
    assert.equal(rep.ops.length, spans.length);
    assert.deepEqual([rep.mode, rep.device, rep.issueMs, rep.totalMs], [overlapped.id, 0, 0.4, 9]);
    spans.forEach(({ op }, i) => {
      const got = rep.ops[i] as TimelineOp;
      assert.deepEqual([got.mode, got.device, got.stream, got.chunk], [overlapped.id, 0, op.stream, op.chunk]);
      close(got.startMs, 0.1 * i);
      close(got.endMs, 0.1 * i + 0.05);
      close(got.issuedMs, 0.001 * i);
    });
    const firstOf = (kind: string) => rep.ops.find((o) => o.kind === kind) as TimelineOp;
    const chunk = overlapped.ranges[0]?.count ?? 0;
    assert.deepEqual([firstOf('h2d').buffer, firstOf('h2d').kernel, firstOf('h2d').bytes], ['input', null, chunk * 4]);
    assert.deepEqual([firstOf('d2h').buffer, firstOf('d2h').kernel, firstOf('d2h').bytes], ['output', null, chunk * 4]);
    assert.deepEqual(
      [firstOf('kernel').buffer, firstOf('kernel').kernel, firstOf('kernel').bytes],
      [null, 'scale', chunk * 8],
    );
    const host = firstOf('host');
    const i = rep.ops.indexOf(host);
    assert.deepEqual([host.buffer, host.kernel, host.bytes], [null, null, 0]);
    close(host.hostStartedMs, 1 + 0.1 * i);
    close(host.hostEndedMs, 1.02 + 0.1 * i);
    assert.equal(rep.ops.filter((o) => o.kind === 'host').length, 16, 'one checksum per chunk');
  });

  it("leaves out a host op's JS-thread times when the runner did not see both", () => {
    const untimed = timelineRep(traced(overlapped, {}, false), kernelRangeBytes(plan), range);
    const host = untimed.ops.find((o) => o.kind === 'host') as TimelineOp;
    assert.deepEqual(['hostStartedMs' in host, 'hostEndedMs' in host], [false, false]);
    const spans = traceSchedule(overlapped).spans;
    const half = timelineRep(
      {
        ...traced(overlapped),
        ops: traced(overlapped).ops.map((o) => (o.span.op.kind === 'host' ? { ...o, hostEndedMs: undefined } : o)),
      },
      kernelRangeBytes(plan),
      range,
    );
    assert.equal(
      half.ops.some((o) => 'hostStartedMs' in o),
      false,
    );
    const otherHalf = timelineRep(
      {
        ...traced(overlapped),
        ops: traced(overlapped).ops.map((o) => (o.span.op.kind === 'host' ? { ...o, hostStartedMs: undefined } : o)),
      },
      kernelRangeBytes(plan),
      range,
    );
    assert.equal(
      otherHalf.ops.some((o) => 'hostEndedMs' in o),
      false,
    );
    assert.equal(spans.length, half.ops.length);
  });

  it("lists the schedule's streams with their kinds, and no timing source from a runner that never tried CUPTI", () => {
    assert.deepEqual(
      rep.streams,
      overlapped.streams.map((s) => ({ id: s.id, flags: s.kind, priority: null })),
    );
    assert.equal('timing' in rep, false);
    const events = timelineRep(
      traced(overlapped, { engine: { source: 'events', reason: 'CUPTI not found' } }),
      kernelRangeBytes(plan),
      range,
    );
    assert.deepEqual(events.timing, { source: 'events', note: 'CUPTI not found' });
  });

  it("resolves stream priorities against the device's range: low is the least, high the greatest", () => {
    const prioritised = planned('priorities.yaml');
    const latency = prioritised.schedules.find((s) => s.role.kind === 'latency') as Schedule;
    const r = timelineRep(traced(latency), kernelRangeBytes(prioritised), { least: 0, greatest: -3 });
    const byStream = new Map(latency.streams.map((s) => [s.id, s.priority?.level]));
    assert.ok(r.streams.some((s) => s.priority === -3) && r.streams.some((s) => s.priority === 0));
    for (const s of r.streams)
      assert.equal(s.priority, byStream.get(s.id) === 'high' ? -3 : byStream.get(s.id) === 'low' ? 0 : null, s.id);
  });
});

describe('a traced rep of a pipeline across two devices', () => {
  const plan = planned('cross-device.yaml');
  const cross = plan.schedules.find((s) => s.role.kind === 'cross-device') as Schedule;

  it('gives each device its own ops, streams and total, a peer copy with its bytes on the device it copies from', () => {
    const timing = traced(cross, {
      deviceTotalsMs: [
        { device: 1, totalMs: 3.05 },
        { device: 0, totalMs: 2.9 },
      ],
    });
    const reps = timelineReps(timing, kernelRangeBytes(plan), (device) =>
      device === 0 ? range : { least: 0, greatest: -2 },
    );
    assert.deepEqual(
      reps.map((r) => [r.device, r.totalMs, r.issueMs]),
      [
        [0, 2.9, 0.4],
        [1, 3.05, 0.4],
      ],
    );
    const device = new Map(cross.streams.map((s) => [s.id, s.device]));
    for (const r of reps) {
      assert.ok(r.ops.length > 0);
      assert.ok(r.ops.every((o) => o.device === r.device && device.get(o.stream) === r.device));
      assert.deepEqual(
        r.streams.map((s) => s.id),
        cross.streams.filter((s) => s.device === r.device).map((s) => s.id),
      );
    }
    const peer = reps[0]?.ops.find((o) => o.kind === 'peer');
    const peerOp = cross.body.find((o) => o.kind === 'peer');
    assert.ok(peer && peerOp?.kind === 'peer');
    assert.deepEqual([peer.buffer, peer.kernel, peer.bytes], [peerOp.buffer, null, peerOp.bytes]);
    const total = timelineReps(
      traced(cross, { deviceTotalsMs: [{ device: 0, totalMs: 2.9 }] }),
      kernelRangeBytes(plan),
      () => range,
    );
    assert.deepEqual(
      total.map((r) => r.totalMs),
      [2.9, 9],
      "a device with no total of its own takes the rep's",
    );
  });
});

describe("CUPTI's engine times on the events' clock", () => {
  const op = (startMs: number, endMs: number, engine?: [number, number]) => ({
    startMs,
    endMs,
    ...(engine ? { engineNs: { start: engine[0], end: engine[1] } } : {}),
  });

  it('takes the midpoint of the offsets every op allows, and how far either bound lies from it', () => {
    // Op 1 allows 0.5 to 0.6 ms, op 2 0.55 to 0.7 ms: together 0.55 to 0.6; an op without engine times allows anything.
    const aligned = alignEngineTimes([op(1, 2, [0.5e6, 1.4e6]), op(5, 5.01), op(3, 4, [2.45e6, 3.3e6])]);
    assert.ok(aligned && 'offsetMs' in aligned);
    close(aligned.offsetMs, 0.575);
    close(aligned.withinMs, 0.025);
    assert.equal(alignEngineTimes([op(1, 2), op(3, 4)]), null);
    assert.equal(alignEngineTimes([]), null);
  });

  it('accepts bounds that cross by up to the tolerance, and calls a wider crossing a mismatch', () => {
    const at = alignEngineTimes([op(0.005, 1, [0, 1e6])]);
    assert.ok(at && 'offsetMs' in at, 'crossing by exactly the tolerance still aligns');
    close(at.offsetMs, 0.0025);
    close(at.withinMs, 0.0025);
    const past = alignEngineTimes([op(1, 2, [0.5e6, 1.49e6]), op(3, 4, [2.4e6, 3.3e6])]);
    assert.ok(past && 'mismatchMs' in past);
    close(past.mismatchMs, 0.6 - 0.51);
  });

  const timelineOp = (startMs: number, endMs: number): TimelineOp => ({
    mode: 'm',
    device: 0,
    stream: 's0',
    kind: 'kernel',
    chunk: 0,
    buffer: null,
    kernel: 'k',
    bytes: 0,
    startMs,
    endMs,
    issuedMs: 0,
  });

  it("draws each engine time between its op's events, and says how closely the clocks were matched", () => {
    const fitting = [
      { op: timelineOp(1, 2), engineNs: { start: 0.5e6, end: 1.4e6 } },
      { op: timelineOp(2.5, 2.6) },
      { op: timelineOp(3, 4), engineNs: { start: 2.45e6, end: 3.3e6 } },
    ];
    const done = withEngineTimes(fitting, { source: 'cupti' });
    assert.deepEqual(done.timing, {
      source: 'cupti',
      note: "engine times from CUPTI, put on the events' clock to within ±25.0 µs",
    });
    close(done.ops[0]?.engineStartMs, 1.075);
    close(done.ops[0]?.engineEndMs, 1.975);
    assert.deepEqual(done.ops[1], fitting[1]?.op);
    close(done.ops[2]?.engineStartMs, 3.025);
    close(done.ops[2]?.engineEndMs, 3.875);
    assert.equal(done.ops.length, 3);
  });

  it('clamps an engine time that strays past its events, within the tolerance, onto them', () => {
    // One op alone: offset 0.0025 ms; its engine start lands 0.0025 ms before the op's begin event and its end after
    // its end event.
    const { ops } = withEngineTimes([{ op: timelineOp(0.005, 1), engineNs: { start: 0, end: 1e6 } }], {
      source: 'cupti',
    });
    assert.deepEqual([ops[0]?.engineStartMs, ops[0]?.engineEndMs], [0.005, 1]);
    const inverted = withEngineTimes([{ op: timelineOp(1, 2), engineNs: { start: 0.6e6, end: 0.5e6 } }], {
      source: 'cupti',
    });
    close(inverted.ops[0]?.engineStartMs, 1.55);
    close(inverted.ops[0]?.engineEndMs, 1.55, 'an end before the start is drawn at the start');
  });

  it('falls back to the events, saying why, when CUPTI saw nothing or its times do not fit', () => {
    const plain = [{ op: timelineOp(1, 2) }];
    assert.deepEqual(withEngineTimes(plain, { source: 'cupti' }), {
      ops: [plain[0]?.op],
      timing: { source: 'events', note: 'CUPTI recorded no copy or kernel of this device' },
    });
    assert.deepEqual(withEngineTimes(plain, undefined), { ops: [plain[0]?.op], timing: undefined });
    const apart = withEngineTimes(
      [
        { op: timelineOp(1, 2), engineNs: { start: 0.5e6, end: 1.49e6 } },
        { op: timelineOp(3, 4), engineNs: { start: 2.4e6, end: 3.3e6 } },
      ],
      { source: 'cupti' },
    );
    assert.deepEqual(apart.timing, {
      source: 'events',
      note: "CUPTI's times do not fit between the events around their ops (90.0 µs apart)",
    });
    assert.equal(
      apart.ops.some((o) => 'engineStartMs' in o),
      false,
    );
  });
});
