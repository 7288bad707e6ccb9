import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { BANDWIDTH_PIECES, bandwidthPlan, buildLayoutsPlan, buildPlan } from '../../src/plan/build.js';
import type { Plan, PlanKernel, Schedule } from '../../src/plan/types.js';

// What buildPlan and buildLayoutsPlan decide beyond the schedules' shapes: the notes a user reads when the planner
// makes fewer chunks or streams than asked, which measured parts a plan has for which config, the gate, the first
// order, and the copy-only plan of `probe --bandwidth`.

const yaml = (pipeline: string, extra = '', elements = 4096) =>
  `buffers:\n  x: { type: float32, count: ${elements}, role: in }\n  y: { type: float32, count: ${elements}, role: out }\n` +
  'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n' +
  `pipeline: ${pipeline}\n${extra}`;

function load(pipeline: string, extra = '', elements = 4096): { config: Config; kernels: PlanKernel[] } {
  const { config, locate } = parseConfigText(yaml(pipeline, extra, elements), '/cfg/b.yaml');
  return { config, kernels: resolveKernels(config, locate) };
}

function plan(
  pipeline: string,
  extra = '',
  elements = 4096,
  options: { gate?: boolean; devices?: readonly number[] } = {},
): Plan {
  const { config, kernels } = load(pipeline, extra, elements);
  return buildPlan(config, kernels, options);
}

const ids = (p: Plan, kind: Schedule['role']['kind']) =>
  p.schedules.filter((s) => s.role.kind === kind).map((s) => s.id);

describe('the notes of a plan', () => {
  it('says when equal chunks leave no room for the chunks asked for, and how large they came out', () => {
    assert.deepEqual(plan('{ chunks: 4, streams: 2 }', '', 9).notes, [
      '4 chunks asked for, 3 made: 9 elements in equal chunks of 3 leave no room for more.',
    ]);
  });

  it('says when there are fewer chunks than streams, and how many streams it used', () => {
    assert.deepEqual(plan('{ chunks: 3, streams: 5 }', '', 9).notes, [
      '5 streams asked for, 3 used: there are only 3 chunks.',
    ]);
  });

  it('says nothing when the chunks and streams are made exactly as asked', () => {
    assert.deepEqual(plan('{ chunks: 3, streams: 3 }', '', 9).notes, []);
  });

  it("keeps the config's own notes (a deprecated field read as its replacement) ahead of its own", () => {
    const notes = plan('{ chunks: 4, streams: 5, streamFlags: default }', '', 9).notes;
    assert.equal(notes.length, 3);
    assert.match(notes[0] ?? '', /streamFlags is deprecated; streamFlags: default is read as streamKind: blocking/);
    assert.deepEqual(notes.slice(1), [
      '4 chunks asked for, 3 made: 9 elements in equal chunks of 3 leave no room for more.',
      '5 streams asked for, 3 used: there are only 3 chunks.',
    ]);
  });

  it('says once that stage-per-stream ignores a stream count other than three, and nothing for three', () => {
    assert.deepEqual(plan('{ chunks: 4, streams: 2, topology: stage-per-stream }').notes, [
      'stage-per-stream uses three streams (load, compute, store); pipeline.streams 2 is not used.',
    ]);
    assert.deepEqual(plan('{ chunks: 4, streams: 3, topology: stage-per-stream }').notes, []);
    assert.deepEqual(plan('{ chunks: 4, streams: 2 }').notes, []);
  });
});

