import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitRanges } from '../../src/chunking.js';
import {
  asGraph,
  deviceFirst,
  loadOps,
  loads,
  overlappedSchedule,
  type PipelineShape,
  serialSchedule,
  stageSchedules,
  stores,
  timedSchedule,
} from '../../src/plan/schedules.js';
import {
  bidirectionalSchedule,
  kernelsChunkedSchedule,
  linkRanges,
  opCostSchedule,
  SMALL_COPY_BYTES,
} from '../../src/plan/part-schedules.js';
import type { Op, Schedule } from '../../src/plan/types.js';
import { configBuffer } from '../helpers/config-buffer.js';

// The schedule builders on small hand-made shapes: where each op lands, what each mode is called, which modes exist.

const MiB = 2 ** 20;
const shape = (over: Partial<PipelineShape> = {}): PipelineShape => ({
  device: 0,
  buffers: [configBuffer('x', 'in'), configBuffer('y', 'out')],
  kernels: ['k'],
  elements: 64,
  streamKind: 'non-blocking',
  gated: false,
  ...over,
});
const ringed = (over: Partial<PipelineShape> = {}): PipelineShape =>
  shape({ ring: { ring: { slots: 2, slotElements: 16 }, ranges: splitRanges(64, 4) }, ...over });

const chunks = (s: Schedule) => s.body.flatMap((o) => ('chunk' in o ? [o.chunk] : []));
const where = (ops: readonly Op[]) =>
  ops.flatMap((o) =>
    o.kind === 'copy'
      ? [`${o.direction}${o.chunk}@${o.stream}`]
      : o.kind === 'kernel'
        ? [`k${o.chunk}@${o.stream}`]
        : [],
  );

describe('the timed region', () => {
  it('refuses a schedule without a stream', () => {
    assert.throws(
      () =>
        timedSchedule({
          role: { kind: 'serial' },
          device: 0,
          description: '',
          streams: [],
          body: [],
          ranges: [],
          verify: false,
          gated: false,
        }),
      {
        name: 'RangeError',
        message: 'schedule serial needs at least one stream',
      },
    );
  });

  it('has only its start, end and joins as events when the body brings none', () => {
    const s = timedSchedule({
      role: { kind: 'serial' },
      device: 0,
      description: '',
      streams: [
        { id: 'a', kind: 'non-blocking', device: 0 },
        { id: 'b', kind: 'non-blocking', device: 0 },
      ],
      body: [],
      ranges: [],
      verify: false,
      gated: false,
    });
    assert.deepEqual(s.events, [
      { id: 'start', timing: true },
      { id: 'end', timing: true },
      { id: 'join:b', timing: false },
    ]);
    assert.equal(s.issue, 'stream');
  });
});

describe('where a chunk lives on the device', () => {
  it("is its slot of the ring under a ring, else its own range less the device's base", () => {
    assert.equal(
      deviceFirst(
        { ring: { ring: { slots: 3, slotElements: 100 }, ranges: [] } },
        { index: 4, first: 400, count: 100 },
      ),
      100,
    );
    assert.equal(deviceFirst({ base: 1000 }, { index: 4, first: 1400, count: 100 }), 400);
    assert.equal(deviceFirst({}, { index: 4, first: 1400, count: 100 }), 1400);
  });

  it("puts a copy's device offset at the chunk's device element times the element size", () => {
    const [copy] = loadOps(
      shape({ buffers: [configBuffer('x', 'in', 64, 8)], base: 16 }),
      { index: 1, first: 48, count: 16 },
      's0',
      1,
    );
    assert.deepEqual(copy, {
      kind: 'copy',
      stream: 's0',
      direction: 'h2d',
      buffer: 'x',
      hostOffset: 384,
      deviceOffset: 256,
      bytes: 128,
      chunk: 1,
    });
  });

  it('loads in and inout buffers and stores out and inout buffers, never scratch', () => {
    const buffers = [
      configBuffer('a', 'in'),
      configBuffer('b', 'inout'),
      configBuffer('c', 'out'),
      configBuffer('d', 'scratch'),
    ];
    assert.deepEqual(
      loads(buffers).map((b) => b.name),
      ['a', 'b'],
    );
    assert.deepEqual(
      stores(buffers).map((b) => b.name),
      ['b', 'c'],
    );
  });
});

