import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRingReuse } from '../../src/plan/ring.js';
import { traceSchedule } from '../../src/plan/trace.js';
import { overlappedSchedule, type PipelineShape } from '../../src/plan/schedules.js';
import { splitRanges } from '../../src/chunking.js';
import type { Op, Schedule } from '../../src/plan/types.js';
import { configBuffer } from '../helpers/config-buffer.js';
import { showOps as show } from '../helpers/show-ops.js';

// withRingReuse on hand-written bodies: where the slot-free record and wait go, and when none is needed; and the
// traced copy of a schedule.

const h2d = (chunk: number, stream: string): Op => ({
  kind: 'copy',
  stream,
  direction: 'h2d',
  buffer: 'x',
  hostOffset: 0,
  deviceOffset: 0,
  bytes: 4,
  chunk,
});
const d2h = (chunk: number, stream: string): Op => ({
  kind: 'copy',
  stream,
  direction: 'd2h',
  buffer: 'y',
  hostOffset: 0,
  deviceOffset: 0,
  bytes: 4,
  chunk,
});
const kernel = (chunk: number, stream: string): Op => ({
  kind: 'kernel',
  stream,
  kernel: 'k',
  chunk,
  first: 0,
  count: 1,
  deviceFirst: 0,
});
const host = (chunk: number, stream: string): Op => ({ kind: 'host', stream, name: 'checksum', chunk });

describe('reusing a ring of device slots', () => {
  it('needs no event where the old and new chunk of a slot share a stream: stream order already holds', () => {
    const { body, events } = withRingReuse([h2d(0, 's0'), d2h(0, 's0'), h2d(1, 's0'), d2h(1, 's0')], 1);
    assert.deepEqual(show(body), ['h2d0@s0', 'd2h0@s0', 'h2d1@s0', 'd2h1@s0']);
    assert.deepEqual(events, []);
  });

  it("records an untimed slot-free event after the old chunk's last device op and waits on it before the new chunk's first", () => {
    const { body, events } = withRingReuse(
      [h2d(0, 's0'), d2h(0, 's0'), h2d(1, 's1'), d2h(1, 's1'), h2d(2, 's0'), d2h(2, 's0')],
      1,
    );
    assert.deepEqual(show(body), [
      'h2d0@s0',
      'd2h0@s0',
      'record slot-free:0@s0',
      'wait slot-free:0@s1',
      'h2d1@s1',
      'd2h1@s1',
      'record slot-free:1@s1',
      'wait slot-free:1@s0',
      'h2d2@s0',
      'd2h2@s0',
    ]);
    assert.deepEqual(events, [
      { id: 'slot-free:0', timing: false },
      { id: 'slot-free:1', timing: false },
    ]);
  });

  it('frees a slot after its D2H, not after the host stage that reads host memory', () => {
    const { body } = withRingReuse(
      [h2d(0, 's0'), kernel(0, 's0'), d2h(0, 's0'), host(0, 's0'), h2d(1, 's1'), d2h(1, 's1')],
      1,
    );
    assert.deepEqual(show(body), [
      'h2d0@s0',
      'k0@s0',
      'd2h0@s0',
      'record slot-free:0@s0',
      'host0@s0',
      'wait slot-free:0@s1',
      'h2d1@s1',
      'd2h1@s1',
    ]);
  });

  it('counts a kernel as a device op: a chunk with no loads waits before its kernel, and a chunk with no stores frees its slot after its kernel', () => {
    const produced = withRingReuse([kernel(0, 's0'), d2h(0, 's0'), kernel(1, 's1'), d2h(1, 's1')], 1);
    assert.deepEqual(show(produced.body), [
      'k0@s0',
      'd2h0@s0',
      'record slot-free:0@s0',
      'wait slot-free:0@s1',
      'k1@s1',
      'd2h1@s1',
    ]);
    const consumed = withRingReuse([h2d(0, 's0'), kernel(0, 's0'), h2d(1, 's1'), kernel(1, 's1')], 1);
    assert.deepEqual(show(consumed.body), [
      'h2d0@s0',
      'k0@s0',
      'record slot-free:0@s0',
      'wait slot-free:0@s1',
      'h2d1@s1',
      'k1@s1',
    ]);
  });

  it('refuses a body that issues a chunk before the old chunk of its slot has left it', () => {
    assert.throws(() => withRingReuse([h2d(0, 's0'), h2d(1, 's1'), d2h(0, 's0'), d2h(1, 's1')], 1), {
      name: 'RangeError',
      message: 'chunk 1 is issued before chunk 0 has left its slot: a ring of device slots needs depth-first issue',
    });
  });
});

describe('a traced schedule', () => {
  const shape: PipelineShape = {
    device: 2,
    buffers: [configBuffer('x', 'in'), configBuffer('y', 'out')],
    kernels: ['k'],
    elements: 64,
    streamKind: 'non-blocking',
    gated: false,
  };
  const schedule = (): Schedule => overlappedSchedule(shape, splitRanges(64, 2), 2, 'depth-first');

  it("keeps the schedule's own events and adds a timing pair per work op, with no device named on a one-device schedule", () => {
    const s = schedule();
    const traced = traceSchedule(s).schedule;
    assert.deepEqual(traced.events.slice(0, s.events.length), s.events);
    assert.deepEqual(traced.events.slice(s.events.length, s.events.length + 2), [
      { id: 'trace:0:begin', timing: true },
      { id: 'trace:0:end', timing: true },
    ]);
    assert.equal(traced.events.length, s.events.length + 2 * 6);
    assert.equal(traced.id, `${s.id}:traced`);
  });

  it("names the device of an op on another device's stream, and only there", () => {
    const s = schedule();
    const spanning: Schedule = { ...s, streams: s.streams.map((x) => (x.id === 's1' ? { ...x, device: 3 } : x)) };
    const added = traceSchedule(spanning).schedule.events.slice(s.events.length);
    assert.deepEqual(
      added.filter((e) => e.device !== undefined).map((e) => e.id),
      ['trace:3:begin', 'trace:3:end', 'trace:4:begin', 'trace:4:end', 'trace:5:begin', 'trace:5:end'],
    );
    assert.deepEqual(
      added.map((e) => e.device),
      [undefined, undefined, undefined, undefined, undefined, undefined, 3, 3, 3, 3, 3, 3],
    );
  });
});
