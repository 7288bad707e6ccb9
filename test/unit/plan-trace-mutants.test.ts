import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CollectiveGroup, CollectiveOp } from '../../src/kinds/collective/spec.js';
import { isTraceEvent, traceSchedule } from '../../src/plan/trace.js';
import type { Op, Schedule } from '../../src/plan/types.js';

// A traced schedule (src/plan/trace.ts): a timing event before and after every work op on its own stream, and for a
// group of collectives across devices, every call's begin before the group and every end after it (an event recorded
// between grouped calls would land before them on their streams).

const allreduce = (stream: string, chunk: number, group?: CollectiveGroup): CollectiveOp => ({
  kind: 'collective',
  stream,
  label: 'grads',
  chunk,
  first: chunk * 8,
  count: 8,
  deviceFirst: chunk * 8,
  spec: { collective: 'allreduce', buffer: 'g', type: 'float', itemSize: 1, elementBytes: 4 },
  ...(group === undefined ? {} : { group }),
});

const schedule = (body: Op[]): Schedule => ({
  id: 'serial',
  role: { kind: 'serial' },
  device: 0,
  description: 'two devices',
  streams: [
    { id: 'a', kind: 'non-blocking', device: 0 },
    { id: 'b', kind: 'non-blocking', device: 1 },
  ],
  events: [{ id: 'start', timing: true }],
  prologue: [],
  body,
  epilogue: [],
  start: 'start',
  end: 'end',
  verify: false,
  gated: false,
  bytes: { h2d: 0, d2h: 0 },
  ranges: [{ index: 0, first: 0, count: 16 }],
  issue: 'stream',
});

/** The body as short words: `rec a trace:0:begin`, `collective b 1`, `wait a start`. */
const words = (body: readonly Op[]): string[] =>
  body.map((op) =>
    'event' in op
      ? `${op.kind === 'record' ? 'rec' : op.kind} ${op.stream} ${op.event}`
      : `${op.kind} ${op.stream} ${'chunk' in op ? op.chunk : ''}`,
  );

describe('a traced schedule with a group of collectives across devices', () => {
  it("records every call's begin before the group and every end after it, as timing events on the call's device", () => {
    const traced = traceSchedule(
      schedule([allreduce('a', 0, { opens: true, closes: false }), allreduce('b', 0, { opens: false, closes: true })]),
    );
    assert.deepEqual(words(traced.schedule.body), [
      'rec a trace:0:begin',
      'rec b trace:1:begin',
      'collective a 0',
      'collective b 0',
      'rec a trace:0:end',
      'rec b trace:1:end',
    ]);
    assert.deepEqual(
      traced.spans.map((s) => [s.begin, s.end, s.bodyIndex, s.op.stream]),
      [
        ['trace:0:begin', 'trace:0:end', 2, 'a'],
        ['trace:1:begin', 'trace:1:end', 3, 'b'],
      ],
    );
    assert.deepEqual(traced.schedule.events, [
      { id: 'start', timing: true },
      { id: 'trace:0:begin', timing: true },
      { id: 'trace:0:end', timing: true },
      { id: 'trace:1:begin', timing: true, device: 1 },
      { id: 'trace:1:end', timing: true, device: 1 },
    ]);
  });

  it('times an ungrouped op after a closed group on its own, and a second group apart from the first', () => {
    const traced = traceSchedule(
      schedule([
        allreduce('a', 0, { opens: true, closes: false }),
        allreduce('b', 0, { opens: false, closes: true }),
        { kind: 'wait', stream: 'a', event: 'start' },
        allreduce('a', 1),
        allreduce('a', 2, { opens: true, closes: false }),
        allreduce('b', 2, { opens: false, closes: true }),
      ]),
    );
    assert.deepEqual(words(traced.schedule.body), [
      'rec a trace:0:begin',
      'rec b trace:1:begin',
      'collective a 0',
      'collective b 0',
      'rec a trace:0:end',
      'rec b trace:1:end',
      'wait a start',
      'rec a trace:3:begin',
      'collective a 1',
      'rec a trace:3:end',
      'rec a trace:4:begin',
      'rec b trace:5:begin',
      'collective a 2',
      'collective b 2',
      'rec a trace:4:end',
      'rec b trace:5:end',
    ]);
    assert.deepEqual(
      traced.spans.map((s) => s.bodyIndex),
      [2, 3, 8, 12, 13],
    );
  });

  it('holds a call of a group that does not close until the call that closes it, even one marked neither', () => {
    const traced = traceSchedule(
      schedule([
        allreduce('a', 0, { opens: true, closes: false }),
        allreduce('b', 0, { opens: false, closes: false }),
        allreduce('a', 1, { opens: false, closes: true }),
      ]),
    );
    assert.deepEqual(words(traced.schedule.body), [
      'rec a trace:0:begin',
      'rec b trace:1:begin',
      'rec a trace:2:begin',
      'collective a 0',
      'collective b 0',
      'collective a 1',
      'rec a trace:0:end',
      'rec b trace:1:end',
      'rec a trace:2:end',
    ]);
  });

  it('refuses a group that never closes, naming its calls, rather than leave them out of the traced rep', () => {
    const unclosed = schedule([
      allreduce('a', 0, { opens: true, closes: false }),
      allreduce('b', 0, { opens: false, closes: false }),
    ]);
    assert.throws(() => traceSchedule(unclosed), {
      message:
        'serial: a group of collectives never closes (collective on stream a, collective on stream b); ' +
        'the traced rep would leave it out',
    });
  });
});

describe('a trace event', () => {
  it('is one whose id starts with trace:, not one that only contains or ends with it', () => {
    assert.equal(isTraceEvent('trace:3:begin'), true);
    assert.equal(isTraceEvent('start'), false);
    assert.equal(isTraceEvent('probe:trace:'), false);
    assert.equal(isTraceEvent('x-trace:1:end'), false);
  });
});
