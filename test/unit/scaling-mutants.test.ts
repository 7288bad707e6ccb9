import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crossDeviceOf, perDeviceTimes, scalingOf } from '../../src/measure/scaling.js';
import { summarize } from '../../src/measure/stats.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { ModeRole } from '../../src/vocabulary.js';

// What several devices bought (src/measure/scaling.ts), at the edges mutation testing found unpinned: which mode
// each figure comes from, and where each verdict's threshold lies.

const close = (actual: number | null | undefined, expected: number, what = '') =>
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what} ${actual} ≠ ${expected}`,
  );

const MB = 1e6;
let ids = 0;
function mode(role: ModeRole, medianMs: number, extra: Partial<ModeResult> = {}): ModeResult {
  ids += 1;
  return {
    id: `m${ids}`,
    role,
    device: 0,
    description: '',
    bytes: { h2d: 500 * MB, d2h: 500 * MB },
    samplesMs: [medianMs],
    hostIssueMs: [0.1],
    stats: summarize([medianMs]),
    stoppedBy: 'noise-stable',
    elapsedMs: 1,
    gateTimeouts: 0,
    smClockMHz: null,
    analysis: null,
    ...extra,
  } as ModeResult;
}
const times = (device: number, medianMs: number) => ({ device, samplesMs: [medianMs], medianMs });
const layout = { chunks: 16, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' } as const;
const split = (alone?: number) =>
  ({ kind: 'split', layout, devices: [0, 1], ...(alone === undefined ? {} : { alone }) }) as unknown as ModeRole;
const splitLink = (alone?: number) =>
  ({ kind: 'split-link', devices: [0, 1], ...(alone === undefined ? {} : { alone }) }) as unknown as ModeRole;

describe("each device's times of a schedule over several devices", () => {
  it('deals the probes out in turn, one per device per rep', () => {
    const probes = [
      { begin: 'a', end: 'b', device: 0 },
      { begin: 'c', end: 'd', device: 1 },
    ];
    assert.deepEqual(perDeviceTimes({ probes }, [1, 5, 3, 6, 2, 7]), [
      { device: 0, samplesMs: [1, 3, 2], medianMs: 2 },
      { device: 1, samplesMs: [5, 6, 7], medianMs: 6 },
    ]);
  });

  it('has none for a schedule without probes, or with a probe on no named device', () => {
    assert.equal(perDeviceTimes({}, [1]), null);
    assert.equal(perDeviceTimes({ probes: [] }, [1]), null);
    assert.equal(
      perDeviceTimes(
        {
          probes: [
            { begin: 'a', end: 'b', device: 0 },
            { begin: 'c', end: 'd' },
          ],
        },
        [1, 2],
      ),
      null,
    );
  });
});

describe("the split's scaling", () => {
  // Device 0 alone takes 2 ms on a share, device 1 2.5 ms; together each takes 2.2 ms; one device does the whole in 4
  // ms.
  const modes = (
    over: { together?: Partial<ModeResult>; hostIssueMs?: number[]; withAlone?: boolean; withLinks?: boolean } = {},
  ) => [
    mode({ kind: 'overlapped', layout }, 1, { device: 1 }),
    mode({ kind: 'overlapped', layout: { ...layout, issue: 'graph' } }, 1.5),
    mode({ kind: 'overlapped', layout }, 4, { bytes: { h2d: 1000 * MB, d2h: 1000 * MB } }),
    ...(over.withLinks
      ? [
          mode(splitLink(0), 1, { bytes: { h2d: 100 * MB, d2h: 100 * MB } }),
          mode(splitLink(1), 1, { bytes: { h2d: 100 * MB, d2h: 100 * MB } }),
        ]
      : []),
    ...(over.withAlone === false
      ? []
      : [
          mode(split(0), 2, { bytes: { h2d: 600 * MB, d2h: 600 * MB } }),
          mode(split(1), 2.5, { bytes: { h2d: 400 * MB, d2h: 400 * MB } }),
        ]),
    mode(split(), 2.2, {
      perDevice: [times(0, 2.2), times(1, 2.2)],
      hostIssueMs: over.hostIssueMs ?? [0.1, 0.3, 0.2],
      bytes: { h2d: 1000 * MB, d2h: 1000 * MB },
      ...over.together,
    }),
    ...(over.withLinks
      ? [mode(splitLink(), 1.6, { bytes: { h2d: 200 * MB, d2h: 200 * MB }, perDevice: [times(1, 1.25), times(0, 2)] })]
      : []),
  ];

  it("sets the split together against the first device's stream-issued pipeline, device by device against each alone", () => {
    const list = modes();
    const s = scalingOf(list, { gated: true, issuedOps: 300 });
    assert.ok(s);
    assert.deepEqual(s.devices, [0, 1]);
    close(s.speedup, 4 / 2.2);
    close(s.efficiency, 4 / 2.2 / 2);
    assert.equal(s.oneDevice.medianMs, 4);
    assert.deepEqual([s.oneDevice.device, s.oneDevice.gbPerSecond], [0, 2000 / 4]);
    assert.deepEqual([s.oneDevice.mode, s.together.mode], [list[2]?.id, list[5]?.id]);
    assert.deepEqual([s.together.medianMs, s.together.hostIssueMs, s.together.issuedOps], [2.2, 0.2, 300]);
    close(s.together.gbPerSecond, 2000 / 2.2);
    assert.deepEqual(
      s.perDevice.map((d) => [d.device, d.bytes, d.togetherMs, d.aloneMs]),
      [
        [0, 1200 * MB, 2.2, 2],
        [1, 800 * MB, 2.2, 2.5],
      ],
    );
    close(s.perDevice[0]?.gbPerSecond, 1200 / 2.2);
    close(s.perDevice[1]?.aloneGbPerSecond, 800 / 2.5);
    assert.equal(s.links, null);
  });

  it("has no scaling without a split together, or without the first device's pipeline", () => {
    assert.equal(
      scalingOf(
        modes().filter((m) => !(m.role.kind === 'split' && m.role.alone === undefined)),
        { gated: true, issuedOps: 0 },
      ),
      null,
    );
    assert.equal(
      scalingOf(
        modes().filter((m) => m.role.kind !== 'overlapped' || m.device !== 0 || m.role.layout.issue !== undefined),
        { gated: true, issuedOps: 0 },
      ),
      null,
    );
  });

  it('splits the bytes evenly where a device was not measured alone, and then has no alone time for it', () => {
    const s = scalingOf(modes({ withAlone: false }), { gated: true, issuedOps: 0 });
    assert.deepEqual(
      s?.perDevice.map((d) => [d.bytes, d.aloneMs, d.aloneGbPerSecond]),
      [
        [1000 * MB, null, null],
        [1000 * MB, null, null],
      ],
    );
    assert.deepEqual(
      scalingOf(modes({ together: { perDevice: undefined } }), { gated: true, issuedOps: 0 })?.perDevice,
      [],
    );
  });

  it("takes each device's alone figure from the split alone, not the link alone", () => {
    const s = scalingOf(modes({ withLinks: true }), { gated: true, issuedOps: 0 });
    assert.deepEqual(
      s?.perDevice.map((d) => d.aloneMs),
      [2, 2.5],
    );
  });

  it('gives each link alone and its rate with every link at once, and the ceiling they put on the split', () => {
    const s = scalingOf(modes({ withLinks: true }), { gated: true, issuedOps: 0 });
    assert.ok(s?.links);
    close(s.links.togetherGbPerSecond, 400 / 1.6);
    close(s.links.ceiling, 400 / 1.6 / (2000 / 4));
    assert.deepEqual(
      s.links.perDevice.map((d) => d.device),
      [0, 1],
    );
    close(s.links.perDevice[0]?.aloneGbPerSecond, 200);
    close(s.links.perDevice[0]?.togetherGbPerSecond, 200 / 2, "device 0's own time at once");
    close(s.links.perDevice[1]?.togetherGbPerSecond, 200 / 1.25);
    const lone = scalingOf([...modes(), mode(splitLink(), 1.6, { perDevice: [times(0, 2)] })], {
      gated: true,
      issuedOps: 0,
    });
    assert.deepEqual(
      lone?.links?.perDevice.map((d) => [d.aloneGbPerSecond, d.togetherGbPerSecond]),
      [
        [null, null],
        [null, null],
      ],
    );
    const unprobed = scalingOf([...modes(), mode(splitLink(0), 1), mode(splitLink(), 1.6)], {
      gated: true,
      issuedOps: 0,
    });
    assert.deepEqual(
      unprobed?.links?.perDevice.map((d) => d.togetherGbPerSecond),
      [null, null],
    );
  });

  it("blames host issue from 80% of the rep's GPU time on, unless the gate kept issue out of it", () => {
    const at = (hostIssueMs: number, gated: boolean) =>
      scalingOf(
        modes({
          hostIssueMs: [hostIssueMs],
          together: { stats: summarize([1]), perDevice: [times(0, 2.2), times(1, 2.2)] },
        }),
        { gated, issuedOps: 400 },
      );
    const s = at(0.8, false);
    assert.equal(s?.limit, 'host issue');
    assert.equal(
      s?.why,
      "issuing one rep for 2 devices took 0.800 ms on the one host thread (400 calls, 2.00 µs each), 80% of the rep's GPU time: the host issues no faster than the GPUs run",
    );
    assert.notEqual(at(0.79, false)?.limit, 'host issue');
    assert.notEqual(at(0.8, true)?.limit, 'host issue');
  });

  it("blames the memory system once a device's share takes 5% longer with all at once than alone", () => {
    const contended = (d0: number) =>
      scalingOf(modes({ together: { perDevice: [times(0, d0), times(1, 2.5)] } }), { gated: true, issuedOps: 0 });
    const s = contended(2.1);
    assert.equal(s?.limit, 'memory system');
    assert.equal(
      s?.why,
      "each device's share took up to 5% longer with all 2 at once than alone (alone: GPU 0 600.0 GB/s, GPU 1 320.0 GB/s; at once: " +
        "GPU 0 571.4 GB/s, GPU 1 320.0 GB/s): the devices share the host's memory system or PCIe root, which moves less than their links added up",
    );
    assert.notEqual(contended(2.09)?.limit, 'memory system');
    const unmeasured = scalingOf(
      [...modes({ withAlone: false, together: { perDevice: [times(0, 3), times(1, 2.2)] } }), mode(split(1), 2.2)],
      { gated: true, issuedOps: 0 },
    );
    assert.notEqual(unmeasured?.limit, 'memory system', 'a device never measured alone is no evidence of contention');
  });

  it('says what the links put on a contended split when they were measured', () => {
    const s = scalingOf(
      modes({ withLinks: true, together: { perDevice: [times(0, 2.2), times(1, 2.2)], stats: summarize([2.2]) } }).map(
        (m) => (m.role.kind === 'split' && m.role.alone === 0 ? { ...m, stats: summarize([1]) } : m),
      ),
      { gated: true, issuedOps: 0 },
    );
    assert.equal(s?.limit, 'memory system');
    assert.ok(
      s?.why.includes(
        "; the links, both ways at once, move 400.0 GB/s added up alone but 250.0 GB/s all at once, which caps this split at 0.50× one device's pipeline: ",
      ),
      s?.why,
    );
  });

  it('calls a split short of 90% of n× with no contention a matter of share size, and one at 90% unlimited', () => {
    const at = (oneMs: number) =>
      scalingOf(
        modes()
          .map((m) =>
            m.role.kind === 'overlapped' && m.device === 0 && m.role.layout.issue === undefined
              ? { ...m, stats: summarize([oneMs]) }
              : m,
          )
          .map((m) =>
            m.role.kind === 'split' && m.role.alone === undefined
              ? { ...m, stats: summarize([1]), perDevice: [times(0, 2), times(1, 2.5)] }
              : m,
          ),
        { gated: true, issuedOps: 0 },
      );
    assert.equal(at(1.8)?.limit, 'none');
    assert.equal(at(1.8)?.why, 'each device ran its share at its speed alone, and the split scaled to 90% of 2×');
    assert.equal(at(1.79)?.limit, 'share size');
    assert.ok(
      at(1.79)?.why.startsWith('each device ran its share at its speed alone (within 5%); what is missing from 2× '),
      at(1.79)?.why,
    );
  });
});

describe('the pipeline across two devices', () => {
  const cross = { kind: 'cross-device', from: 0, to: 1 } as ModeRole;
  const peer = (from: number, to: number, ms: number) =>
    mode({ kind: 'peer', from, to } as ModeRole, ms, { bytes: { h2d: 0, d2h: 0, peer: 4000 * MB } });
  const modes = [
    mode({ kind: 'serial' }, 99, { device: 1 }),
    mode({ kind: 'serial' }, 12),
    mode({ kind: 'overlapped', layout }, 7, { device: 1 }),
    mode({ kind: 'overlapped', layout: { ...layout, issue: 'graph' } }, 6.5),
    mode({ kind: 'overlapped', layout }, 6),
    peer(1, 0, 0.5),
    peer(0, 2, 0.6),
    peer(2, 1, 0.7),
    peer(0, 1, 0.4),
    mode(cross, 4),
  ];

  it('sets it against the serial run and the stream-issued pipeline of the device it starts on, with the peer copy it makes', () => {
    const c = crossDeviceOf(modes, [
      { from: 1, to: 0, path: 'peer' },
      { from: 0, to: 2, path: 'peer' },
      { from: 2, to: 1, path: 'peer' },
      { from: 0, to: 1, path: 'staged' },
    ]);
    assert.ok(c);
    assert.deepEqual(
      [c.from, c.to, c.path, c.medianMs, c.serialMs, c.speedup, c.oneDeviceMs],
      [0, 1, 'staged', 4, 12, 3, 6],
    );
    assert.deepEqual(c.peerCopy, { bytes: 4000 * MB, medianMs: 0.4, gbPerSecond: 4000 / 0.4 });
    assert.equal(crossDeviceOf(modes, [{ from: 0, to: 1, path: 'peer' }])?.path, 'peer');
    assert.equal(crossDeviceOf(modes, [])?.path, 'staged');
  });

  it('has no stream-issued pipeline or peer copy to show where none was measured, and nothing without its serial run', () => {
    const bare = crossDeviceOf(
      modes.filter((m) => m.role.kind === 'serial' || m.role.kind === 'cross-device'),
      [],
    );
    assert.deepEqual([bare?.oneDeviceMs, bare?.peerCopy], [null, null]);
    assert.equal(
      crossDeviceOf(
        modes.filter((m) => !(m.role.kind === 'serial' && m.device === 0)),
        [],
      ),
      null,
    );
    assert.equal(
      crossDeviceOf(
        modes.filter((m) => m.role.kind !== 'cross-device'),
        [],
      ),
      null,
    );
  });
});
