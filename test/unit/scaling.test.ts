import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crossDeviceOf, perDeviceTimes, scalingOf } from '../../src/measure/scaling.js';
import { summarize } from '../../src/measure/stats.js';
import { devicesLines } from '../../src/report/devices.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { ModeRole, OverlapLayout } from '../../src/vocabulary.js';
import { modeId } from '../../src/vocabulary.js';

const MiB = 2 ** 20;
const LAYOUT: OverlapLayout = { chunks: 16, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' };

function mode(
  role: ModeRole,
  device: number,
  medianMs: number,
  bytes: ModeResult['bytes'],
  extra: Partial<ModeResult> = {},
): ModeResult {
  const samplesMs = [medianMs * 0.99, medianMs, medianMs * 1.01];
  return {
    id: modeId(role),
    role,
    device,
    description: '',
    bytes,
    samplesMs,
    hostIssueMs: [0.3, 0.3, 0.3],
    stats: summarize(samplesMs),
    stoppedBy: 'noise-target',
    elapsedMs: 10,
    gateTimeouts: 0,
    smClockMHz: null,
    analysis: null,
    ...extra,
  };
}

const half = { h2d: 128 * MiB, d2h: 128 * MiB };
const whole = { h2d: 256 * MiB, d2h: 256 * MiB };
const devices = [0, 1];

/** The balanced config over two devices, with each share's time at once and alone as given. */
function splitModes(
  together: [number, number],
  alone: [number, number],
  links?: { alone: number; together: [number, number]; all: number },
): ModeResult[] {
  return [
    mode({ kind: 'serial' }, 0, 12.55, whole),
    mode({ kind: 'overlapped', layout: LAYOUT }, 0, 5.9, whole),
    mode({ kind: 'split', layout: LAYOUT, devices }, 0, Math.max(...together), whole, {
      perDevice: together.map((ms, device) => ({ device, samplesMs: [ms], medianMs: ms })),
    }),
    ...alone.map((ms, device) => mode({ kind: 'split', layout: LAYOUT, devices, alone: device }, device, ms, half)),
    ...(links
      ? [
          mode({ kind: 'split-link', devices }, 0, links.all, whole, {
            perDevice: links.together.map((ms, device) => ({ device, samplesMs: [ms], medianMs: ms })),
          }),
          ...devices.map((device) => mode({ kind: 'split-link', devices, alone: device }, device, links.alone, half)),
        ]
      : []),
  ];
}

describe('how a split across devices scaled', () => {
  it("reads each device's own times out of probes taken device by device, rep by rep", () => {
    const times = perDeviceTimes(
      {
        probes: [
          { begin: 'a', end: 'b', device: 0 },
          { begin: 'c', end: 'd', device: 1 },
        ],
      },
      [3.0, 3.2, 3.1, 3.3, 2.9, 3.4],
    );
    assert.deepEqual(
      times?.map((t) => [t.device, t.samplesMs, t.medianMs]),
      [
        [0, [3.0, 3.1, 2.9], 3.0],
        [1, [3.2, 3.3, 3.4], 3.3],
      ],
    );
    assert.equal(
      perDeviceTimes({ probes: [{ begin: 'a', end: 'b' }] }, [1]),
      null,
      "a latency mode's probes are not devices",
    );
  });

  it("blames the host's memory system when each share runs slower at once than alone, with the links' ceiling", () => {
    const s = scalingOf(splitModes([3.754, 3.777], [3.033, 3.009], { alone: 2.72, together: [3.27, 3.28], all: 3.3 }), {
      gated: true,
      issuedOps: 122,
    });
    assert.ok(s);
    assert.equal(s.limit, 'memory system');
    assert.equal(s.speedup.toFixed(3), (5.9 / 3.777).toFixed(3));
    assert.equal(s.efficiency.toFixed(3), (5.9 / 3.777 / 2).toFixed(3));
    assert.deepEqual(
      s.perDevice.map((d) => [d.device, d.togetherMs, d.aloneMs]),
      [
        [0, 3.754, 3.033],
        [1, 3.777, 3.009],
      ],
    );
    assert.equal(s.links?.togetherGbPerSecond.toFixed(1), ((512 * MiB) / 3.3e6).toFixed(1));
    assert.equal(s.links?.ceiling.toFixed(3), ((512 * MiB) / 3.3 / ((512 * MiB) / 5.9)).toFixed(3));
    assert.match(s.why, /up to 26% longer with all 2 at once than alone/);
    assert.match(
      s.why,
      /move 197\.4 GB\/s added up alone but 162\.7 GB\/s all at once, which caps this split at 1\.79× one device's pipeline/,
    );
  });

  it('says the share is too short when each device keeps its alone speed but the split stays under 90% of n×', () => {
    const s = scalingOf(splitModes([3.5, 3.52], [3.45, 3.5]), { gated: true, issuedOps: 122 });
    assert.equal(s?.limit, 'share size');
    assert.match(s?.why ?? '', /filling and draining a share/);
  });

  it('says the split scaled when each device keeps its speed and the split reaches 90% of n×', () => {
    const s = scalingOf(splitModes([3.0, 3.05], [3.0, 3.02]), { gated: true, issuedOps: 122 });
    assert.equal(s?.limit, 'none');
    assert.match(s?.why ?? '', /scaled to 97% of 2×/);
  });

  it('blames the one issuing thread when, without the gate, issuing a rep takes most of its GPU time', () => {
    const modes = splitModes([3.0, 3.05], [3.0, 3.02]).map((m) =>
      m.role.kind === 'split' && m.role.alone === undefined ? { ...m, hostIssueMs: [2.9, 2.9, 2.9] } : m,
    );
    const ungated = scalingOf(modes, { gated: false, issuedOps: 1000 });
    assert.equal(ungated?.limit, 'host issue');
    assert.match(
      ungated?.why ?? '',
      /2\.900 ms on the one host thread \(1000 calls, 2\.90 µs each\), 95% of the rep's GPU time/,
    );
    assert.equal(
      scalingOf(modes, { gated: true, issuedOps: 1000 })?.limit,
      'none',
      'behind the gate, issue time is not GPU time',
    );
  });

  it('has nothing to say of a one-device run', () => {
    assert.equal(
      scalingOf(
        splitModes([3, 3], [3, 3]).filter((m) => m.role.kind !== 'split'),
        { gated: true, issuedOps: 0 },
      ),
      null,
    );
  });

  it('prints the figures and the limit under one heading', () => {
    const scaling =
      scalingOf(splitModes([3.754, 3.777], [3.033, 3.009], { alone: 2.72, together: [3.27, 3.28], all: 3.3 }), {
        gated: true,
        issuedOps: 122,
      }) ?? undefined;
    const modes = splitModes([3.754, 3.777], [3.033, 3.009]);
    const lines = devicesLines({ scaling, modes });
    assert.equal(lines[0], 'several GPUs (0, 1), the input split across them, 16 chunks × 4 streams on each:');
    assert.match(
      lines[2] ?? '',
      /all 2 at once: 3\.777 ms, 142\.1 GB\/s together: 1\.56× one device, 78% scaling efficiency/,
    );
    assert.match(
      lines[3] ?? '',
      /GPU 0: its share \(256 MiB copied\) in 3\.754 ms at once, 71\.5 GB\/s; alone 3\.033 ms, 88\.5 GB\/s/,
    );
    assert.match(
      lines.join('\n'),
      /links, each share both ways at once: alone GPU 0 98\.7 GB\/s, GPU 1 98\.7 GB\/s; all at once 162\.7 GB\/s, 1\.79× one device's pipeline rate/,
    );
    assert.match(lines[lines.length - 1] ?? '', /^ {2}limit: memory system: /);
  });
});

describe('a pipeline across two devices', () => {
  const modes = [
    mode({ kind: 'serial' }, 0, 5.122, { h2d: 128 * MiB, d2h: 128 * MiB }),
    mode({ kind: 'overlapped', layout: LAYOUT }, 0, 3.003, { h2d: 128 * MiB, d2h: 128 * MiB }),
    mode({ kind: 'peer', from: 0, to: 1 }, 0, 0.349, { h2d: 0, d2h: 0, peer: 128 * MiB }),
    mode({ kind: 'cross-device', layout: LAYOUT, from: 0, to: 1, after: 'scale' }, 0, 3.008, {
      h2d: 128 * MiB,
      d2h: 128 * MiB,
      peer: 128 * MiB,
    }),
  ];

  it('compares it with serial and with the same layout on the first device, and says how the chunks crossed', () => {
    const c = crossDeviceOf(modes, [{ from: 0, to: 1, path: 'peer' }]);
    assert.ok(c);
    assert.equal(c.speedup.toFixed(3), (5.122 / 3.008).toFixed(3));
    assert.equal(c.oneDeviceMs, 3.003);
    assert.equal(c.peerCopy?.gbPerSecond.toFixed(1), ((128 * MiB) / 0.349e6).toFixed(1));
    const lines = devicesLines({ crossDevice: c, modes });
    assert.equal(lines[0], 'across GPUs 0 → 1, each chunk handed over by a peer copy (peer access, device to device):');
    assert.equal(lines[1], '  3.008 ms: 1.70× serial (5.122 ms), 1.00× the same layout on GPU 0 alone (3.003 ms)');
    assert.equal(lines[2], '  the handed-over buffers copied whole, alone: 128 MiB in 0.349 ms, 384.6 GB/s');
  });

  it('says when the driver staged the copies through the host', () => {
    const c = crossDeviceOf(modes, []);
    assert.equal(c?.path, 'staged');
    assert.match(devicesLines({ crossDevice: c ?? undefined, modes })[0] ?? '', /staged through host memory/);
  });
});
