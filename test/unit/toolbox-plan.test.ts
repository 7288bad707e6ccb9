import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configHash } from '../../src/config/hash.js';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan } from '../../src/plan/build.js';
import { happensBefore } from '../../src/plan/order.js';
import { issuedOpCount, overheadPlan } from '../../src/plan/overhead.js';
import { checkPriorities, resolvePriority } from '../../src/plan/priority.js';
import { latencyStats } from '../../src/measure/result.js';
import { type Op, type Plan, type Schedule, scheduleOps } from '../../src/plan/types.js';
import { modeId } from '../../src/vocabulary.js';

const MiB = 2 ** 20;

function config(extra: string, pipeline: string, elements = 64 * 1024) {
  return (
    `buffers:\n  x: { type: float32, count: ${elements}, role: in }\n  y: { type: float32, count: ${elements}, role: out }\n` +
    'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n' +
    `pipeline: ${pipeline}\n${extra}`
  );
}

function plan(extra: string, pipeline: string, elements?: number): Plan {
  const { config: c, locate } = parseConfigText(config(extra, pipeline, elements), '/cfg/t.yaml');
  return buildPlan(c, resolveKernels(c, locate));
}

function rejected(extra: string, pipeline: string): UsageError {
  try {
    plan(extra, pipeline);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail('expected a usage error');
}

const overlapped = (p: Plan, match: (s: Schedule) => boolean = () => true): Schedule => {
  const s = p.schedules.find((x) => x.role.kind === 'overlapped' && match(x));
  assert.ok(s, 'no such overlapped schedule');
  return s;
};

/** The index in `ops` of chunk `chunk`'s op of a kind ('h2d', 'kernel', 'd2h', 'host'). */
function find(ops: readonly Op[], kind: string, chunk: number): number {
  const i = ops.findIndex(
    (o) => 'chunk' in o && o.chunk === chunk && (o.kind === 'copy' ? o.direction : o.kind) === kind,
  );
  assert.ok(i >= 0, `no ${kind} of chunk ${chunk}`);
  return i;
}

/** Every slot reuse waits for the kernel and the D2H of the chunk that last used the slot. */
function assertRingSafe(schedule: Schedule, slots: number): void {
  const ops = scheduleOps(schedule);
  const before = happensBefore(ops);
  for (let chunk = slots; chunk < schedule.ranges.length; chunk++) {
    const old = chunk - slots;
    assert.ok(
      before(find(ops, 'kernel', old), find(ops, 'h2d', chunk)),
      `H2D ${chunk} may overwrite the input of kernel ${old}`,
    );
    assert.ok(
      before(find(ops, 'd2h', old), find(ops, 'h2d', chunk)),
      `H2D ${chunk} may start before D2H ${old} left the slot`,
    );
    assert.ok(
      before(find(ops, 'd2h', old), find(ops, 'kernel', chunk)),
      `kernel ${chunk} may overwrite the output D2H ${old} still reads`,
    );
  }
}

describe('a ring of device slots under a device-memory budget', () => {
  // 64 Ki elements × 8 bytes (x and y) in 16 chunks: a slot is 32 KiB, so 128 KiB holds 4 of them.
  const ring = () => plan('deviceMemory: 128KiB\n', '{ chunks: 16, topology: stage-per-stream }');

  it('allocates slots × chunk elements per buffer and maps every device offset into them', () => {
    const p = ring();
    assert.deepEqual(p.device, { elements: 4 * 4096, ring: { slots: 4, slotElements: 4096 }, budgetBytes: 128 * 1024 });
    for (const s of p.schedules) {
      for (const op of s.body) {
        if (op.kind === 'copy') assert.ok(op.deviceOffset + op.bytes <= 4 * 4096 * 4, `${s.id}: ${JSON.stringify(op)}`);
        if (op.kind === 'kernel') assert.ok(op.deviceFirst + op.count <= 4 * 4096, `${s.id}: ${JSON.stringify(op)}`);
      }
    }
  });

  it('reloads a slot only after the kernel and the D2H that used it finished, one stream per stage', () => {
    const s = overlapped(ring());
    assert.deepEqual(
      s.streams.map((x) => x.id),
      ['load', 'compute', 'store'],
    );
    assertRingSafe(s, 4);
  });

  it('reloads a slot only after its last user finished in chunk-per-stream layouts whose slots do not divide by the streams', () => {
    const p = plan('', '{ chunks: 16, streams: 4, slots: 5 }');
    assertRingSafe(overlapped(p), 5);
  });

  it('is what makes reuse safe: without its waits the order check finds the hazard', () => {
    const s = overlapped(ring());
    const unsafe = { ...s, body: s.body.filter((o) => !(o.kind === 'wait' && o.event.startsWith('slot-free:'))) };
    assert.throws(() => assertRingSafe(unsafe, 4), /H2D 4 may overwrite the input of kernel 0/);
  });

  it('chunks the serial baseline through the ring too, so it fits the budget', () => {
    const serial = ring().schedules.find((s) => s.role.kind === 'serial');
    assert.ok(serial);
    assert.equal(serial.body.filter((o) => o.kind === 'kernel').length, 16);
    assert.equal(serial.bytes.h2d, 64 * 1024 * 4);
  });

  it('refuses a budget that holds no chunk, naming the deviceMemory line', () => {
    const error = rejected('deviceMemory: 16KiB\n', '{ chunks: 16 }');
    assert.match(
      error.message,
      /^\/cfg\/t\.yaml:7:1: one chunk of every buffer takes 32768 bytes, more than the budget of 16384 bytes\.$/,
    );
  });

  it('refuses breadth-first issue through a ring, naming the order line', () => {
    const error = rejected('deviceMemory: 128KiB\n', '{ chunks: 16, order: breadth-first }');
    assert.match(error.message, /^\/cfg\/t\.yaml:6:\d+: a ring of 4 device slots .* needs depth-first issue/);
  });

  it('needs no ring when the budget holds every chunk', () => {
    assert.equal(plan(`deviceMemory: ${MiB}\n`, '{ chunks: 16 }').device.ring, null);
  });
});

describe('stage-per-stream schedules', () => {
  it('orders each chunk load → kernel → store across three streams through events', () => {
    const s = overlapped(plan('', '{ chunks: 6, topology: stage-per-stream }'));
    const ops = scheduleOps(s);
    const before = happensBefore(ops);
    for (let chunk = 0; chunk < 6; chunk++) {
      assert.ok(before(find(ops, 'h2d', chunk), find(ops, 'kernel', chunk)));
      assert.ok(before(find(ops, 'kernel', chunk), find(ops, 'd2h', chunk)));
      assert.equal(ops[find(ops, 'kernel', chunk)]?.stream, 'compute');
    }
    // Without a ring, loads never wait for stores: the load stream runs ahead.
    assert.equal(before(find(ops, 'd2h', 0), find(ops, 'h2d', 5)), false);
    assert.deepEqual(s.role, {
      kind: 'overlapped',
      layout: { chunks: 6, streams: 3, order: 'depth-first', topology: 'stage-per-stream' },
    });
  });
});

describe('graph mode', () => {
  it('adds a graph replay of every overlapped layout with the same body and a distinct id', () => {
    const p = plan('', '{ chunks: 8, streams: 4, mode: graph, order: [depth-first, breadth-first] }');
    const graphs = p.schedules.filter((s) => s.issue === 'graph' && s.role.kind === 'overlapped');
    assert.deepEqual(
      graphs.map((s) => s.id),
      ['overlapped:8x4:depth-first:chunk-per-stream:graph', 'overlapped:8x4:breadth-first:chunk-per-stream:graph'],
    );
    for (const g of graphs) {
      const stream = overlapped(
        p,
        (s) =>
          s.issue === 'stream' &&
          s.role.kind === 'overlapped' &&
          g.role.kind === 'overlapped' &&
          s.role.layout.order === g.role.layout.order,
      );
      assert.deepEqual(g.body, stream.body);
    }
  });

  it("measures the kernels chunked both stream-issued and replayed as a graph, the graph replay's part of the bound", () => {
    const p = plan('', '{ chunks: 8, streams: 4, mode: graph }');
    const chunked = p.schedules.filter((s) => s.role.kind === 'kernels-chunked');
    assert.deepEqual(
      chunked.map((s) => [s.id, s.issue]),
      [
        ['kernels-chunked:8x4:depth-first:chunk-per-stream', 'stream'],
        ['kernels-chunked:8x4:depth-first:chunk-per-stream:graph', 'graph'],
      ],
    );
    assert.deepEqual(chunked[1]?.body, chunked[0]?.body);
    assert.deepEqual(
      plan('', '{ chunks: 8, streams: 4 }')
        .schedules.filter((s) => s.role.kind === 'kernels-chunked')
        .map((s) => s.issue),
      ['stream'],
    );
  });

  it('refuses graph mode on the legacy default stream, which cannot be captured', () => {
    assert.match(
      rejected('', '{ chunks: 4, mode: graph, streamKind: legacy-default }').message,
      /cannot be captured into a graph/,
    );
  });
});

describe('a host stage', () => {
  const p = () => plan('host: { function: checksum }\n', '{ chunks: 4, streams: 2 }');

  it("runs after each chunk's D2H on the same stream, in serial and overlapped modes, never in the stages alone", () => {
    const s = overlapped(p(), (x) => x.role.kind === 'overlapped' && x.role.layout.host === 'checksum');
    const ops = scheduleOps(s);
    const before = happensBefore(ops);
    for (let chunk = 0; chunk < 4; chunk++) {
      assert.ok(before(find(ops, 'd2h', chunk), find(ops, 'host', chunk)));
      assert.deepEqual(ops[find(ops, 'host', chunk)], {
        kind: 'host',
        stream: `s${chunk % 2}`,
        name: 'checksum',
        chunk,
      });
    }
    assert.equal(
      p()
        .schedules.find((x) => x.role.kind === 'serial')
        ?.body.filter((o) => o.kind === 'host').length,
      1,
    );
    assert.ok(
      p()
        .schedules.filter((x) => x.role.kind === 'stage')
        .every((x) => x.body.every((o) => o.kind !== 'host')),
    );
  });

  it('is measured against the same layout without it', () => {
    const ids = p()
      .schedules.filter((s) => s.role.kind === 'overlapped')
      .map((s) => s.id);
    assert.deepEqual(ids, [
      'overlapped:4x2:depth-first:chunk-per-stream:host-checksum',
      'overlapped:4x2:depth-first:chunk-per-stream',
    ]);
  });
});

describe('stream kinds and the legacy default stream', () => {
  it('reads the deprecated streamFlags: default as blocking streams, and says so with its line', () => {
    const { config: c } = parseConfigText(config('', '{ chunks: 4, streamFlags: default }'), '/cfg/t.yaml');
    assert.equal(c.pipeline.streamKind, 'blocking');
    assert.deepEqual(c.notes, [
      '/cfg/t.yaml:6:24: streamFlags is deprecated; streamFlags: default is read as streamKind: blocking.',
    ]);
    assert.match(rejected('', '{ chunks: 4, streamFlags: default, streamKind: blocking }').message, /not both/);
  });

  it("puts one chunk's kernel on cudaStreamLegacy, still ordered after its load and before its store", () => {
    const p = plan('', '{ chunks: 8, streams: 4, streamKind: blocking, legacyDefaultOp: { chunk: 3 } }');
    const s = overlapped(p, (x) => x.role.kind === 'overlapped' && x.role.layout.legacyOp !== undefined);
    assert.deepEqual(
      s.streams.map((x) => `${x.id}:${x.kind}`),
      ['s0:blocking', 's1:blocking', 's2:blocking', 's3:blocking', 'legacy:legacy-default'],
    );
    const ops = scheduleOps(s);
    const before = happensBefore(ops);
    assert.equal(ops[find(ops, 'kernel', 3)]?.stream, 'legacy');
    assert.ok(
      before(find(ops, 'h2d', 3), find(ops, 'kernel', 3)) && before(find(ops, 'kernel', 3), find(ops, 'd2h', 3)),
    );
    assert.equal(s.id, 'overlapped:8x4:depth-first:chunk-per-stream:legacy-kernel3');
  });

  it('refuses a legacy-default op on a chunk that does not exist', () => {
    assert.match(
      rejected('', '{ chunks: 4, legacyDefaultOp: { chunk: 4 } }').message,
      /chunk 4 does not exist; chunks are 0 to 3/,
    );
  });

  it("measures one chunk's load on each default stream beside the layout without it, the load still before its kernel", () => {
    const p = plan(
      '',
      '{ chunks: 2, streams: 2, streamKind: blocking, defaultStreamOp: { chunk: 1, op: h2d, stream: [per-thread, legacy] } }',
    );
    assert.deepEqual(
      p.schedules.filter((s) => s.role.kind === 'overlapped').map((s) => s.id),
      [
        'overlapped:2x2:depth-first:chunk-per-stream',
        'overlapped:2x2:depth-first:chunk-per-stream:per-thread-h2d1',
        'overlapped:2x2:depth-first:chunk-per-stream:legacy-h2d1',
      ],
    );
    for (const [stream, kind] of [
      ['per-thread', 'per-thread-default'],
      ['legacy', 'legacy-default'],
    ] as const) {
      const s = overlapped(p, (x) => x.id.endsWith(`:${stream}-h2d1`));
      assert.deepEqual(
        s.streams.map((x) => `${x.id}:${x.kind}`),
        ['s0:blocking', 's1:blocking', `${stream}:${kind}`],
      );
      const ops = scheduleOps(s);
      const before = happensBefore(ops);
      assert.equal(ops[find(ops, 'h2d', 1)]?.stream, stream);
      assert.equal(ops[find(ops, 'h2d', 0)]?.stream, 's0');
      assert.ok(
        before(find(ops, 'h2d', 1), find(ops, 'kernel', 1)) && before(find(ops, 'kernel', 1), find(ops, 'd2h', 1)),
      );
      // Nothing but the default stream's own semantics orders chunk 1's load after chunk 0: the plan adds no wait.
      assert.ok(!before(find(ops, 'd2h', 0), find(ops, 'h2d', 1)));
    }
  });

  it('reads legacyDefaultOp as one kernel on the legacy stream, and hashes it as before', () => {
    const { config: c } = parseConfigText(
      config('', '{ chunks: 4, streamKind: blocking, legacyDefaultOp: { chunk: 3 } }'),
      '/cfg/t.yaml',
    );
    assert.deepEqual(c.pipeline.defaultStreamOps, [{ stream: 'legacy', chunk: 3, op: 'kernel' }]);
    const { config: d } = parseConfigText(
      config('', '{ chunks: 4, streamKind: blocking, defaultStreamOp: { chunk: 3, stream: legacy } }'),
      '/cfg/t.yaml',
    );
    assert.equal(configHash(d), configHash(c));
    const { config: e } = parseConfigText(
      config('', '{ chunks: 4, streamKind: blocking, defaultStreamOp: { chunk: 3 } }'),
      '/cfg/t.yaml',
    );
    assert.deepEqual(
      e.pipeline.defaultStreamOps.map((o) => o.stream),
      ['per-thread', 'legacy'],
    );
    assert.notEqual(configHash(e), configHash(c));
  });

  it('refuses both spellings at once, a chunk that does not exist, and a stage-per-stream layout', () => {
    assert.match(
      rejected('', '{ chunks: 4, streamKind: blocking, legacyDefaultOp: { chunk: 1 }, defaultStreamOp: { chunk: 1 } }')
        .message,
      /not both/,
    );
    assert.match(
      rejected('', '{ chunks: 4, streamKind: blocking, defaultStreamOp: { chunk: 4, op: h2d } }').message,
      /chunk 4 does not exist; chunks are 0 to 3/,
    );
    assert.match(
      rejected('', '{ chunks: 4, streamKind: blocking, topology: stage-per-stream, defaultStreamOp: { chunk: 1 } }')
        .message,
      /only the chunk-per-stream topology has/,
    );
  });
});

describe('mode ids', () => {
  it('are unchanged for layouts without variants, so earlier results pair with new ones', () => {
    assert.equal(
      modeId({
        kind: 'overlapped',
        layout: { chunks: 16, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' },
      }),
      'overlapped:16x4:depth-first:chunk-per-stream',
    );
    assert.equal(modeId({ kind: 'issue-cost', op: 'launch' }), 'issue-cost:launch');
    assert.equal(modeId({ kind: 'issue-cost', op: 'record-untimed' }), 'issue-cost:record-untimed');
  });
});

describe('the overhead plan', () => {
  it('measures event records with and without timing and cross-stream waits beside launches and copies', () => {
    const kernel = { label: 'k', entry: 'k', sourcePath: '/k.cu', block: 256, grid: 'cover' as const, args: [] };
    const p = overheadPlan(kernel, 10, 0);
    const roles: string[] = p.schedules.map((s) => (s.role.kind === 'issue-cost' ? s.role.op : ''));
    assert.deepEqual(roles, ['launch', 'copy', 'record-timing', 'record-untimed', 'wait']);
    const events = (op: string) =>
      p.schedules[roles.indexOf(op)]?.events.filter((e) => e.id.startsWith('probe') || e.id === 'other');
    assert.deepEqual(events('record-timing'), [{ id: 'probe-timing', timing: true }]);
    assert.deepEqual(events('record-untimed'), [{ id: 'probe-untimed', timing: false }]);
    const waits = p.schedules[roles.indexOf('wait')];
    assert.ok(waits);
    assert.equal(waits.body.filter((o) => o.kind === 'wait' && o.stream === 's0' && o.event === 'other').length, 10);
    assert.deepEqual(waits.body[0], { kind: 'record', stream: 's1', event: 'other' });
  });

  it('counts the timed ops of each batch, leaving out the record a wait batch waits on', () => {
    const kernel = { label: 'k', entry: 'k', sourcePath: '/k.cu', block: 256, grid: 'cover' as const, args: [] };
    const p = overheadPlan(kernel, 10, 0);
    assert.deepEqual(p.schedules.map(issuedOpCount), [10, 10, 10, 10, 10]);
    assert.equal(p.schedules[4]?.body.length, 11);
  });
});

describe('stream priorities and a latency-critical stream', () => {
  const PRIORITY =
    `buffers:\n  x: { type: float32, count: 4096, role: in }\n  y: { type: float32, count: 4096, role: out }\n  p: { type: float32, count: 4096, role: scratch }\n` +
    'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n' +
    '  - { name: urgent, source: tiny.cu, entry: bump, args: [{ buffer: p }, { chunk: elements }] }\n' +
    'latency: { kernel: urgent, elements: 64 }\npipeline: { chunks: 4, streams: 2, priority: -3 }\n';
  const latencyPlan = () => {
    const { config: c, locate } = parseConfigText(PRIORITY, '/cfg/p.yaml');
    return buildPlan(c, resolveKernels(c, locate));
  };

  it("launches the urgent kernel once per chunk, after that chunk's load, on its own stream, and never per chunk in the pipeline", () => {
    const p = latencyPlan();
    assert.deepEqual(
      p.schedules.map((s) => s.id).filter((id) => id.startsWith('latency')),
      ['latency:urgent:priorities', 'latency:urgent:equal'],
    );
    for (const s of p.schedules.filter((x) => x.role.kind !== 'latency'))
      assert.ok(
        s.body.every((o) => o.kind !== 'kernel' || o.kernel !== 'urgent'),
        s.id,
      );
    const s = p.schedules.find((x) => x.id === 'latency:urgent:priorities');
    assert.ok(s);
    const ops = scheduleOps(s);
    const before = happensBefore(ops);
    const urgent = ops.flatMap((o, i) => (o.kind === 'kernel' && o.kernel === 'urgent' ? [i] : []));
    assert.equal(urgent.length, 4);
    urgent.forEach((u, chunk) => {
      assert.ok(before(find(ops, 'h2d', chunk), u), `urgent ${chunk} after load ${chunk}`);
      assert.deepEqual(ops[u], {
        kind: 'kernel',
        stream: 'urgent',
        kernel: 'urgent',
        chunk: null,
        first: 0,
        count: 64,
        deviceFirst: 0,
      });
    });
    assert.equal(s.probes?.length, 4);
  });

  it("gives the urgent stream its priority and the pipeline's streams theirs only in the mode with priorities", () => {
    const p = latencyPlan();
    const levels = (id: string) =>
      p.schedules.find((s) => s.id === id)?.streams.map((x) => `${x.id}:${x.priority?.level ?? 'default'}`);
    assert.deepEqual(levels('latency:urgent:priorities'), ['s0:-3', 's1:-3', 'urgent:high']);
    assert.deepEqual(levels('latency:urgent:equal'), ['s0:default', 's1:default', 'urgent:default']);
    assert.deepEqual(levels('serial'), ['s0:-3']);
    assert.deepEqual(levels('link'), undefined);
  });

  it('is a usage error naming the config line and the device range when a priority is outside it, once the range is known', () => {
    const p = latencyPlan();
    assert.doesNotThrow(() => checkPriorities(p, { least: 0, greatest: -5 }, 0));
    assert.throws(
      () => checkPriorities(p, { least: 0, greatest: -2 }, 1),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          "/cfg/p.yaml:9:36: stream priority -3 is outside device 1's range, -2 (highest) to 0 (lowest).",
    );
    assert.equal(resolvePriority({ level: 'high', where: '' }, { least: 0, greatest: -5 }), -5);
    assert.equal(resolvePriority({ level: 'low', where: '' }, { least: 0, greatest: -5 }), 0);
  });

  it('refuses a latency kernel the config does not have', () => {
    assert.throws(() => parseConfigText(PRIORITY.replace('kernel: urgent', 'kernel: nope'), '/cfg/p.yaml'), {
      message: '/cfg/p.yaml:8:12: no kernel is called "nope".',
    });
  });

  it('reports the median and the 99th percentile of the urgent kernels, both interpolated between neighbours', () => {
    const values = Array.from({ length: 200 }, (_, i) => (i + 1) / 1000);
    const stats = latencyStats(values);
    assert.deepEqual(
      { ...stats, p99Ms: Number(stats.p99Ms.toFixed(6)) },
      { n: 200, medianMs: 0.1005, p99Ms: 0.19801, maxMs: 0.2 },
    );
  });
});
