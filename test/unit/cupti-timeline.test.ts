import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Chalk } from 'chalk';
import { analyzeRep, busyFractions, idleGaps } from '../../src/analysis/timeline.js';
import {
  ACTIVITY_KIND,
  type ActivityCollection,
  type ActivityRecord,
  cuptiCandidates,
  matchActivity,
  parseRecord,
  RECORD_LAYOUT,
  recordingCupti,
} from '../../src/cuda/cupti.js';
import { engineTimes } from '../../src/exec/engine-times.js';
import { ALIGN_TOLERANCE_MS, alignEngineTimes, withEngineTimes } from '../../src/measure/timeline.js';
import { renderGantt } from '../../src/report/gantt.js';
import { renderSvg } from '../../src/report/svg.js';
import { buildTrace } from '../../src/report/trace.js';
import { type TimelineOp, type TracedRep, TracedRepSchema } from '../../src/result/timeline.js';
import { traceSchedule } from '../../src/plan/trace.js';
import type { Schedule } from '../../src/plan/types.js';
import { stage } from '../../src/kinds/index.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';

const close = (actual: number, expected: number, what = '', tolerance = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} ${actual} ≠ ${expected}`);

/** A record as CUPTI lays it out: the fields cuda-pipe reads at their offsets, the rest zero. */
function recordBytes(
  kind: 'memcpy' | 'memset' | 'kernel',
  fields: { start: bigint; end: bigint; stream: number; correlation: number; bytes?: bigint },
): DataView {
  const view = new DataView(new ArrayBuffer(128));
  const L = RECORD_LAYOUT[kind];
  view.setUint32(
    0,
    kind === 'memcpy'
      ? ACTIVITY_KIND.memcpy
      : kind === 'memset'
        ? ACTIVITY_KIND.memset
        : ACTIVITY_KIND.concurrentKernel,
    true,
  );
  view.setBigUint64(L.start, fields.start, true);
  view.setBigUint64(L.end, fields.end, true);
  view.setUint32(L.deviceId, 0, true);
  view.setUint32(L.streamId, fields.stream, true);
  view.setUint32(L.correlationId, fields.correlation, true);
  if ('bytes' in L) view.setBigUint64(L.bytes, fields.bytes ?? 0n, true);
  return view;
}

// CUPTI's clock is in ns since the epoch: past 2^53, so differences are taken while still BigInt.
const BASE = 1_763_900_000_000_000_000n;

describe('CUPTI records', () => {
  it('looks for libcupti where the toolkits put it, and only at the override when one is set', () => {
    const found = cuptiCandidates({ CUDA_PATH: '/opt/cuda' });
    assert.ok(found.includes('/opt/cuda/targets/x86_64-linux/lib/libcupti.so.13'));
    assert.ok(found.includes('/opt/cuda/extras/CUPTI/lib64/libcupti.so.12'));
    assert.ok(found.includes('libcupti.so.13'));
    assert.ok(found.includes('/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13'));
    assert.ok(
      found.indexOf('/opt/cuda/lib64/libcupti.so.13') < found.indexOf('libcupti.so.13'),
      'CUDA_PATH before the loader',
    );
    assert.deepEqual(cuptiCandidates({ CUDA_PIPE_CUPTI: '/x/libcupti.so', CUDA_PATH: '/opt/cuda' }), [
      '/x/libcupti.so',
    ]);
  });

  it('reads a copy, a memset and a kernel at their offsets, exactly, relative to the base', () => {
    const copy = parseRecord(
      recordBytes('memcpy', {
        start: BASE + 6_497_912n,
        end: BASE + 6_803_896n,
        stream: 13,
        correlation: 2,
        bytes: 16_777_216n,
      }),
      BASE,
    );
    assert.deepEqual(copy, {
      kind: 'memcpy',
      correlationId: 2,
      deviceId: 0,
      streamId: 13,
      bytes: 16_777_216,
      startNs: 6_497_912,
      endNs: 6_803_896,
    });
    const memset = parseRecord(
      recordBytes('memset', { start: BASE + 10n, end: BASE + 20n, stream: 7, correlation: 4, bytes: 1024n }),
      BASE,
    );
    assert.deepEqual(memset, {
      kind: 'memset',
      correlationId: 4,
      deviceId: 0,
      streamId: 7,
      bytes: 1024,
      startNs: 10,
      endNs: 20,
    });
    const kernel = parseRecord(
      recordBytes('kernel', { start: BASE + 100n, end: BASE + 180_100n, stream: 14, correlation: 9 }),
      BASE,
    );
    assert.deepEqual(kernel, {
      kind: 'kernel',
      correlationId: 9,
      deviceId: 0,
      streamId: 14,
      bytes: 0,
      startNs: 100,
      endNs: 180_100,
    });
  });

  it('reads the id pushed around a call from an external-correlation record, and ignores other kinds', () => {
    const view = new DataView(new ArrayBuffer(128));
    view.setUint32(0, ACTIVITY_KIND.externalCorrelation, true);
    view.setUint32(RECORD_LAYOUT.externalCorrelation.externalKind, 3, true);
    view.setBigUint64(RECORD_LAYOUT.externalCorrelation.externalId, 17n, true);
    view.setUint32(RECORD_LAYOUT.externalCorrelation.correlationId, 41, true);
    assert.deepEqual(parseRecord(view, BASE), { externalId: 17, correlationId: 41 });
    view.setUint32(RECORD_LAYOUT.externalCorrelation.externalKind, 2, true);
    assert.equal(parseRecord(view, BASE), null, "another tool's correlation (OpenACC)");
    view.setUint32(0, ACTIVITY_KIND.runtime, true);
    assert.equal(parseRecord(view, BASE), null, 'an API record');
  });

  it('leaves out a record from before the collection began, since recording stays on between collections', () => {
    assert.equal(
      parseRecord(recordBytes('memcpy', { start: BASE - 500n, end: BASE + 10n, stream: 1, correlation: 1 }), BASE),
      null,
    );
  });

  it('has nothing to stop before a timed rep where no traced rep opened CUPTI, and does not load it to find out', () => {
    assert.equal(recordingCupti(), null);
  });

  it('calls a record that ends before it starts, or that CUPTI could not time, malformed', () => {
    assert.equal(
      parseRecord(recordBytes('memcpy', { start: BASE + 20n, end: BASE + 10n, stream: 1, correlation: 1 }), BASE),
      'malformed',
    );
    assert.equal(
      parseRecord(recordBytes('kernel', { start: 0n, end: 0n, stream: 1, correlation: 1 }), BASE),
      'malformed',
    );
  });

  it('matches records to calls by the id pushed around each, spanning a call CUPTI split, counting a wrong kind', () => {
    const rec = (
      kind: ActivityRecord['kind'],
      correlationId: number,
      startNs: number,
      endNs: number,
    ): ActivityRecord => ({
      kind,
      correlationId,
      deviceId: 0,
      streamId: 1,
      bytes: 0,
      startNs,
      endNs,
    });
    const collection: ActivityCollection = {
      records: [
        rec('memcpy', 10, 0, 300),
        rec('kernel', 12, 310, 500),
        rec('memcpy', 14, 520, 700),
        rec('memcpy', 14, 700, 820),
        rec('kernel', 16, 900, 950),
        rec('memcpy', 99, 0, 1),
      ],
      external: new Map([
        [10, 1],
        [12, 2],
        [14, 3],
        [16, 1],
      ]),
      dropped: 0,
      malformed: 0,
    };
    const matched = matchActivity(collection, [stage('h2d').cupti, stage('kernel').cupti, stage('d2h').cupti]);
    assert.deepEqual(matched.spans, [
      { start: 0, end: 300 },
      { start: 310, end: 500 },
      { start: 520, end: 820 },
    ]);
    assert.equal(matched.wrongKind, 1, "a kernel correlated with a copy's call");
  });

  it('falls back to events, saying why, where CUPTI is missing or a graph replays the rep', () => {
    const schedule = { id: 's', body: [], events: [], streams: [], device: 0 } as unknown as Schedule;
    const missing = engineTimes(
      { unavailable: 'no libcupti found (tried 12 places; set CUDA_PIPE_CUPTI to the file)' },
      'CUPTI was not used',
      traceSchedule(schedule),
    );
    assert.deepEqual(missing.source, {
      source: 'events',
      reason: 'CUPTI not used: no libcupti found (tried 12 places; set CUDA_PIPE_CUPTI to the file)',
    });
    assert.deepEqual(missing.spans, []);
  });
});

function op(
  stream: string,
  kind: TimelineOp['kind'],
  startMs: number,
  endMs: number,
  engine?: [number, number],
): TimelineOp {
  return {
    mode: 'm',
    device: 0,
    stream,
    kind,
    chunk: null,
    buffer: kind === 'kernel' ? null : 'buf',
    kernel: kind === 'kernel' ? 'k' : null,
    bytes: 16 << 20,
    startMs,
    endMs,
    issuedMs: 0,
    ...(engine ? { engineStartMs: engine[0], engineEndMs: engine[1] } : {}),
  };
}

describe("engine times on the events' clock", () => {
  // Events: s0's H2D [0, 0.31], s1's H2D queued behind it from 0.01, engine [0.31, 0.61], event end 0.612.
  // CUPTI's clock runs 5 ms ahead of the events', and each engine starts 1 µs after its begin event.
  const offsetNs = 5_000_000;
  const timed = [
    { startMs: 0, endMs: 0.311, engineNs: { start: offsetNs + 1_000, end: offsetNs + 310_000 } },
    { startMs: 0.01, endMs: 0.612, engineNs: { start: offsetNs + 311_000, end: offsetNs + 611_000 } },
    { startMs: 0.62, endMs: 0.7 },
  ];

  it('finds the offset from the tightest events on either side, to within their lag', () => {
    const aligned = alignEngineTimes(timed);
    assert.ok(aligned && 'offsetMs' in aligned);
    // At least 0 - 5.001 (the first copy's begin event), at most 0.311 - 5.310 (its end event): -5 ± 1 µs.
    close(aligned.offsetMs, -5, 'offset', 1e-9);
    close(aligned.withinMs, 0.001, 'within', 1e-9);
  });

  it('says the records do not belong to the ops when no offset puts every engine inside its events', () => {
    const wrong = [
      timed[0]!,
      { startMs: 0.5, endMs: 0.6, engineNs: { start: offsetNs + 1_000, end: offsetNs + 90_000 } },
    ];
    const aligned = alignEngineTimes(wrong);
    assert.ok(aligned && 'mismatchMs' in aligned && aligned.mismatchMs > ALIGN_TOLERANCE_MS);
    const { ops, timing } = withEngineTimes(
      wrong.map((t, i) => ({ op: op(`s${i}`, 'h2d', t.startMs, t.endMs), engineNs: t.engineNs })),
      { source: 'cupti' },
    );
    assert.equal(timing?.source, 'events');
    assert.match(timing?.note ?? '', /do not fit between the events/);
    assert.ok(ops.every((o) => o.engineStartMs === undefined));
  });

  it('gives each recorded op its engine interval inside its events, and the rep its source', () => {
    const own = timed.map((t, i) => ({
      op: op(`s${i}`, i === 2 ? 'host' : 'h2d', t.startMs, t.endMs),
      engineNs: t.engineNs,
    }));
    const { ops, timing } = withEngineTimes(own, { source: 'cupti' });
    assert.equal(timing?.source, 'cupti');
    assert.match(timing?.note ?? '', /±1\.0 µs/);
    close(ops[1]!.engineStartMs!, 0.311, 'the queued copy starts once the first has ended', 1e-9);
    close(ops[1]!.engineEndMs!, 0.611, '', 1e-9);
    close(ops[0]!.engineStartMs!, 0.001, 'a µs after its begin event', 1e-9);
    assert.equal(ops[2]!.engineStartMs, undefined, 'a host op keeps its events');
    assert.deepEqual(withEngineTimes(own, { source: 'events', reason: 'CUPTI not used: x' }).timing, {
      source: 'events',
      note: 'CUPTI not used: x',
    });
    assert.equal(withEngineTimes(own, undefined).timing, undefined);
  });
});

// s0's H2D runs [0, 0.3]; s1's H2D was reached at 0 but queued on the engine until 0.3, running [0.3, 0.6].
const queuedRep: TracedRep = {
  mode: 'm',
  device: 0,
  totalMs: 0.6,
  issueMs: 0.001,
  streams: [
    { id: 's0', flags: 'non-blocking', priority: null },
    { id: 's1', flags: 'non-blocking', priority: null },
  ],
  ops: [op('s0', 'h2d', 0, 0.3, [0, 0.3]), op('s1', 'h2d', 0, 0.6, [0.3, 0.6])],
  timing: { source: 'cupti', note: 'engine times from CUPTI' },
};

describe('analysis with engine times', () => {
  it("counts the engine busy over engine intervals and the queued part as its stream's wait for the engine", () => {
    const busy = busyFractions(queuedRep);
    close(busy.h2d, 1, 'h2d');
    const gaps = idleGaps(queuedRep, { copyEngines: 3 });
    assert.deepEqual(
      gaps.map((g) => [g.stream, g.startMs, g.endMs]),
      [['s1', 0, 0.3]],
    );
    close(gaps[0]!.engineMs, 0.3, 'the queued part: another stream held the H2D engine');
    const events = { ...queuedRep, ops: queuedRep.ops.map(({ engineStartMs: _s, engineEndMs: _e, ...rest }) => rest) };
    assert.equal(idleGaps(events, { copyEngines: 3 }).length, 0, 'events alone see no wait at all');
  });

  it('never has an engine busier than the rep', () => {
    const a = analyzeRep(queuedRep, { copyEngines: 3 });
    assert.ok(a.busy.h2d <= 1 && a.busy.d2h <= 1 && a.busy.sm <= 1);
    close(a.idle.engineMs, 0.3);
  });
});

describe('the Result and the pictures with engine times', () => {
  it('round-trips engine times and the source, and reads a rep from before them as events', () => {
    const parsed = TracedRepSchema.parse(JSON.parse(JSON.stringify(queuedRep)));
    assert.deepEqual(parsed, queuedRep);
    const { timing: _t, ...old } = queuedRep;
    const oldParsed = TracedRepSchema.parse({ ...old, ops: [op('s0', 'h2d', 0, 0.3)] });
    assert.equal(oldParsed.timing, undefined);
    assert.equal(oldParsed.ops[0]!.engineStartMs, undefined);
  });

  const result = { ...syntheticRunResult(), timeline: { reps: [queuedRep] } };

  it('draws the engine bar and the queued part apart in the SVG, and says the source', () => {
    const svg = renderSvg(result);
    assert.match(svg, /engine times: CUPTI/);
    const queued = [...svg.matchAll(/<rect class="queued h2d"[^>]*x="([\d.]+)"[^>]*width="([\d.]+)"/g)];
    assert.equal(queued.length, 1, 'only the queued copy has a queued part');
    const bars = [...svg.matchAll(/<rect class="op h2d"[^>]*data-stream="s1"[^>]*x="([\d.]+)"[^>]*width="([\d.]+)"/g)];
    assert.equal(bars.length, 1);
    // The queued part ends where the engine bar starts.
    close(Number(queued[0]![1]) + Number(queued[0]![2]), Number(bars[0]![1]), 'queued end = bar start', 0.02);
    assert.match(svg, /queued 0\.300 ms before it/);
  });

  it('marks queued cells apart in the terminal chart and names the source in its facts', () => {
    const text = renderGantt(result, { style: new Chalk({ level: 0 }), columns: 60 });
    assert.match(text, /timing\s+engine times from CUPTI/);
    const s1 = text.split('\n').find((l) => l.startsWith('s1'))!;
    assert.match(s1, /^s1 \|~+H+\|$/);
  });

  it('puts engine times on the engine tracks of the trace and keeps the stream track on the events', () => {
    const events = buildTrace(result).traceEvents;
    const s1 = events.filter((e) => e.ph === 'X' && e.cat === 'h2d' && e.args?.stream === 's1');
    const durations = s1.map((e) => e.dur).sort((a, b) => (a ?? 0) - (b ?? 0));
    assert.deepEqual(durations, [300, 600], 'engine track 0.3 ms, stream track 0.6 ms');
    assert.ok(s1.every((e) => e.args?.queuedMs === 0.3));
  });
});