describe('the layouts of a sweep', () => {
  it('refuses a sweep of no layouts', () => {
    const { config, kernels } = load('{ chunks: 4 }');
    assert.throws(() => buildLayoutsPlan(config, kernels, [], ['depth-first']), {
      name: 'RangeError',
      message: 'a plan needs at least one layout',
    });
  });

  it('measures a layout asked for twice, or cut the same as another, once, in the place it was first asked for', () => {
    const { config, kernels } = load('{ chunks: 4 }', '', 9);
    const p = buildLayoutsPlan(
      config,
      kernels,
      [
        { chunks: 2, streams: 2 },
        { chunks: 4, streams: 3 },
        { chunks: 3, streams: 3 },
        { chunks: 2, streams: 2 },
      ],
      ['depth-first'],
    );
    assert.deepEqual(ids(p, 'overlapped'), [
      'overlapped:2x2:depth-first:chunk-per-stream',
      'overlapped:3x3:depth-first:chunk-per-stream',
    ]);
    assert.deepEqual(ids(p, 'kernels-chunked'), [
      'kernels-chunked:2x2:depth-first:chunk-per-stream',
      'kernels-chunked:3x3:depth-first:chunk-per-stream',
    ]);
    assert.deepEqual(p.pipeline, { elements: 9, align: 1, requestedChunks: 2, requestedStreams: 2 });
  });
});

describe('which measured parts a plan has', () => {
  it('times the kernels chunked as the layout runs them, in the first order asked for, for a chunk-per-stream layout', () => {
    const p = plan('{ chunks: 4, streams: 2, order: [breadth-first, depth-first] }');
    assert.deepEqual(ids(p, 'kernels-chunked'), ['kernels-chunked:4x2:breadth-first:chunk-per-stream']);
  });

  it('has no kernels-chunked part for stage-per-stream, whose kernels share one stream', () => {
    assert.deepEqual(ids(plan('{ chunks: 4, streams: 3, topology: stage-per-stream }'), 'kernels-chunked'), []);
  });

  it('has no kernels-chunked part under a ring, whose device buffers hold only its slots', () => {
    const p = plan('{ chunks: 16, streams: 4 }', 'deviceMemory: 64KiB\n', 64 * 1024);
    assert.deepEqual(p.device.ring, { slots: 2, slotElements: 4096 });
    assert.deepEqual(ids(p, 'kernels-chunked'), []);
  });

  it('times the layout without its host stage in the first order asked for', () => {
    const p = plan('{ chunks: 4, streams: 2, order: [breadth-first, depth-first] }', 'host: { function: checksum }\n');
    assert.deepEqual(ids(p, 'overlapped'), [
      'overlapped:4x2:breadth-first:chunk-per-stream:host-checksum',
      'overlapped:4x2:depth-first:chunk-per-stream:host-checksum',
      'overlapped:4x2:breadth-first:chunk-per-stream',
    ]);
  });

  it('measures latency in the first order asked for', () => {
    const text = yaml(
      '{ chunks: 4, streams: 2, order: [breadth-first, depth-first] }',
      'latency: { kernel: urgent, elements: 64 }\n',
    ).replace(
      'kernels:\n',
      'kernels:\n  - { name: urgent, source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 3 }] }\n',
    );
    const { config, locate } = parseConfigText(text, '/cfg/b.yaml');
    const p = buildPlan(config, resolveKernels(config, locate));
    assert.deepEqual(
      p.schedules.filter((s) => s.role.kind === 'latency').map((s) => s.description.split(',').slice(0, 2).join(',')),
      ['4 chunks over 2 streams, breadth-first', '4 chunks over 2 streams, breadth-first'],
    );
  });

  it('moves an op to a default stream only in a chunk-per-stream layout, even when handed a config that lists one for stage-per-stream', () => {
    const { config, kernels } = load('{ chunks: 4, streams: 3, topology: stage-per-stream }');
    const moved: Config = {
      ...config,
      pipeline: { ...config.pipeline, defaultStreamOps: [{ chunk: 1, op: 'kernel', stream: 'legacy' }] },
    };
    assert.deepEqual(ids(buildPlan(moved, kernels), 'overlapped'), ['overlapped:4x3:depth-first:stage-per-stream']);
  });

  it('refuses a device budget that holds no chunk even when the config was not checked by the loader', () => {
    const { config, kernels } = load('{ chunks: 4 }');
    assert.throws(() => buildPlan({ ...config, deviceMemory: 1024 }, kernels), {
      name: 'RangeError',
      message: 'one chunk of every buffer takes 8192 bytes, more than the budget of 1024 bytes',
    });
  });
});

