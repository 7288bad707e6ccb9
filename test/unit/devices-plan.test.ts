import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveDevices } from '../../src/config/devices.js';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan } from '../../src/plan/build.js';
import { peerBandwidthPlan } from '../../src/plan/devices.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { happensBefore } from '../../src/plan/order.js';
import { type Op, type Plan, type Schedule, scheduleDevices, scheduleOps } from '../../src/plan/types.js';
import { builtinConfigsDir } from '../../src/paths.js';

const TWO = (extra = '', pipeline = '{ chunks: 8, streams: 2 }', elements = 1 << 16) =>
  `buffers:\n  x: { type: float32, count: ${elements}, role: in }\n  y: { type: float32, count: ${elements}, role: out }\n` +
  'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n' +
  `pipeline: ${pipeline}\n${extra}`;

function load(text: string, overrides = {}) {
  return parseConfigText(text, '/cfg/t.yaml', overrides);
}

function plan(text: string, devices?: readonly number[]): Plan {
  const { config, locate } = load(text);
  return buildPlan(config, resolveKernels(config, locate), { gate: true, ...(devices ? { devices } : {}) });
}

function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail('expected a usage error');
}

const byKind = (p: Plan, kind: Schedule['role']['kind'], alone?: number) =>
  p.schedules.filter((s) => s.role.kind === kind && ('alone' in s.role ? s.role.alone : undefined) === alone);

describe('devices in the config', () => {
  it('takes a list or all, and makes the first listed device the one-device modes run on', () => {
    assert.deepEqual(load(TWO('devices: [1, 0]')).config.devices, [1, 0]);
    assert.equal(load(TWO('devices: [1, 0]')).config.device, 1);
    assert.equal(load(TWO('devices: all')).config.devices, 'all');
    assert.deepEqual(load(TWO(), { devices: [0, 1] }).config.devices, [0, 1]);
  });

  it('refuses a device listed twice, devices beside device, and a device-memory budget, naming the field', () => {
    assert.match(usageError(() => load(TWO('devices: [0, 0]'))).message, /t\.yaml:\d+:\d+: device 0 is listed twice/);
    assert.match(
      usageError(() => load(TWO('device: 1\ndevices: [0, 1]'))).message,
      /give device \(one GPU\) or devices \(several\), not both/,
    );
    assert.match(
      usageError(() => load(TWO('devices: [0, 1]\ndeviceMemory: 1MiB'))).message,
      /cannot be combined with devices yet/,
    );
    assert.match(usageError(() => load(TWO('devices: [zero]'))).message, /expected all or a list of device indexes/);
  });

  it('checks a handoff: it needs two devices and a kernel with others after it', () => {
    const multi = readFileSync(join(builtinConfigsDir(), 'multi-kernel.yaml'), 'utf8');
    assert.match(
      usageError(() => load(multi.replace('align: 4096', 'align: 4096\n  handoff: { after: scale }'))).message,
      /needs devices: \[first, second\]/,
    );
    const two = multi.replace('align: 4096', 'align: 4096\n  handoff: { after: stencil }') + 'devices: [0, 1]\n';
    assert.match(usageError(() => load(two)).message, /"stencil" is the last kernel/);
    const three = multi.replace('align: 4096', 'align: 4096\n  handoff: { after: scale }') + 'devices: [0, 1, 2]\n';
    assert.match(usageError(() => load(three)).message, /a handoff spans exactly two devices; devices lists 3/);
  });

  it('hands over the buffers both halves name: the scaled image of the cross-device config', () => {
    const { config } = load(readFileSync(join(builtinConfigsDir(), 'cross-device.yaml'), 'utf8'));
    assert.deepEqual(config.pipeline.handoff, {
      after: 'scale',
      first: ['scale'],
      second: ['stencil'],
      buffers: ['scaled'],
    });
  });

  it('counts all, checks listed devices exist, and wants exactly two for a handoff', () => {
    assert.deepEqual(resolveDevices('all', null, 3, 'here'), [0, 1, 2]);
    assert.deepEqual(resolveDevices([1, 0], null, 2, 'here'), [1, 0]);
    assert.match(
      usageError(() => resolveDevices([0, 2], null, 2, 'f.yaml:3:1')).message,
      /f\.yaml:3:1: device 2 does not exist: this machine has 2 CUDA devices/,
    );
    const handoff = { after: 'a', first: ['a'], second: ['b'], buffers: ['s'] };
    assert.match(usageError(() => resolveDevices('all', handoff, 4, 'here')).message, /devices: all found 4/);
  });
});

