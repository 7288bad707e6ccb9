import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan, bandwidthPlan } from '../../src/plan/build.js';
import { splitRanges } from '../../src/chunking.js';
import { traceSchedule } from '../../src/plan/trace.js';
import type { CopyOp } from '../../src/kinds/copy/index.js';
import { type Op, type Plan, type Schedule, scheduleOps } from '../../src/plan/types.js';
import { renderPlan } from '../../src/report/plan.js';
import { gridSize } from '../../src/exec/kernel-launch.js';
import type { ModeRole } from '../../src/vocabulary.js';

function plan(elements: number, pipeline: string, extraBuffers = ''): Plan {
  const text =
    `buffers:\n  x: { type: float32, count: ${elements}, role: in }\n  y: { type: float32, count: ${elements}, role: out }\n${extraBuffers}` +
    `kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n` +
    `pipeline: ${pipeline}\n`;
  const { config, locate } = parseConfigText(text, '/tmp/p.yaml');
  return buildPlan(config, resolveKernels(config, locate));
}

const schedule = (p: Plan, match: (role: ModeRole) => boolean): Schedule => {
  const s = p.schedules.find((x) => match(x.role));
  assert.ok(s, 'no schedule with that role');
  return s;
};
const overlapped = (p: Plan, order = 'depth-first') =>
  schedule(p, (r) => r.kind === 'overlapped' && r.layout.order === order);
const link = (p: Plan) => schedule(p, (r) => r.kind === 'link');
const copies = (s: Schedule) => s.body.filter((o): o is CopyOp => o.kind === 'copy');

/** Each byte of each buffer, per direction, is covered exactly once by the copies. */
function assertEveryByteOnce(s: Schedule, bufferBytes: Record<string, number>, direction: 'h2d' | 'd2h'): void {
  for (const [name, bytes] of Object.entries(bufferBytes)) {
    const ranges = copies(s)
      .filter((c) => c.buffer === name && c.direction === direction)
      .map((c) => [c.hostOffset, c.hostOffset + c.bytes] as const)
      .sort((a, b) => a[0] - b[0]);
    let cursor = 0;
    for (const [start, end] of ranges) {
      assert.equal(start, cursor, `${s.id}: ${direction} of ${name} has a gap or overlap at byte ${cursor}`);
      cursor = end;
    }
    assert.equal(cursor, bytes, `${s.id}: ${direction} of ${name} covers ${cursor} of ${bytes} bytes`);
  }
}

describe('chunk ranges', () => {
  it('cuts equal chunks with a shorter last one, never rounding elements away', () => {
    assert.deepEqual(
      splitRanges(10, 4).map((r) => r.count),
      [3, 3, 3, 1],
    );
    assert.deepEqual(
      splitRanges(1000, 3).map((r) => [r.first, r.count]),
      [
        [0, 334],
        [334, 334],
        [668, 332],
      ],
    );
    assert.deepEqual(
      splitRanges(8, 8).map((r) => r.count),
      [1, 1, 1, 1, 1, 1, 1, 1],
    );
  });

  it('makes fewer chunks when equal sizes cannot fill the count', () => {
    assert.deepEqual(
      splitRanges(9, 4).map((r) => r.count),
      [3, 3, 3],
    );
  });

  it('starts every chunk at a multiple of align', () => {
    const ranges = splitRanges(10 * 4096 + 100, 4, 4096);
    for (const r of ranges) assert.equal(r.first % 4096, 0);
    assert.equal(
      ranges.reduce((s, r) => s + r.count, 0),
      10 * 4096 + 100,
    );
  });
});

