import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitRanges } from '../../src/chunking.js';
import { latencySchedule } from '../../src/plan/latency.js';
import type { PipelineShape } from '../../src/plan/schedules.js';
import type { Op } from '../../src/plan/types.js';
import { configBuffer } from '../helpers/config-buffer.js';

// The latency mode on a hand-made shape: when the urgent kernel is launched, which events and probes time it, and
// which streams get which priority.

const shape = (over: Partial<PipelineShape> = {}): PipelineShape => ({
  device: 0,
  buffers: [configBuffer('x', 'in'), configBuffer('z', 'in'), configBuffer('y', 'out')],
  kernels: ['k'],
  elements: 64,
  streamKind: 'non-blocking',
  gated: false,
  ...over,
});
const urgent = { kernel: 'urgent', elements: 16, priority: { level: 'high' as const, where: '/cfg/l.yaml:8:1' } };
const pipeline = { level: -1, where: '/cfg/l.yaml:9:3' };

const show = (ops: readonly Op[]) =>
  ops.map((o) => {
    switch (o.kind) {
      case 'copy':
        return `${o.direction}:${o.buffer}${o.chunk}@${o.stream}`;
      case 'kernel':
        return `${o.kernel}${o.chunk ?? ''}@${o.stream}`;
      case 'record':
        return `record ${o.event}@${o.stream}`;
      case 'wait':
        return `wait ${o.event}@${o.stream}`;
      default:
        return o.kind;
    }
  });

describe('the latency mode', () => {
  it("launches the urgent kernel once a chunk's last load is issued, timed by a pair of events around it", () => {
    const s = latencySchedule(shape(), splitRanges(64, 2), 2, 'depth-first', urgent, pipeline, true);
    assert.deepEqual(show(s.body).slice(0, 10), [
      'h2d:x0@s0',
      'h2d:z0@s0',
      'record urgent:ready:0@s0',
      'wait urgent:ready:0@urgent',
      'record urgent:0:begin@urgent',
      'urgent@urgent',
      'record urgent:0:end@urgent',
      'k0@s0',
      'd2h:y0@s0',
      'h2d:x1@s1',
    ]);
    assert.deepEqual(
      s.body.filter((o) => o.kind === 'kernel' && o.kernel === 'urgent'),
      [0, 1].map(() => ({
        kind: 'kernel',
        stream: 'urgent',
        kernel: 'urgent',
        chunk: null,
        first: 0,
        count: 16,
        deviceFirst: 0,
      })),
    );
    assert.deepEqual(s.probes, [
      { begin: 'urgent:0:begin', end: 'urgent:0:end' },
      { begin: 'urgent:1:begin', end: 'urgent:1:end' },
    ]);
    assert.equal(s.verify, true, 'the pipeline beside the urgent stream still writes every output');
    assert.deepEqual(s.events, [
      { id: 'start', timing: true },
      { id: 'end', timing: true },
      { id: 'urgent:ready:0', timing: false },
      { id: 'urgent:0:begin', timing: true },
      { id: 'urgent:0:end', timing: true },
      { id: 'urgent:ready:1', timing: false },
      { id: 'urgent:1:begin', timing: true },
      { id: 'urgent:1:end', timing: true },
      { id: 'join:s1', timing: false },
      { id: 'join:urgent', timing: false },
    ]);
  });

  it("keeps the ring's slot events of the layout it is built on", () => {
    const ranges = splitRanges(64, 2);
    const s = latencySchedule(
      shape({ ring: { ring: { slots: 1, slotElements: 32 }, ranges } }),
      ranges,
      2,
      'depth-first',
      urgent,
      null,
      false,
    );
    assert.deepEqual(
      s.events.map((e) => e.id).filter((id) => id.startsWith('slot-free')),
      ['slot-free:0'],
    );
  });

  it("gives the urgent stream and the pipeline's streams their priorities only in the mode with priorities, and says which mode it is", () => {
    const ranges = splitRanges(64, 2);
    const levels = (priorities: boolean, pipelinePriority: typeof pipeline | null) =>
      latencySchedule(shape(), ranges, 2, 'breadth-first', urgent, pipelinePriority, priorities).streams.map(
        (x) => `${x.id}:${x.priority?.level ?? 'default'}`,
      );
    assert.deepEqual(levels(true, pipeline), ['s0:-1', 's1:-1', 'urgent:high']);
    assert.deepEqual(levels(true, null), ['s0:default', 's1:default', 'urgent:high']);
    assert.deepEqual(levels(false, pipeline), ['s0:default', 's1:default', 'urgent:default']);
    const words = (priorities: boolean) =>
      latencySchedule(shape(), ranges, 2, 'breadth-first', urgent, pipeline, priorities).description;
    assert.equal(
      words(true),
      "2 chunks over 2 streams, breadth-first, with urgent on an urgent stream after each chunk's load, with priorities",
    );
    assert.equal(
      words(false),
      "2 chunks over 2 streams, breadth-first, with urgent on an urgent stream after each chunk's load, every stream at the default priority",
    );
  });
});
