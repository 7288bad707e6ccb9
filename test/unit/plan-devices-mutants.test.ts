import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan } from '../../src/plan/build.js';
import { deviceStream, peerBandwidthPlan, spanningSchedule } from '../../src/plan/devices.js';
import type { Op, Plan, Schedule, StreamSpec } from '../../src/plan/types.js';
import { builtinConfigsDir } from '../../src/paths.js';

// Schedules over several devices: the timed region that spans them, how the split and the handoff are laid out and
// named, and probe's copies between two devices.

const TWO = (
  extra: string,
  pipeline = '{ chunks: 4, streams: 2 }',
  buffers = '  x: { type: float32, count: 4096, role: in }\n  y: { type: float32, count: 4096, role: out }\n',
) =>
  `buffers:\n${buffers}` +
  'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n' +
  `pipeline: ${pipeline}\n${extra}`;

function plan(text: string, gate = false): Plan {
  const { config, locate } = parseConfigText(text, '/cfg/d.yaml');
  return buildPlan(config, resolveKernels(config, locate), { gate });
}

const streams = (device: number, count: number): StreamSpec[] =>
  Array.from({ length: count }, (_, i) => ({ id: deviceStream(device, i), kind: 'non-blocking', device }));
const show = (ops: readonly Op[]) =>
  ops.map((o) =>
    o.kind === 'record' || o.kind === 'wait' ? `${o.kind} ${o.event}@${o.stream}` : `${o.kind}@${o.stream}`,
  );
const byId = (p: Plan, id: string) => {
  const s = p.schedules.find((x) => x.id === id);
  assert.ok(s, `no schedule ${id} in ${p.schedules.map((x) => x.id).join(' ')}`);
  return s;
};

describe('a timed region over several devices', () => {
  const role = { kind: 'peer', from: 0, to: 1, both: true } as const;
  const spanning = (gated: boolean) =>
    spanningSchedule({
      role,
      description: 'both',
      parts: [
        { device: 0, streams: streams(0, 2) },
        { device: 1, streams: streams(1, 2) },
      ],
      body: [],
      ranges: [],
      verify: false,
      gated,
    });

  it("starts on the first device's first stream, behind the gate, and starts each other device once it has", () => {
    assert.deepEqual(show(spanning(true).prologue), [
      'gate@d0:s0',
      'record start@d0:s0',
      'wait start@d0:s1',
      'wait start@d1:s0',
      'record start:d1@d1:s0',
      'wait start:d1@d1:s1',
    ]);
    assert.deepEqual(show(spanning(false).prologue).slice(0, 2), ['record start@d0:s0', 'wait start@d0:s1']);
  });

  it("joins each device's streams into its first, ends each device there, then ends on the first device after them all", () => {
    assert.deepEqual(show(spanning(false).epilogue), [
      'record join:d0:s1@d0:s1',
      'wait join:d0:s1@d0:s0',
      'record end:d0@d0:s0',
      'record join:d1:s1@d1:s1',
      'wait join:d1:s1@d1:s0',
      'record end:d1@d1:s0',
      'wait end:d1@d0:s0',
      'record end@d0:s0',
    ]);
  });

  it("creates each device's events on that device and probes each device from its own start to its own end", () => {
    const s = spanning(false);
    assert.deepEqual(s.events, [
      { id: 'start', timing: true },
      { id: 'end', timing: true },
      { id: 'end:d0', timing: true, device: 0 },
      { id: 'join:d0:s1', timing: false, device: 0 },
      { id: 'start:d1', timing: true, device: 1 },
      { id: 'end:d1', timing: true, device: 1 },
      { id: 'join:d1:s1', timing: false, device: 1 },
    ]);
    assert.deepEqual(s.probes, [
      { begin: 'start', end: 'end:d0', device: 0 },
      { begin: 'start:d1', end: 'end:d1', device: 1 },
    ]);
    assert.deepEqual(
      [s.id, s.device, s.issue, s.gated, s.streams.map((x) => x.id)],
      ['peer:d0<>d1', 0, 'stream', false, ['d0:s0', 'd0:s1', 'd1:s0', 'd1:s1']],
    );
  });

  it('refuses a device without a stream', () => {
    for (const parts of [
      [],
      [{ device: 0, streams: [] }],
      [
        { device: 0, streams: streams(0, 1) },
        { device: 1, streams: [] },
      ],
    ]) {
      assert.throws(
        () => spanningSchedule({ role, description: '', parts, body: [], ranges: [], verify: false, gated: false }),
        {
          name: 'RangeError',
          message: 'schedule peer:d0<>d1 needs a stream on every device',
        },
      );
    }
  });
});