describe('the planner', () => {
  it('copies every byte of every buffer exactly once per direction, in every mode', () => {
    for (const order of ['depth-first', 'breadth-first']) {
      const p = plan(1003, `{ chunks: 7, streams: 3, order: ${order} }`);
      for (const s of p.schedules.filter((x) => x.role.kind !== 'link' && x.role.kind !== 'op-cost')) {
        if (s.bytes.h2d) assertEveryByteOnce(s, { x: 4012 }, 'h2d');
        if (s.bytes.d2h) assertEveryByteOnce(s, { y: 4012 }, 'd2h');
      }
      assertEveryByteOnce(link(p), { x: 4012 }, 'h2d');
      assertEveryByteOnce(link(p), { y: 4012 }, 'd2h');
    }
  });

  it("keeps each chunk's H2D, kernel and D2H in order on one stream", () => {
    const p = plan(1000, '{ chunks: 5, streams: 2, order: breadth-first }');
    const s = overlapped(p, 'breadth-first');
    for (let chunk = 0; chunk < 5; chunk++) {
      const ops = s.body.filter((o) => 'chunk' in o && o.chunk === chunk);
      assert.deepEqual(
        ops.map((o) => (o.kind === 'copy' ? o.direction : o.kind)),
        ['h2d', 'kernel', 'd2h'],
      );
      assert.equal(new Set(ops.map((o) => o.stream)).size, 1);
      assert.equal(ops[0]?.stream, `s${chunk % 2}`);
    }
  });

  it('issues depth-first chunk by chunk and breadth-first stage by stage', () => {
    const kinds = (order: string) =>
      overlapped(plan(100, `{ chunks: 2, streams: 2, order: ${order} }`), order)
        .body.filter((o) => o.kind === 'copy' || o.kind === 'kernel')
        .map((o) => (o.kind === 'copy' ? o.direction : 'k') + String('chunk' in o ? o.chunk : ''));
    assert.deepEqual(kinds('depth-first'), ['h2d0', 'k0', 'd2h0', 'h2d1', 'k1', 'd2h1']);
    assert.deepEqual(kinds('breadth-first'), ['h2d0', 'h2d1', 'k0', 'k1', 'd2h0', 'd2h1']);
  });

  it('forks every stream from the start event in the prologue and joins them all before the end event in the epilogue', () => {
    const s = overlapped(plan(1000, '{ chunks: 8, streams: 4 }'));
    const ops = scheduleOps(s);
    assert.deepEqual(s.prologue[0], { kind: 'record', stream: 's0', event: 'start' });
    assert.deepEqual(
      s.prologue.slice(1).map((o) => o.kind),
      ['wait', 'wait', 'wait'],
    );
    assert.deepEqual(s.epilogue.at(-1), { kind: 'record', stream: 's0', event: 'end' });
    assert.ok(
      s.body.every((o) => o.kind === 'copy' || o.kind === 'kernel'),
      'the body is the workload alone',
    );
    for (const id of ['s1', 's2', 's3']) {
      const streamOps = ops.filter((o) => o.stream === id);
      assert.deepEqual(streamOps[0], { kind: 'wait', stream: id, event: 'start' });
      assert.deepEqual(streamOps.at(-1), { kind: 'record', stream: id, event: `join:${id}` });
      const waitIndex = ops.findIndex((o) => o.kind === 'wait' && o.event === `join:${id}`);
      assert.ok(waitIndex > ops.indexOf(streamOps.at(-1) as Op) && ops[waitIndex]?.stream === 's0');
    }
    assert.deepEqual(
      s.events.filter((e) => e.timing).map((e) => e.id),
      ['start', 'end'],
    );
  });

  it('uses only as many streams as there are chunks, and says so', () => {
    const p = plan(1000, '{ chunks: 2, streams: 8 }');
    const s = overlapped(p);
    assert.equal(s.streams.length, 2);
    assert.deepEqual(s.role, {
      kind: 'overlapped',
      layout: { chunks: 2, streams: 2, order: 'depth-first', topology: 'chunk-per-stream' },
    });
    assert.match(p.notes.join('\n'), /8 streams asked for, 2 used/);
  });

  it('says when fewer chunks than asked could be made', () => {
    const p = plan(9, '{ chunks: 4, streams: 2 }');
    assert.equal(overlapped(p).ranges.length, 3);
    assert.equal(p.pipeline.requestedChunks, 4);
    assert.match(p.notes.join('\n'), /4 chunks asked for, 3 made/);
  });

  it("adds serial and the model's parts around the overlapped modes, each with a typed role", () => {
    const p = plan(1000, '{ chunks: 4, streams: 2, order: [depth-first, breadth-first] }');
    const layout = (order: string) => ({ chunks: 4, streams: 2, order, topology: 'chunk-per-stream' });
    assert.deepEqual(
      p.schedules.map((s) => s.role),
      [
        { kind: 'serial' },
        { kind: 'overlapped', layout: layout('depth-first') },
        { kind: 'overlapped', layout: layout('breadth-first') },
        { kind: 'stage', stage: 'h2d' },
        { kind: 'stage', stage: 'kernel', kernel: 'scale' },
        { kind: 'stage', stage: 'd2h' },
        { kind: 'kernels-chunked', layout: layout('depth-first') },
        { kind: 'link', copiesPerDirection: 2, streamsPerDirection: 2 },
        { kind: 'op-cost', op: 'launch' },
        { kind: 'op-cost', op: 'h2d' },
        { kind: 'op-cost', op: 'd2h' },
        { kind: 'issue-cost', op: 'record-timing' },
        { kind: 'issue-cost', op: 'record-untimed' },
        { kind: 'issue-cost', op: 'wait' },
      ],
    );
    assert.equal(new Set(p.schedules.map((s) => s.id)).size, 14, 'every mode has its own id');
    assert.deepEqual(
      p.schedules.filter((s) => s.verify).map((s) => s.role.kind),
      ['serial', 'overlapped', 'overlapped'],
    );
    const serial = schedule(p, (r) => r.kind === 'serial');
    assert.deepEqual(serial.bytes, { h2d: 4000, d2h: 4000 });
    assert.equal(serial.streams.length, 1);
  });

  it('never copies scratch buffers', () => {
    const p = plan(1000, '{ chunks: 4, streams: 2 }', '  tmp: { type: float32, count: 1000, role: scratch }\n');
    for (const s of p.schedules) assert.ok(copies(s).every((c) => c.buffer !== 'tmp'));
  });

  it('measures the link at its best: pieces of about 8 MiB, at least two and at most 16 a direction, two streams per direction', () => {
    const tiny = link(plan(1000, '{ chunks: 5, streams: 2 }'));
    assert.equal(copies(tiny).filter((c) => c.direction === 'h2d').length, 2);
    assert.deepEqual(
      tiny.streams.map((s) => s.id),
      ['s0', 's1', 's2', 's3'],
    );
    const pieces = (elements: number) =>
      copies(link(plan(elements, '{ chunks: 4, streams: 2 }'))).filter((c) => c.direction === 'h2d').length;
    assert.equal(pieces(12 * 2 ** 20), 6, '48 MiB in 8 MiB pieces');
    assert.equal(pieces(256 * 2 ** 20), 16, '1 GiB: at most 16');
  });

  it('measures small ops behind the gate: empty launches and 4 KiB copies each way', () => {
    const p = plan(4096, '{ chunks: 4, streams: 2 }');
    const opCost = (op: string) => schedule(p, (r) => r.kind === 'op-cost' && r.op === op);
    for (const op of ['launch', 'h2d', 'd2h']) {
      assert.equal(opCost(op).gated, true);
      assert.deepEqual(opCost(op).prologue[0], { kind: 'gate', stream: 's0' });
      assert.equal(opCost(op).body.length, 200);
    }
    assert.ok(opCost('launch').body.every((o) => o.kind === 'empty'));
    assert.ok(copies(opCost('d2h')).every((c) => c.direction === 'd2h' && c.bytes === 4096 && c.buffer === 'y'));
  });

  it("runs the kernels chunked over the layout's streams with no copies, for the model's kernel term", () => {
    const chunked = schedule(plan(1000, '{ chunks: 4, streams: 2 }'), (r) => r.kind === 'kernels-chunked');
    assert.deepEqual(
      chunked.body.map((o) => [o.kind, o.stream]),
      [
        ['kernel', 's0'],
        ['kernel', 's1'],
        ['kernel', 's0'],
        ['kernel', 's1'],
      ],
    );
  });

  it('plans bandwidth copies with the link mode split into 16 copies over 2 streams per direction', () => {
    const p = bandwidthPlan(1 << 20, 'pinned', 0, true);
    const both = link(p);
    assert.equal(copies(both).length, 32);
    assert.deepEqual(
      [
        ...new Set(
          copies(both)
            .filter((c) => c.direction === 'h2d')
            .map((c) => c.stream),
        ),
      ],
      ['s0', 's1'],
    );
    assert.deepEqual(
      [
        ...new Set(
          copies(both)
            .filter((c) => c.direction === 'd2h')
            .map((c) => c.stream),
        ),
      ],
      ['s2', 's3'],
    );
    assert.deepEqual(
      bandwidthPlan(1024, 'pageable', 0, false).schedules.map((s) => s.role),
      [
        { kind: 'stage', stage: 'h2d' },
        { kind: 'stage', stage: 'd2h' },
      ],
    );
  });

  it("prints a dry run as a summary: each mode's op counts, streams and bytes, and where --ops lists the ops", () => {
    const text = renderPlan(plan(1000, '{ chunks: 4, streams: 2 }'), {
      kernels: '1 kernel source compiled for sm_90 (--arch) with NVRTC 12.8',
    });
    assert.match(text, /layout: 4 chunks of 250 elements, 2 streams, depth-first/);
    assert.match(text, /^  1 kernel source compiled for sm_90 \(--arch\) with NVRTC 12\.8$/m);
    assert.match(
      text,
      /^mode overlapped:4x2:depth-first:chunk-per-stream: 4 chunks over 2 streams, depth-first; 17 ops \(8 copies, 4 kernel launches, 5 event records and waits\) on 2 streams; H2D 3\.91 KiB, D2H 3\.91 KiB; its outputs will be verified$/m,
    );
    assert.match(text, /stream s1 \(non-blocking\): chunks 1, 3; H2D 1.95 KiB, 2 kernel launches, D2H 1.95 KiB/);
    assert.doesNotMatch(text, /H2D of "x", chunk 1 of 4/);
    assert.match(text, /\nEvery op of every mode, in issue order: --ops\.$/);
  });

  it('prints every op with its bytes with --ops', () => {
    const text = renderPlan(plan(1000, '{ chunks: 4, streams: 2 }'), { ops: true });
    assert.match(text, /s1 +H2D of "x", chunk 1 of 4 \(1000 B\)/);
    assert.match(text, /s1 +kernel scale, chunk 1 of 4 \(elements 250 to 499\)/);
    assert.doesNotMatch(text, /--ops/);
  });

  it("keeps a stream's line short when it has thousands of chunks", () => {
    const text = renderPlan(plan(32_000, '{ chunks: 16000, streams: 4 }'));
    assert.match(
      text,
      /^  stream s1 \(non-blocking\): 4000 chunks: 1, 5, 9, …, 15997; H2D 31\.25 KiB, 4000 kernel launches, D2H 31\.25 KiB$/m,
    );
    assert.ok(text.length < 5000, `${text.length} characters`);
  });
});