describe('modes under a ring of device slots', () => {
  it('walks the serial baseline and each stage through the ring chunk by chunk', () => {
    assert.deepEqual(chunks(serialSchedule(ringed())), [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
    assert.deepEqual(
      stageSchedules(ringed()).map((s) => [s.id, chunks(s)]),
      [
        ['h2d', [0, 1, 2, 3]],
        ['kernel:k', [0, 1, 2, 3]],
        ['d2h', [0, 1, 2, 3]],
      ],
    );
  });

  it("names the slots in an overlapped layout's role", () => {
    const s = overlappedSchedule(ringed(), splitRanges(64, 4), 2, 'depth-first');
    assert.equal(s.id, 'overlapped:4x2:depth-first:chunk-per-stream:slots2');
    assert.equal(s.description, '4 chunks over 2 streams, depth-first, chunked through 2 device slots');
  });
});

describe('one op of a chunk on a default stream', () => {
  const ranges = splitRanges(64, 4);

  it("moves only the chunk's loads for an h2d move, and waits for them on the chunk's stream", () => {
    const s = overlappedSchedule(shape(), ranges, 2, 'depth-first', { chunk: 1, op: 'h2d', stream: 'per-thread' });
    assert.deepEqual(where(s.body), [
      'h2d0@s0',
      'k0@s0',
      'd2h0@s0',
      'h2d1@per-thread',
      'k1@s1',
      'd2h1@s1',
      'h2d2@s0',
      'k2@s0',
      'd2h2@s0',
      'h2d3@s1',
      'k3@s1',
      'd2h3@s1',
    ]);
    assert.equal(s.id, 'overlapped:4x2:depth-first:chunk-per-stream:per-thread-h2d1');
    assert.equal(
      s.description,
      "4 chunks over 2 streams, depth-first, chunk 1's loads on the per-thread default stream",
    );
    assert.deepEqual(
      s.events.slice(2).filter((e) => !e.id.startsWith('join:')),
      [{ id: 'per-thread:loaded', timing: false }],
    );
    assert.deepEqual(s.streams.at(-1), { id: 'per-thread', kind: 'per-thread-default', device: 0 });
  });

  it("moves only the chunk's kernels for a kernel move, between a loaded and a computed event", () => {
    const s = overlappedSchedule(shape(), ranges, 2, 'depth-first', { chunk: 2, op: 'kernel', stream: 'legacy' });
    assert.deepEqual(where(s.body), [
      'h2d0@s0',
      'k0@s0',
      'd2h0@s0',
      'h2d1@s1',
      'k1@s1',
      'd2h1@s1',
      'h2d2@s0',
      'k2@legacy',
      'd2h2@s0',
      'h2d3@s1',
      'k3@s1',
      'd2h3@s1',
    ]);
    assert.equal(s.id, 'overlapped:4x2:depth-first:chunk-per-stream:legacy-kernel2');
    assert.equal(s.description, "4 chunks over 2 streams, depth-first, chunk 2's kernel on the legacy default stream");
    assert.deepEqual(
      s.events.slice(2).filter((e) => !e.id.startsWith('join:')),
      [
        { id: 'legacy:loaded', timing: false },
        { id: 'legacy:computed', timing: false },
      ],
    );
  });

  it('adds no event, stream or words when nothing is moved', () => {
    const s = overlappedSchedule(shape(), ranges, 2, 'breadth-first');
    assert.deepEqual(s.events, [
      { id: 'start', timing: true },
      { id: 'end', timing: true },
      { id: 'join:s1', timing: false },
    ]);
    assert.deepEqual(
      s.streams.map((x) => x.id),
      ['s0', 's1'],
    );
    assert.equal(s.description, '4 chunks over 2 streams, breadth-first');
  });
});

describe('graph replays', () => {
  it('replays only overlapped layouts and their kernels chunked, and says which mode it refused', () => {
    const kernels = asGraph(kernelsChunkedSchedule(shape(), splitRanges(64, 4), 2, 'depth-first'));
    assert.equal(kernels.id, 'kernels-chunked:4x2:depth-first:chunk-per-stream:graph');
    assert.throws(() => asGraph(serialSchedule(shape())), {
      message: 'only overlapped layouts and their kernels are replayed as graphs, not serial',
    });
  });
});

describe('each stage alone', () => {
  it('times the kernel stage over every element and leaves out a copy stage with nothing to copy', () => {
    const stages = stageSchedules(shape({ buffers: [configBuffer('y', 'out')] }));
    assert.deepEqual(
      stages.map((s) => s.id),
      ['kernel:k', 'd2h'],
    );
    assert.deepEqual(stages[0]?.body, [
      { kind: 'kernel', stream: 's0', kernel: 'k', chunk: null, first: 0, count: 64, deviceFirst: 0 },
    ]);
    assert.deepEqual(
      stageSchedules(shape({ buffers: [configBuffer('x', 'in')] })).map((s) => s.id),
      ['h2d', 'kernel:k'],
    );
  });
});

describe('the link and small-op modes', () => {
  it('has no link mode when data moves one way only', () => {
    const ranges = splitRanges(64, 2);
    assert.equal(bidirectionalSchedule([configBuffer('x', 'in')], ranges, 0, false), null);
    assert.equal(bidirectionalSchedule([configBuffer('y', 'out')], ranges, 0, false), null);
    assert.equal(
      bidirectionalSchedule([configBuffer('x', 'in'), configBuffer('y', 'out')], ranges, 0, false)?.id,
      'bidirectional',
    );
  });

  it('copies a small piece the way asked, and launches empty kernels for launches, always gated over the whole range', () => {
    const h2d = opCostSchedule(shape(), 'h2d');
    const d2h = opCostSchedule(shape(), 'd2h');
    const launch = opCostSchedule(shape(), 'launch');
    assert.deepEqual(h2d?.body[0], {
      kind: 'copy',
      stream: 's0',
      direction: 'h2d',
      buffer: 'x',
      hostOffset: 0,
      deviceOffset: 0,
      bytes: 256,
      chunk: null,
    });
    assert.deepEqual(d2h?.body[0], {
      kind: 'copy',
      stream: 's0',
      direction: 'd2h',
      buffer: 'y',
      hostOffset: 0,
      deviceOffset: 0,
      bytes: 256,
      chunk: null,
    });
    assert.deepEqual(launch?.body[0], { kind: 'empty', stream: 's0' });
    assert.deepEqual(
      [h2d?.description, d2h?.description, launch?.description],
      [
        '200 256-byte H2D copies back to back, behind the gate',
        '200 256-byte D2H copies back to back, behind the gate',
        '200 launches of an empty kernel back to back, behind the gate',
      ],
    );
    for (const s of [h2d, d2h, launch])
      assert.deepEqual([s?.gated, s?.ranges], [true, [{ index: 0, first: 0, count: 64 }]]);
    assert.equal(
      opCostSchedule(shape({ buffers: [configBuffer('x', 'in', MiB)] }), 'h2d')?.body.every(
        (o) => o.kind === 'copy' && o.bytes === SMALL_COPY_BYTES,
      ),
      true,
    );
  });

  it('has no small-copy mode for a direction no buffer copies', () => {
    assert.equal(opCostSchedule(shape({ buffers: [configBuffer('y', 'out')] }), 'h2d'), null);
    assert.equal(opCostSchedule(shape({ buffers: [configBuffer('x', 'in')] }), 'd2h'), null);
  });

  it("cuts the link's pieces from the largest buffer that is copied, not from scratch", () => {
    const elements = (64 * MiB) / 4;
    const copied = [configBuffer('x', 'in', elements), configBuffer('y', 'out', elements / 2)];
    assert.equal(linkRanges(copied, elements).length, 8);
    assert.equal(linkRanges([...copied, configBuffer('big', 'scratch', 4 * elements)], elements).length, 8);
    assert.equal(
      linkRanges([configBuffer('y', 'out', elements / 2), configBuffer('x', 'in', elements)], elements).length,
      8,
    );
  });
});
