import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTrace, lanes, renderTrace } from '../../src/report/trace.js';
import type { TimelineOp } from '../../src/result/timeline.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';
import { timelineFixtures } from '../helpers/timeline-fixtures.js';
import { type ParsedTrace, TraceDocumentSchema } from '../helpers/trace-event-format.js';

type Complete = Extract<ParsedTrace['traceEvents'][number], { ph: 'X' }>;

function parse(text: string): ParsedTrace {
  return TraceDocumentSchema.parse(JSON.parse(text));
}
const completes = (trace: ParsedTrace): Complete[] => trace.traceEvents.filter((e): e is Complete => e.ph === 'X');
const threadNames = (trace: ParsedTrace, pid: number): string[] =>
  trace.traceEvents.flatMap((e) => (e.ph === 'M' && e.name === 'thread_name' && e.pid === pid ? [e.args.name] : []));

for (const { name, result } of timelineFixtures()) {
  describe(`Chrome trace of ${name}`, () => {
    const trace = parse(renderTrace(result));
    const reps = result.timeline!.reps;
    const devices = [...new Set(reps.map((r) => r.device))];

    it('is valid Trace Event Format JSON', () => {
      assert.equal(trace.displayTimeUnit, 'ns');
      assert.equal(trace.otherData?.config, result.config.name);
    });

    it('names one process per device after its GPU', () => {
      const processes = trace.traceEvents.flatMap((e) =>
        e.ph === 'M' && e.name === 'process_name' ? [[e.pid, e.args.name]] : [],
      );
      assert.deepEqual(
        processes,
        devices.map((d) => [d + 1, `${result.devices.find((f) => f.index === d)!.name} (GPU ${d})`]),
      );
    });

    it('gives every stream, each copy engine and the SMs a named track', () => {
      for (const d of devices) {
        const names = threadNames(trace, d + 1);
        const streams = new Set(
          reps.filter((r) => r.device === d).flatMap((r) => r.streams.map((s) => `stream ${s.id}`)),
        );
        for (const s of streams) assert.ok(names.includes(s), s);
        for (const engine of ['H2D copy engine', 'D2H copy engine', 'SMs', 'mode'])
          assert.ok(names.includes(engine), engine);
        // Every event lands on a named track.
        const tids = new Set(
          trace.traceEvents
            .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.pid === d + 1)
            .map((e) => e.tid),
        );
        assert.ok(
          completes(trace)
            .filter((e) => e.pid === d + 1)
            .every((e) => tids.has(e.tid)),
        );
      }
    });

    it('writes every op twice, on its stream and on its engine, plus one event per rep', () => {
      const ops = reps.reduce((n, r) => n + r.ops.length, 0);
      assert.equal(completes(trace).length, 2 * ops + reps.length);
      assert.equal(completes(trace).filter((e) => e.cat === 'rep').length, reps.length);
    });

    it('keeps the events of every track from overlapping, as viewers need', () => {
      const byTrack = new Map<string, Complete[]>();
      for (const e of completes(trace))
        byTrack.set(`${e.pid}/${e.tid}`, [...(byTrack.get(`${e.pid}/${e.tid}`) ?? []), e]);
      for (const [track, events] of byTrack) {
        const sorted = [...events].sort((a, b) => a.ts - b.ts);
        sorted
          .slice(1)
          .forEach((e, i) => assert.ok(e.ts >= sorted[i]!.ts + sorted[i]!.dur - 1e-6, `${track} ${e.name}`));
      }
    });

    it('times ops in µs from their rep’s start', () => {
      const first = reps[0]!;
      const op = first.ops[0]!;
      const event = completes(trace).find(
        (e) => e.pid === first.device + 1 && e.cat === op.kind && e.args?.startMs === op.startMs,
      )!;
      assert.ok(Math.abs(event.ts - op.startMs * 1000) < 1e-6);
      assert.ok(Math.abs(event.dur - (op.endMs - op.startMs) * 1000) < 2e-3);
    });
  });
}