describe('the gate and the devices', () => {
  const gated = (s: Schedule) => s.gated && s.prologue[0]?.kind === 'gate';

  it('holds every pipeline mode behind the gate when asked to, on one device and across two', () => {
    const p = plan('{ chunks: 4, streams: 2 }', 'devices: [0, 1]\n', 4096, { gate: true });
    const spanning = p.schedules.filter((s) => s.role.kind === 'split');
    assert.equal(spanning.length, 3);
    for (const s of [
      ...spanning,
      ...p.schedules.filter((x) => x.role.kind === 'serial' || x.role.kind === 'overlapped'),
    ])
      assert.ok(gated(s), s.id);
  });

  it('leaves the pipeline modes ungated by default, across devices too', () => {
    const p = plan('{ chunks: 4, streams: 2 }', 'devices: [0, 1]\n');
    assert.deepEqual(p.devices, [0, 1]);
    assert.deepEqual(
      p.schedules
        .filter((s) => s.role.kind !== 'op-cost' && (s.gated || s.prologue.some((o) => o.kind === 'gate')))
        .map((s) => s.id),
      [],
    );
  });

  it('refuses to plan devices: all before they were counted, and plans the counted list', () => {
    const { config, kernels } = load('{ chunks: 4, streams: 2 }', 'devices: all\n');
    assert.throws(() => buildPlan(config, kernels), {
      name: 'RangeError',
      message: 'devices: all must be counted before planning',
    });
    assert.deepEqual(buildPlan(config, kernels, { devices: [0, 1, 2] }).devices, [0, 1, 2]);
  });
});

describe('the plan of probe --bandwidth', () => {
  const MiB = 2 ** 20;

  it('copies a random upload and a download of the bytes asked for, each way alone, ungated, nothing else', () => {
    const p = bandwidthPlan(MiB, 'pageable', 1, false);
    assert.deepEqual(p.buffers, [
      {
        name: 'upload',
        type: 'uint8',
        elementBytes: 1,
        itemSize: 1,
        elements: MiB,
        bytes: MiB,
        role: 'in',
        init: { kind: 'random', seed: 7 },
        hostMemory: 'pageable',
      },
      {
        name: 'download',
        type: 'uint8',
        elementBytes: 1,
        itemSize: 1,
        elements: MiB,
        bytes: MiB,
        role: 'out',
        init: { kind: 'random', seed: 7 },
        hostMemory: 'pageable',
      },
    ]);
    assert.deepEqual(
      p.schedules.map((s) => [s.id, s.device, s.gated, s.bytes]),
      [
        ['h2d', 1, false, { h2d: MiB, d2h: 0 }],
        ['d2h', 1, false, { h2d: 0, d2h: MiB }],
      ],
    );
    assert.equal(p.name, 'bandwidth-pageable');
    assert.deepEqual(p.devices, [1]);
    assert.deepEqual(p.pipeline, { elements: MiB, align: 1, requestedChunks: 1, requestedStreams: 1 });
    assert.deepEqual(p.device, { elements: MiB, ring: null, budgetBytes: null });
    assert.deepEqual([p.notes, p.kernels, p.placements, p.host], [[], [], [], null]);
  });

  it('adds both ways at once in equal pieces over two streams a direction when asked for the bidirectional figure', () => {
    const p = bandwidthPlan(MiB, 'pinned', 0, true);
    assert.deepEqual(
      p.schedules.map((s) => s.id),
      ['h2d', 'd2h', 'bidirectional'],
    );
    const link = p.schedules[2] as Schedule;
    assert.equal(link.gated, false);
    assert.deepEqual(link.role, { kind: 'link', copiesPerDirection: BANDWIDTH_PIECES, streamsPerDirection: 2 });
    assert.deepEqual(link.bytes, { h2d: MiB, d2h: MiB });
  });
});