describe('the input split across two devices', () => {
  const p = plan(TWO('devices: [0, 1]\n'));

  it("issues the two devices' chunks in turn, a chunk's ops together", () => {
    const together = byId(p, 'split:4x2:depth-first:d0+d1');
    assert.deepEqual(
      together.body.map((o) => ('chunk' in o ? o.chunk : null)),
      [0, 0, 0, 4, 4, 4, 1, 1, 1, 5, 5, 5, 2, 2, 2, 6, 6, 6, 3, 3, 3, 7, 7, 7],
    );
    assert.equal(
      together.description,
      'the input split across GPUs 0, 1, all at once: 4 chunks over 2 streams, depth-first on each',
    );
  });

  it('times each share alone over every chunk index, unverified, naming the elements it covers', () => {
    const alone = byId(p, 'split:4x2:depth-first:d0+d1:alone-d1');
    assert.equal(
      alone.description,
      "GPU 1's share alone (elements 2048 to 4095): 4 chunks over 2 streams, depth-first",
    );
    assert.deepEqual([alone.device, alone.verify, alone.ranges.length], [1, false, 8]);
    assert.deepEqual(
      alone.body.find((o) => o.kind === 'copy'),
      {
        kind: 'copy',
        stream: 's0',
        direction: 'h2d',
        buffer: 'x',
        hostOffset: 8192,
        deviceOffset: 0,
        bytes: 2048,
        chunk: 4,
      },
    );
  });

  it('copies each share both ways at once, on both devices together and on each alone', () => {
    assert.deepEqual(
      p.schedules.filter((s) => s.role.kind === 'split-link').map((s) => [s.id, s.description]),
      [
        ['split-link:d0+d1', "every GPU's share both ways at once, on GPUs 0, 1 together"],
        ['split-link:d0+d1:alone-d0', "GPU 0's share (elements 0 to 2047) both ways at once, alone"],
        ['split-link:d0+d1:alone-d1', "GPU 1's share (elements 2048 to 4095) both ways at once, alone"],
      ],
    );
    const together = byId(p, 'split-link:d0+d1');
    assert.deepEqual(together.ranges, [
      { index: 0, first: 0, count: 1024 },
      { index: 1, first: 1024, count: 1024 },
    ]);
    assert.deepEqual(
      together.streams.map((s) => s.id),
      ['d0:s0', 'd0:s1', 'd0:s2', 'd0:s3', 'd1:s0', 'd1:s1', 'd1:s2', 'd1:s3'],
    );
  });

  it('has link modes for a buffer copied both ways, and none when data moves one way only', () => {
    const oneWay = plan(
      TWO(
        'devices: [0, 1]\n',
        '{ chunks: 4, streams: 2 }',
        '  x: { type: float32, count: 4096, role: inout }\n  y: { type: float32, count: 4096, role: scratch }\n',
      ),
    );
    assert.equal(oneWay.schedules.filter((s) => s.role.kind === 'split-link').length, 3);
    const outOnly = plan(
      TWO(
        'devices: [0, 1]\n',
        '{ chunks: 4, streams: 2 }',
        '  x: { type: float32, count: 4096, role: scratch }\n  y: { type: float32, count: 4096, role: out }\n',
      ),
    );
    assert.deepEqual(
      outOnly.schedules.filter((s) => s.role.kind === 'split-link' || s.role.kind === 'link'),
      [],
    );
  });

  it('holds the split and its links behind the gate when asked to', () => {
    const gated = plan(TWO('devices: [0, 1]\n'), true);
    assert.deepEqual(
      gated.schedules.filter((s) => s.role.kind === 'split' || s.role.kind === 'split-link').map((s) => s.gated),
      [true, true, true, true, true, true],
    );
  });

  it('refuses more devices than rows of the alignment the elements hold, saying what to do', () => {
    assert.throws(
      () => plan(TWO('devices: [0, 1]\n', '{ chunks: 1, streams: 2, align: 4096 }')),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(error.message, '4096 elements in rows of 4096 cannot be split across 2 devices.');
        assert.equal(error.hint, 'Use larger buffers or fewer devices.');
        return true;
      },
    );
  });

  it('notes that a graph replay is measured on the first device only, and only in graph mode', () => {
    assert.deepEqual(plan(TWO('devices: [0, 1]\n', '{ chunks: 4, streams: 2, mode: graph }')).notes, [
      'Graph replay is measured on the first device only; the modes that span devices issue op by op.',
    ]);
    assert.deepEqual(p.notes, []);
  });
});