describe('Chrome trace', () => {
  const result = syntheticRunResult();
  const trace = parse(renderTrace(result));
  const overlapped = result.timeline!.reps[1]!;

  it('names ops by stage, buffer or kernel, and chunk, with bytes and GB/s in args', () => {
    const [h2d] = completes(trace).filter((e) => e.name === 'H2D input #3');
    assert.ok(h2d);
    assert.equal(h2d.args?.bytes, 8 * 1024 * 1024);
    assert.equal(h2d.args?.buffer, 'input');
    assert.equal(h2d.args?.chunk, 3);
    assert.equal(h2d.args?.stream, 's3');
    const op = overlapped.ops.find((o) => o.kind === 'h2d' && o.chunk === 3)!;
    assert.equal(h2d.args?.['GB/s'], Number((op.bytes / (op.endMs - op.startMs) / 1e6).toFixed(2)));
    assert.ok(completes(trace).some((e) => e.name === 'kernel fma #15' && e.args?.kernel === 'fma'));
    assert.ok(completes(trace).some((e) => e.name === 'D2H output' && e.args?.chunk === null)); // the serial rep
    // Chunk 0's H2D ran alone on an idle link: 8 MiB in 0.3 ms.
    assert.equal(completes(trace).find((e) => e.name === 'H2D input #0')?.args?.['GB/s'], 27.96);
  });

  it('lays a device’s reps out one after another, each announced on the mode track', () => {
    const modes = completes(trace).filter((e) => e.cat === 'rep');
    assert.deepEqual(
      modes.map((e) => e.name),
      ['serial', 'overlapped 16×4 depth-first'],
    );
    const [serial, over] = modes;
    assert.ok(over!.ts > serial!.ts + serial!.dur);
    const firstOverlappedOp = completes(trace)
      .filter((e) => e.cat === 'h2d' && e.ts >= over!.ts)
      .sort((a, b) => a.ts - b.ts)[0]!;
    assert.ok(Math.abs(firstOverlappedOp.ts - (over!.ts + overlapped.ops[0]!.startMs * 1000)) < 1e-6);
  });

  it('puts the four streams’ tracks before the engines', () => {
    assert.deepEqual(threadNames(trace, 1), [
      'mode',
      'stream s0',
      'stream s1',
      'stream s2',
      'stream s3',
      'H2D copy engine',
      'D2H copy engine',
      'SMs',
    ]);
  });

  it('puts both directions on one copy-engine track when the device has one copy engine', () => {
    const oneEngine = { ...result, devices: result.devices.map((d) => ({ ...d, asyncEngineCount: 1 })) };
    const names = threadNames(parse(JSON.stringify(buildTrace(oneEngine))), 1);
    assert.ok(names.includes('copy engine'));
    assert.ok(!names.includes('H2D copy engine'));
  });

  it('is an empty trace for a Result without traced reps', () => {
    assert.deepEqual(parse(renderTrace({ ...result, timeline: null })).traceEvents, []);
  });
});

describe('trace lanes', () => {
  const k = (startMs: number, endMs: number): TimelineOp => ({
    mode: 'm',
    device: 0,
    stream: 's',
    kind: 'kernel',
    chunk: null,
    buffer: null,
    kernel: 'k',
    bytes: 0,
    startMs,
    endMs,
    issuedMs: 0,
  });

  it('opens a second lane only for ops that overlap, and reuses the first lane that is free again', () => {
    // [2, 4) follows [0, 2) in lane 1; [3.5, 5) starts before 4 but after lane 2's [1, 3) ended.
    const split = lanes([k(0, 2), k(1, 3), k(2, 4), k(3.5, 5)], 0);
    assert.deepEqual(
      split.map((lane) => lane.map((op) => op.startMs)),
      [
        [0, 2],
        [1, 3.5],
      ],
    );
  });

  it('keeps touching ops in one lane', () => {
    assert.equal(lanes([k(0, 0.3), k(0.3, 0.6)], 10).length, 1);
  });
});
