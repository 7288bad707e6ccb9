import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Interrupted } from '../../src/errors.js';
import { measureBandwidth, measurePeerBandwidth } from '../../src/measure/bandwidth.js';
import { RepGuard } from '../../src/measure/guard.js';
import { BANDWIDTH_PIECES, bandwidthPlan } from '../../src/plan/build.js';
import { peerBandwidthPlan } from '../../src/plan/devices.js';
import type { Schedule } from '../../src/plan/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { tinySweepPlan } from '../helpers/tiny-sweep.js';

// The probe's bandwidth rows from event-timed copies (probe --bandwidth), which mutation testing found reached by no
// unit test: which modes become rows, with what direction, pieces, reps and rate.

const MB = 1_000_000;

/** Warm-ups take 100 ms (a row that kept them would show it); timed rep k of a schedule takes base + k ms. */
const timed = (base: (s: Schedule) => number) => (s: Schedule, n: number) => (n < 2 ? 100 : base(s) + (n - 2));

describe('host-device bandwidth rows', () => {
  const plan = bandwidthPlan(64 * MB, 'pinned', 0, true);
  const base = (s: Schedule) =>
    s.role.kind === 'link' ? 10 : s.role.kind === 'stage' && s.role.stage === 'h2d' ? 4 : 6;

  it('gives H2D, D2H and both at once, each from the median of the timed reps after 2 warm-ups', async () => {
    const runner = new FakeRunner(plan.schedules, plan.buffers, { gpuMs: timed(base) });
    const rows = await measureBandwidth(runner, 64 * MB, 'pinned', 5);
    assert.deepEqual(
      rows.map((r) => [r.direction, r.hostMemory, r.bytes, r.pieces, r.streamsPerDirection, r.samplesMs]),
      [
        ['h2d', 'pinned', 64 * MB, 1, 1, [4, 5, 6, 7, 8]],
        ['d2h', 'pinned', 64 * MB, 1, 1, [6, 7, 8, 9, 10]],
        ['bidirectional', 'pinned', 64 * MB, BANDWIDTH_PIECES, 2, [10, 11, 12, 13, 14]],
      ],
    );
    for (const s of plan.schedules) assert.equal(runner.repsOf(s.id), 7, `${s.id}: 2 warm-ups and 5 timed reps`);
    // 64 MB in a median of 6 ms is 10.67 GB/s; both ways move 128 MB in 12 ms.
    assert.deepEqual(
      rows.map((r) => [r.stats.median, Number(r.gbPerSecond.toFixed(4))]),
      [
        [6, 10.6667],
        [8, 8],
        [12, 10.6667],
      ],
    );
  });

  it('leaves kernels and pipelines out: only copies alone and the link are bandwidths', async () => {
    const { plan: tiny } = tinySweepPlan();
    const runner = new FakeRunner(tiny.schedules, tiny.buffers, { gpuMs: timed(() => 2) });
    const rows = await measureBandwidth(runner, 16_384, 'pageable', 3);
    assert.deepEqual(tiny.schedules.map((s) => (s.role.kind === 'stage' ? s.role.stage : s.role.kind)).sort(), [
      'd2h',
      'h2d',
      'issue-cost',
      'issue-cost',
      'issue-cost',
      'kernel',
      'kernels-chunked',
      'kernels-chunked',
      'link',
      'op-cost',
      'op-cost',
      'op-cost',
      'overlapped',
      'overlapped',
      'serial',
    ]);
    assert.deepEqual(
      rows.map((r) => [r.direction, r.hostMemory]),
      [
        ['h2d', 'pageable'],
        ['d2h', 'pageable'],
        ['bidirectional', 'pageable'],
      ],
    );
  });
});

describe('an interrupt during a bandwidth probe', () => {
  it('stops the host and the peer probes at the next rep, through the guard it was given', async () => {
    const controller = new AbortController();
    controller.abort('SIGINT');
    const guard = new RepGuard({ signal: controller.signal });
    const host = bandwidthPlan(MB, 'pinned', 0, false);
    await assert.rejects(
      measureBandwidth(new FakeRunner(host.schedules, host.buffers), MB, 'pinned', 2, guard),
      Interrupted,
    );
    const peer = peerBandwidthPlan(MB, 0, 1);
    await assert.rejects(
      measurePeerBandwidth(new FakeRunner(peer.schedules, peer.buffers), MB, 2, () => 'peer', guard),
      Interrupted,
    );
  });
});

describe('device-to-device bandwidth rows', () => {
  const plan = peerBandwidthPlan(32 * MB, 0, 1);
  const base = (s: Schedule) =>
    s.role.kind === 'peer' && s.role.both ? 8 : s.role.kind === 'peer' && s.role.from === 0 ? 2 : 4;
  const rowsWith = async (path: (from: number, to: number) => 'peer' | 'staged') =>
    measurePeerBandwidth(new FakeRunner(plan.schedules, plan.buffers, { gpuMs: timed(base) }), 32 * MB, 3, path);

  it('gives each way alone and both at once, with the bytes both ways moved over the median', async () => {
    const rows = await rowsWith(() => 'peer');
    assert.deepEqual(
      rows.map((r) => [r.from, r.to, r.bytes, r.bidirectional, r.path, r.samplesMs, r.stats.median, r.gbPerSecond]),
      [
        [0, 1, 32 * MB, false, 'peer', [2, 3, 4], 3, 32 / 3],
        [1, 0, 32 * MB, false, 'peer', [4, 5, 6], 5, 32 / 5],
        [0, 1, 32 * MB, true, 'peer', [8, 9, 10], 9, 64 / 9],
      ],
    );
  });

  it('calls a direction staged when its own way was staged, and both at once staged when either way was', async () => {
    const rows = await rowsWith((from) => (from === 1 ? 'staged' : 'peer'));
    assert.deepEqual(
      rows.map((r) => [r.from, r.to, r.bidirectional, r.path]),
      [
        [0, 1, false, 'peer'],
        [1, 0, false, 'staged'],
        [0, 1, true, 'staged'],
      ],
    );
    const reverse = await rowsWith((from) => (from === 0 ? 'staged' : 'peer'));
    assert.deepEqual(
      reverse.map((r) => r.path),
      ['staged', 'peer', 'staged'],
    );
  });

  it('has no rows from a plan without copies between devices', async () => {
    const host = bandwidthPlan(MB, 'pinned', 0, false);
    assert.deepEqual(await measurePeerBandwidth(new FakeRunner(host.schedules, host.buffers), MB, 2, () => 'peer'), []);
  });
});