describe('one pipeline handed from one device to another', () => {
  const text = readFileSync(join(builtinConfigsDir(), 'cross-device.yaml'), 'utf8');

  it("issues every chunk's first half before any second half breadth-first, each handed over by an event on the first device", () => {
    const p = plan(text.replace('order: depth-first', 'order: breadth-first'));
    const cross = p.schedules.find((s) => s.role.kind === 'cross-device') as Schedule;
    const waits = cross.body.flatMap((o, i) => (o.kind === 'wait' ? [i] : []));
    const records = cross.body.flatMap((o, i) => (o.kind === 'record' ? [i] : []));
    assert.ok(Math.max(...records) < Math.min(...waits), 'every handoff recorded before the first is waited on');
    assert.deepEqual(
      cross.events.filter((e) => e.id.startsWith('handoff:')),
      cross.ranges.map((r) => ({ id: `handoff:${r.index}`, timing: false, device: 0 })),
    );
  });

  it('says what runs where, and times the whole copy between the devices alone, on one stream', () => {
    const p = plan(text);
    const cross = p.schedules.find((s) => s.role.kind === 'cross-device') as Schedule;
    assert.match(
      cross.description,
      /^\d+ chunks over \d+ streams per GPU, depth-first: scale on GPU 0, scaled copied to GPU 1, stencil there$/,
    );
    const peer = p.schedules.find((s) => s.role.kind === 'peer') as Schedule;
    assert.equal(peer.description, 'scaled copied whole from GPU 0 to GPU 1, one stream');
    assert.deepEqual(peer.body, [
      {
        kind: 'peer',
        stream: 's0',
        buffer: 'scaled',
        from: 0,
        to: 1,
        deviceOffset: 0,
        bytes: 128 * 2 ** 20,
        chunk: null,
      },
    ]);
    assert.deepEqual(
      [peer.device, peer.verify, peer.streams],
      [0, false, [{ id: 's0', kind: 'non-blocking', device: 0 }]],
    );
  });
});

describe("probe's copies between two devices", () => {
  it('copies a scratch buffer of the bytes asked for each way alone and both ways at once, ungated, the second device holding a copy', () => {
    const p = peerBandwidthPlan(1024, 2, 3);
    assert.deepEqual(p.buffers, [
      {
        name: 'peer',
        type: 'uint8',
        elementBytes: 1,
        itemSize: 1,
        elements: 1024,
        bytes: 1024,
        role: 'scratch',
        init: { kind: 'constant', value: 1 },
        hostMemory: 'pinned',
      },
    ]);
    assert.deepEqual(
      p.schedules.map((s) => [s.id, s.device, s.gated, s.description, s.bytes]),
      [
        ['peer:d2>d3', 2, false, '1024 bytes from GPU 2 to GPU 3', { h2d: 0, d2h: 0, peer: 1024 }],
        ['peer:d3>d2', 3, false, '1024 bytes from GPU 3 to GPU 2', { h2d: 0, d2h: 0, peer: 1024 }],
        [
          'peer:d2<>d3',
          2,
          false,
          '1024 bytes each way between GPU 2 and GPU 3 at once',
          { h2d: 0, d2h: 0, peer: 2048 },
        ],
      ],
    );
    assert.deepEqual(p.schedules[0]?.body, [
      { kind: 'peer', stream: 's0', buffer: 'peer', from: 2, to: 3, deviceOffset: 0, bytes: 1024, chunk: null },
    ]);
    assert.deepEqual(
      [p.name, p.devices, p.kernels, p.notes, p.host, p.placements],
      ['peer-2-3', [2, 3], [], [], null, [{ device: 3, elements: 1024, base: 0 }]],
    );
    assert.deepEqual(p.pipeline, { elements: 1024, align: 1, requestedChunks: 1, requestedStreams: 1 });
    assert.deepEqual(p.device, { elements: 1024, ring: null, budgetBytes: null });
  });
});