describe('the input split across devices', () => {
  const p = plan(TWO('devices: [0, 1]'));
  const together = byKind(p, 'split')[0] as Schedule;
  const copies = (s: Schedule) => s.body.filter((op): op is Extract<Op, { kind: 'copy' }> => op.kind === 'copy');
  const deviceOf = (s: Schedule, op: Op) => s.streams.find((x) => x.id === op.stream)?.device;

  it('keeps every one-device mode on the first device and adds the split together, each share alone, and the links', () => {
    assert.deepEqual(p.devices, [0, 1]);
    assert.ok(p.schedules.some((s) => s.role.kind === 'serial' && s.device === 0));
    assert.deepEqual(
      byKind(p, 'split', 0).map((s) => s.device),
      [0],
    );
    assert.deepEqual(
      byKind(p, 'split', 1).map((s) => s.device),
      [1],
    );
    assert.equal(byKind(p, 'split-link').length, 1);
    assert.deepEqual(scheduleDevices(together), [0, 1]);
    assert.equal(together.verify, true);
    assert.ok(
      byKind(p, 'split', 1).every((s) => !s.verify),
      'a share alone writes half the outputs: not verified',
    );
    assert.equal(new Set(p.schedules.map((s) => s.id)).size, p.schedules.length, 'schedule ids are unique');
  });

  it('moves every byte of the input once, half from each device, each device within its own buffers', () => {
    const elements = 1 << 16;
    const h2d = copies(together).filter((c) => c.direction === 'h2d');
    assert.equal(
      h2d.reduce((s, c) => s + c.bytes, 0),
      elements * 4,
    );
    const hostOffsets = h2d.map((c) => c.hostOffset).sort((a, b) => a - b);
    assert.equal(new Set(hostOffsets).size, hostOffsets.length);
    const onOne = h2d.filter((c) => deviceOf(together, c) === 1);
    assert.equal(
      onOne.reduce((s, c) => s + c.bytes, 0),
      (elements / 2) * 4,
    );
    assert.ok(
      onOne.every((c) => c.hostOffset >= (elements / 2) * 4),
      'device 1 copies the second half',
    );
    assert.ok(
      onOne.every((c) => c.deviceOffset + c.bytes <= (elements / 2) * 4),
      'into buffers that hold only its share',
    );
    assert.deepEqual(p.placements, [{ device: 1, elements: elements / 2, base: elements / 2 }]);
  });

  it('starts every device from one event on the first device and ends there after every device has joined', () => {
    const ops = scheduleOps(together);
    const before = happensBefore(ops);
    const start = ops.findIndex((op) => op.kind === 'record' && op.event === 'start');
    const end = ops.findIndex((op) => op.kind === 'record' && op.event === 'end');
    together.body.forEach((op) => {
      const i = ops.indexOf(op);
      assert.ok(before(start, i), `op ${i} after start`);
      assert.ok(before(i, end), `op ${i} before end`);
    });
    assert.deepEqual(
      together.probes?.map((probe) => probe.device),
      [0, 1],
    );
    const eventDevice = new Map(together.events.map((e) => [e.id, e.device ?? together.device]));
    for (const op of ops)
      if (op.kind === 'record')
        assert.equal(eventDevice.get(op.event), deviceOf(together, op), `event ${op.event} recorded on its own device`);
  });

  it("issues the devices' chunks in turn, so that neither waits for the other's whole rep without the gate", () => {
    const firstOfDevice1 = together.body.findIndex((op) => deviceOf(together, op) === 1);
    const lastOfDevice0 = together.body.map((op) => deviceOf(together, op)).lastIndexOf(0);
    assert.ok(firstOfDevice1 < lastOfDevice0);
  });

  it("builds one device's plan as before when the list has one device", () => {
    const one = plan(TWO('devices: [1]'));
    assert.deepEqual(one.devices, [1]);
    assert.equal(byKind(one, 'split').length, 0);
    assert.deepEqual(one.placements, []);
  });
});

describe('one pipeline across two devices', () => {
  const p = plan(readFileSync(join(builtinConfigsDir(), 'cross-device.yaml'), 'utf8'));
  const cross = p.schedules.find((s) => s.role.kind === 'cross-device') as Schedule;

  it('loads and scales on the first device, copies the scaled chunk over, filters and stores on the second', () => {
    assert.ok(cross);
    const ops = scheduleOps(cross);
    const before = happensBefore(ops);
    for (let chunk = 0; chunk < cross.ranges.length; chunk++) {
      const find = (match: (op: Op) => boolean) => {
        const i = ops.findIndex((op) => 'chunk' in op && op.chunk === chunk && match(op));
        assert.ok(i >= 0, `chunk ${chunk}`);
        return i;
      };
      const load = find((op) => op.kind === 'copy' && op.direction === 'h2d');
      const scale = find((op) => op.kind === 'kernel' && op.kernel === 'scale');
      const peer = find((op) => op.kind === 'peer');
      const stencil = find((op) => op.kind === 'kernel' && op.kernel === 'stencil');
      const store = find((op) => op.kind === 'copy' && op.direction === 'd2h');
      assert.ok(
        before(load, scale) && before(scale, peer) && before(peer, stencil) && before(stencil, store),
        `chunk ${chunk} in order`,
      );
      const device = (i: number) => cross.streams.find((s) => s.id === ops[i]?.stream)?.device;
      assert.deepEqual([device(load), device(scale), device(peer), device(stencil), device(store)], [0, 0, 0, 1, 1]);
    }
    assert.equal(cross.bytes.peer, 128 * 2 ** 20);
    assert.ok(cross.verify);
  });

  it('measures the peer copy alone, and gives the second device whole buffers', () => {
    const peer = p.schedules.find((s) => s.role.kind === 'peer');
    assert.deepEqual(peer?.role, { kind: 'peer', from: 0, to: 1 });
    assert.deepEqual(p.placements, [{ device: 1, elements: 32 * 2 ** 20, base: 0 }]);
  });
});

