import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wholeRange } from '../../src/chunking.js';
import { eventCostSchedules, issuedOpCount, OVERHEAD_ELEMENTS, overheadPlan } from '../../src/plan/overhead.js';
import type { PlanKernel, Schedule } from '../../src/plan/types.js';

// The plan of `cuda-pipe overhead` and the event-cost modes every run measures beside the pipeline.

const kernel: PlanKernel = {
  label: 'tiny',
  entry: 'bump',
  sourcePath: '/k/tiny.cu',
  block: 256,
  grid: 'cover',
  args: [],
};

describe('the host-overhead plan', () => {
  const p = overheadPlan(kernel, 3, 2);

  it('launches the kernel and makes 4-byte H2D copies from a ramp of pinned uint32s, on the device asked for', () => {
    const [launch, copy] = p.schedules as [Schedule, Schedule];
    assert.deepEqual(
      launch.body,
      [0, 1, 2].map(() => ({
        kind: 'kernel',
        stream: 's0',
        kernel: 'tiny',
        chunk: null,
        first: 0,
        count: OVERHEAD_ELEMENTS,
        deviceFirst: 0,
      })),
    );
    assert.deepEqual(
      copy.body,
      [0, 1, 2].map(() => ({
        kind: 'copy',
        stream: 's0',
        direction: 'h2d',
        buffer: 'src',
        hostOffset: 0,
        deviceOffset: 0,
        bytes: 4,
        chunk: null,
      })),
    );
    assert.deepEqual(
      p.buffers.map((b) => [b.name, b.role, b.type, b.bytes, b.init, b.hostMemory]),
      [
        ['src', 'in', 'uint32', 1024, { kind: 'ramp', start: 1, step: 1 }, 'pinned'],
        ['dst', 'out', 'uint32', 1024, { kind: 'ramp', start: 1, step: 1 }, 'pinned'],
      ],
    );
    assert.deepEqual(
      p.schedules.map((s) => [s.device, s.gated, s.verify, s.ranges]),
      p.schedules.map(() => [2, false, false, [wholeRange(OVERHEAD_ELEMENTS)]]),
    );
    assert.deepEqual([launch.description, copy.description], ['3 launches of tiny', '3 4-byte H2D copies']);
  });

  it('is a plan of one device with nothing to note, no ring, no host stage', () => {
    assert.deepEqual(
      [p.name, p.devices, p.elements, p.kernels, p.notes, p.host, p.placements],
      ['host-overhead', [2], OVERHEAD_ELEMENTS, [kernel], [], null, []],
    );
    assert.deepEqual(p.pipeline, { elements: OVERHEAD_ELEMENTS, align: 1, requestedChunks: 1, requestedStreams: 1 });
    assert.deepEqual(p.device, { elements: OVERHEAD_ELEMENTS, ring: null, budgetBytes: null });
  });
});

describe('the event-cost modes', () => {
  const [timing, untimed, wait] = eventCostSchedules(1, 4, wholeRange(64)) as [Schedule, Schedule, Schedule];

  it('records one event with timing, then one without, the batch over, on one stream', () => {
    assert.deepEqual(
      timing.body,
      [0, 1, 2, 3].map(() => ({ kind: 'record', stream: 's0', event: 'probe-timing' })),
    );
    assert.deepEqual(
      untimed.body,
      [0, 1, 2, 3].map(() => ({ kind: 'record', stream: 's0', event: 'probe-untimed' })),
    );
    assert.deepEqual(
      [timing.streams, untimed.streams],
      [[{ id: 's0', kind: 'non-blocking', device: 1 }], [{ id: 's0', kind: 'non-blocking', device: 1 }]],
    );
    assert.deepEqual(
      [timing.description, untimed.description],
      ['4 records of an event with timing', '4 records of an event created with cudaEventDisableTiming'],
    );
  });

  it('waits the batch over on an event a second stream recorded once', () => {
    assert.deepEqual(wait.body, [
      { kind: 'record', stream: 's1', event: 'other' },
      ...[0, 1, 2, 3].map(() => ({ kind: 'wait', stream: 's0', event: 'other' })),
    ]);
    assert.deepEqual(
      wait.streams.map((s) => s.id),
      ['s0', 's1'],
    );
    assert.deepEqual(
      wait.events.filter((e) => e.id === 'other'),
      [{ id: 'other', timing: false }],
    );
    assert.equal(wait.description, '4 cudaStreamWaitEvent on an event of another stream');
    for (const s of [timing, untimed, wait])
      assert.deepEqual([s.device, s.gated, s.verify, s.ranges], [1, false, false, [wholeRange(64)]]);
  });

  it('counts the timed ops of each mode by kind, and none for a mode that is not an issue cost', () => {
    assert.deepEqual([timing, untimed, wait].map(issuedOpCount), [4, 4, 4]);
    const mixed: Schedule = {
      ...wait,
      role: { kind: 'issue-cost', op: 'copy' },
      body: [...(overheadPlan(kernel, 2, 0).schedules[1]?.body ?? []), ...wait.body],
    };
    assert.equal(issuedOpCount(mixed), 2);
    assert.equal(
      issuedOpCount({
        ...mixed,
        role: { kind: 'issue-cost', op: 'launch' },
        body: [...(overheadPlan(kernel, 2, 0).schedules[0]?.body ?? []), ...wait.body],
      }),
      2,
    );
    assert.equal(issuedOpCount({ ...wait, role: { kind: 'serial' } }), 0);
  });
});