describe('traced schedules', () => {
  it('record a timing event right before and after every work op, on its own stream, and nothing else changes', () => {
    const s = overlapped(plan(1000, '{ chunks: 4, streams: 2 }'));
    const { schedule: traced, spans } = traceSchedule(s);
    assert.equal(spans.length, s.body.length);
    assert.deepEqual(
      traced.body.filter((o) => o.kind !== 'record'),
      s.body,
    );
    for (const span of spans) {
      assert.deepEqual(traced.body[span.bodyIndex], span.op);
      assert.deepEqual(traced.body[span.bodyIndex - 1], { kind: 'record', stream: span.op.stream, event: span.begin });
      assert.deepEqual(traced.body[span.bodyIndex + 1], { kind: 'record', stream: span.op.stream, event: span.end });
    }
    const timing = new Set(traced.events.filter((e) => e.timing).map((e) => e.id));
    assert.ok(spans.every((sp) => timing.has(sp.begin) && timing.has(sp.end)));
    assert.deepEqual(traced.prologue, s.prologue);
    assert.deepEqual(traced.epilogue, s.epilogue);
    assert.notEqual(traced.id, s.id);
  });
});

describe('launch grids', () => {
  const h100 = { multiprocessors: 132, maxThreadsPerMultiprocessor: 2048 };
  it('fills the GPU once for grid-stride kernels, covers every element otherwise, or takes the number given', () => {
    assert.equal(gridSize({ grid: 'auto', block: 256 }, 64 << 20, h100), 132 * 8);
    assert.equal(gridSize({ grid: 'auto', block: 256 }, 1000, h100), 4);
    assert.equal(gridSize({ grid: 'cover', block: 256 }, 1001, h100), 4);
    assert.equal(gridSize({ grid: 7, block: 256 }, 1 << 20, h100), 7);
  });
});
