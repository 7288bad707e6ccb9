import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CrossDeviceSchema, DeviceTimesSchema, PeerPathSchema, ScalingSchema } from '../../src/model/devices.js';
import { ModeRoleSchema } from '../../src/model/mode.js';
import { scheduleOps } from '../../src/model/schedule.js';
import { TracedRepBaseSchema } from '../../src/model/timeline.js';

// The Result's schemas for several devices, a traced rep and a mode's role (src/model/): a parsed document keeps
// every field it was written with, so a Result loaded and written back loses nothing a JSON reader (a CI job) reads.

describe("a split run's scaling schema", () => {
  const scaling = {
    devices: [0, 1],
    oneDevice: { mode: 'overlapped:8x2', device: 0, medianMs: 10.2, gbPerSecond: 26.3 },
    together: { mode: 'split:8x2', medianMs: 5.6, gbPerSecond: 47.9, hostIssueMs: 0.8, issuedOps: 96 },
    speedup: 1.82,
    efficiency: 0.91,
    perDevice: [
      { device: 0, bytes: 134217728, togetherMs: 5.5, gbPerSecond: 24.4, aloneMs: 5.1, aloneGbPerSecond: 26.3 },
      { device: 1, bytes: 134217728, togetherMs: 5.6, gbPerSecond: 24.0, aloneMs: null, aloneGbPerSecond: null },
    ],
    links: {
      perDevice: [
        { device: 0, aloneGbPerSecond: 50.1, togetherGbPerSecond: 44.2 },
        { device: 1, aloneGbPerSecond: null, togetherGbPerSecond: 43.9 },
      ],
      togetherGbPerSecond: 88.1,
      ceiling: 1.76,
    },
    limit: 'memory system',
    why: 'the links together move 88.1 GB/s, 1.76 times one device',
  };

  it("keeps one device's and every device's figures, each device's share and the links", () => {
    assert.deepEqual(ScalingSchema.parse(scaling), scaling);
  });

  it('keeps a run whose data moves one way only as no links', () => {
    assert.equal(ScalingSchema.parse({ ...scaling, links: null }).links, null);
  });

  it("keeps each device's own times and median, and a peer path", () => {
    const times = { device: 1, samplesMs: [5.5, 5.6, 5.4], medianMs: 5.5 };
    assert.deepEqual(DeviceTimesSchema.parse(times), times);
    const path = { from: 0, to: 1, path: 'staged' };
    assert.deepEqual(PeerPathSchema.parse(path), path);
  });

  it('refuses a peer path, a cross-device path or a scaling limit it does not name', () => {
    assert.equal(PeerPathSchema.safeParse({ from: 0, to: 1, path: 'nvlink' }).success, false);
    assert.equal(ScalingSchema.safeParse({ ...scaling, limit: 'links' }).success, false);
  });

  it("keeps a cross-device pipeline's figures and its peer copy", () => {
    const cross = {
      mode: 'cross-device:8x2',
      from: 0,
      to: 1,
      path: 'peer',
      medianMs: 7.1,
      serialMs: 12.4,
      speedup: 1.75,
      oneDeviceMs: 6.8,
      peerCopy: { bytes: 67108864, medianMs: 1.4, gbPerSecond: 47.9 },
    };
    assert.deepEqual(CrossDeviceSchema.parse(cross), cross);
    assert.equal(CrossDeviceSchema.safeParse({ ...cross, path: 'pcie' }).success, false);
  });
});

describe("a traced rep's schema", () => {
  it("keeps its streams, ops, timing source and a host stage's worker tasks", () => {
    const rep = {
      mode: 'overlapped:2x2',
      device: 0,
      totalMs: 3.2,
      issueMs: 0.3,
      originEpochMs: 1764355200000,
      streams: [
        { id: 's0', flags: 'non-blocking', priority: -1 },
        { id: 's1', flags: 'default', priority: null },
      ],
      ops: [
        {
          mode: 'overlapped:2x2',
          device: 0,
          stream: 's0',
          kind: 'kernel',
          chunk: 0,
          buffer: null,
          kernel: 'scale',
          bytes: 4096,
          startMs: 0.1,
          endMs: 0.4,
          issuedMs: 0.02,
          engineStartMs: 0.15,
          engineEndMs: 0.39,
        },
      ],
      timing: { source: 'cupti', note: 'CUPTI activity records' },
      workerTasks: [
        { worker: 0, chunk: 0, startMs: 0.5, endMs: 0.9 },
        { worker: 1, chunk: null, startMs: 0.6, endMs: 1.1 },
      ],
    };
    assert.deepEqual(TracedRepBaseSchema.parse(rep), rep);
  });
});

describe("a mode's role schema", () => {
  const layout = { chunks: 4, streams: 2, order: 'breadth-first', topology: 'chunk-per-stream' };
  const roles = [
    { kind: 'serial' },
    { kind: 'stage', stage: 'h2d' },
    { kind: 'stage', stage: 'kernel', kernel: 'scale' },
    { kind: 'stage', stage: 'collective', collective: 'allreduce', buckets: 4 },
    { kind: 'link', copiesPerDirection: 8, streamsPerDirection: 2 },
    { kind: 'kernels-chunked', layout },
    { kind: 'latency', kernel: 'urgent', priorities: true },
    { kind: 'split', layout, devices: [0, 1], alone: 1 },
    { kind: 'split-link', devices: [0, 1], alone: 0 },
    { kind: 'cross-device', layout, from: 0, to: 1, after: 'scale' },
    { kind: 'op-cost', op: 'h2d' },
    { kind: 'issue-cost', op: 'record-timing' },
    { kind: 'peer', from: 1, to: 0 },
  ];

  for (const role of roles) {
    it(`keeps every field of a ${role.kind} role`, () => {
      assert.deepEqual(ModeRoleSchema.parse(role), role);
    });
  }

  it('refuses a collective stage of no buckets', () => {
    const role = { kind: 'stage', stage: 'collective', collective: 'allreduce', buckets: 0 };
    assert.equal(ModeRoleSchema.safeParse(role).success, false);
  });
});

describe("a rep's ops", () => {
  it('are the prologue, the body and the epilogue in host issue order', () => {
    const ops = scheduleOps({ prologue: ['gate', 'start'], body: ['h2d', 'kernel'], epilogue: ['join', 'end'] });
    assert.deepEqual(ops, ['gate', 'start', 'h2d', 'kernel', 'join', 'end']);
  });
});