describe("probe's copies between two devices", () => {
  it("copies each way alone and both ways at once, each way from its own device's stream", () => {
    const p = peerBandwidthPlan(1024, 0, 1);
    assert.deepEqual(
      p.schedules.map((s) => s.id),
      ['peer:d0>d1', 'peer:d1>d0', 'peer:d0<>d1'],
    );
    const both = p.schedules[2] as Schedule;
    const peers = both.body.filter((op) => op.kind === 'peer');
    assert.deepEqual(
      peers.map((op) => [op.kind === 'peer' && op.from, both.streams.find((s) => s.id === op.stream)?.device]),
      [
        [0, 0],
        [1, 1],
      ],
    );
    assert.equal(both.bytes.peer, 2048);
  });
});

describe('a traced rep of a schedule that spans devices', () => {
  it("times each op from its own device's start and records one rep per device, each with its own streams", async () => {
    const { traceSchedule } = await import('../../src/plan/trace.js');
    const { timelineReps } = await import('../../src/measure/timeline.js');
    const p = plan(readFileSync(join(builtinConfigsDir(), 'cross-device.yaml'), 'utf8'));
    const cross = p.schedules.find((s) => s.role.kind === 'cross-device') as Schedule;
    const traced = traceSchedule(cross);
    const deviceOf = new Map(cross.streams.map((s) => [s.id, s.device]));
    for (const span of traced.spans) {
      const device = traced.schedule.events.find((e) => e.id === span.begin)?.device ?? cross.device;
      assert.equal(device, deviceOf.get(span.op.stream), `${span.begin} made on the device of its stream`);
    }
    const reps = timelineReps(
      {
        schedule: cross,
        totalMs: 3.1,
        issueMs: 0.2,
        deviceTotalsMs: [
          { device: 0, totalMs: 2.9 },
          { device: 1, totalMs: 3.05 },
        ],
        ops: traced.spans.map((span, i) => ({ span, startMs: i * 0.01, endMs: i * 0.01 + 0.005, issuedMs: i * 0.001 })),
      },
      () => 1024,
      () => ({ least: 0, greatest: -5 }),
    );
    assert.deepEqual(
      reps.map((r) => [r.device, r.totalMs]),
      [
        [0, 2.9],
        [1, 3.05],
      ],
    );
    const kinds = (device: number) =>
      [...new Set(reps.find((r) => r.device === device)?.ops.map((op) => op.kind))].sort();
    assert.deepEqual(kinds(0), ['h2d', 'kernel', 'peer']);
    assert.deepEqual(kinds(1), ['d2h', 'kernel']);
    assert.ok(reps.every((r) => r.streams.every((s) => s.id.startsWith(`d${r.device}:`))));
    assert.equal(reps[0]?.ops.find((op) => op.kind === 'peer')?.bytes, 8 * 2 ** 20);
  });
});

// Both cases are what a machine without a usable driver does (CI's); where a GPU answers they do not apply.
describe('--devices on the command line', {
  skip: gpuSkipReason() === null ? 'a GPU is present: these are the no-driver paths' : false,
}, () => {
  it('plans a split across the listed devices without a GPU, naming them in the header', async () => {
    const { runCli } = await import('../helpers/cli.js');
    const { code, stdout } = runCli(['run', '--devices', '0,1', '--dry-run']);
    assert.equal(code, 0);
    assert.match(stdout, /^Plan for balanced on device 0, 1: /);
    assert.match(
      stdout,
      /^mode split:16x4:depth-first:d0\+d1: the input split across GPUs 0, 1, all at once: .* on 8 streams on GPUs 0 and 1; H2D 256 MiB, D2H 256 MiB; its outputs will be verified$/m,
    );
  });

  it('cannot count `all` without a driver, and says to list them; nor take --device beside --devices', async () => {
    const { runCli } = await import('../helpers/cli.js');
    const all = runCli(['run', '--devices', 'all', '--dry-run']);
    assert.equal(all.code, 3);
    assert.match(
      all.stderr,
      /--devices all: devices: all is counted through the CUDA driver, which is not usable here/,
    );
    assert.match(all.stderr, /--devices 0,1/);
    const both = runCli(['run', '--device', '1', '--devices', '0,1', '--dry-run']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give device \(one GPU\) or devices \(several\), not both/);
  });
});
