import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openRuntime } from '../../src/cuda/runtime.js';
import { ProbeDocumentSchema } from '../../src/result/probe.js';
import { type RunResult, RunResultSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/gpu-cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Several devices from one process, on a machine with two GPUs or more. Each test skips on its own with the reason
// (no GPU, or only one).
function twoGpusSkipReason(): string | null {
  const reason = gpuSkipReason();
  if (reason) return reason;
  const count = openRuntime().deviceCount();
  return count >= 2 ? null : `needs two GPUs; this machine has ${count}`;
}

const gpus = { skip: twoGpusSkipReason() ?? false };
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-devices-'));

function run(config: string, args: readonly string[]): { result: RunResult; stdout: string } {
  const json = join(out, `${args.join('_').replace(/[^\w-]/g, '')}.json`);
  const { code, stdout, stderr } = runCli(['run', config, '--json', json, ...args]);
  assert.equal(code, 0, stderr);
  return { result: RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8'))), stdout };
}

const SMALL = `name: small-split
buffers:
  x: { type: float32, size: 32MiB, role: in }
  y: { type: float32, size: 32MiB, role: out }
kernels:
  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }
pipeline: { chunks: 8, streams: 2 }
`;

describe('several GPUs in one run', () => {
  it(
    'splits the input across two devices, verifies byte for byte, and times each device against one start',
    gpus,
    () => {
      const config = join(out, 'small-split.yaml');
      writeFileSync(config, SMALL);
      const { result, stdout } = run(config, ['--devices', '0,1', '--gate', '--max-time', '1']);
      assert.equal(result.verification.status, 'passed');
      assert.deepEqual(
        result.devices.map((d) => d.index),
        [0, 1],
      );
      const together = result.modes.find((m) => m.role.kind === 'split' && m.role.alone === undefined);
      assert.ok(together?.perDevice, "each device's own times");
      for (const d of together.perDevice) {
        // The shares run at once, so each device is busy for most of the whole (its own start and end are probes).
        assert.ok(
          d.medianMs >= together.stats.median * 0.5 && d.medianMs <= together.stats.median * 1.001,
          `device ${d.device}: ${d.medianMs} within the whole ${together.stats.median}`,
        );
      }
      // Balanced split on the 2-GPU H200 host: 1.57 to 1.62× (docs/measurements/2026-11-23-h200x2); two devices cannot
      // give more than 2×, and the shared memory system capped the links at 1.69×.
      assert.ok(
        result.scaling && result.scaling.speedup > 1.2 && result.scaling.speedup < 2.05,
        JSON.stringify(result.scaling),
      );
      // Both PCIe gen5 links both ways at once: 144 to 153 GB/s there; two links cannot pass 2 × ~100 GB/s.
      assert.ok(
        result.scaling.links &&
          result.scaling.links.togetherGbPerSecond > 40 &&
          result.scaling.links.togetherGbPerSecond < 220,
        JSON.stringify(result.scaling.links),
      );
      const reps = result.timeline?.reps.filter((r) => r.mode === together.id) ?? [];
      assert.deepEqual(
        reps.map((r) => r.device),
        [0, 1],
        'a traced rep per device',
      );
      for (const rep of reps)
        assert.ok(
          rep.ops.length > 0 && rep.ops.every((op) => op.startMs >= 0 && op.endMs <= rep.totalMs * 1.001),
          `device ${rep.device}'s ops within its own start and end`,
        );
      assert.match(stdout, /several GPUs \(0, 1\), the input split across them/);
      assert.match(stdout, /limit: (none|memory system|host issue|share size): /);
    },
  );

  it(
    'runs one pipeline across two devices with peer copies, verifies it, and says how the chunks crossed',
    gpus,
    () => {
      const { result, stdout } = run(join('configs', 'cross-device.yaml'), ['--max-time', '1']);
      assert.equal(result.verification.status, 'passed');
      assert.ok(result.crossDevice, 'a cross-device section');
      assert.equal(result.crossDevice.path, result.peers?.[0]?.path);
      // With peer access a 128 MiB handover ran at 385 to 388 GB/s over NVLink (NV18, at most 450 GB/s one way), and
      // faster than PCIe gen5 moves one way (55 GB/s) on any link; staged through the host it cannot pass one way of
      // PCIe.
      const peerRate = result.crossDevice.peerCopy?.gbPerSecond ?? 0;
      if (result.crossDevice.path === 'peer')
        assert.ok(peerRate > 60 && peerRate < 500, JSON.stringify(result.crossDevice.peerCopy));
      else assert.ok(peerRate > 5 && peerRate < 60, JSON.stringify(result.crossDevice.peerCopy));
      assert.match(stdout, /across GPUs 0 → 1, each chunk handed over by a peer copy/);
      const reps = result.timeline?.reps.filter((r) => r.mode === result.crossDevice?.mode) ?? [];
      assert.deepEqual(
        reps.map((r) => r.device),
        [0, 1],
      );
      assert.equal(
        reps[0]?.ops.filter((op) => op.kind === 'peer').length,
        16,
        "every chunk's peer copy on the first GPU's timeline",
      );
    },
  );

  it('probe shows the peer matrix and measures copies between the devices each way and both at once', gpus, () => {
    const json = join(out, 'probe.json');
    const { code, stderr } = runCli([
      'probe',
      '--device',
      '0,1',
      '--bandwidth',
      '--size',
      '64MiB',
      '--reps',
      '5',
      '--json',
      json,
    ]);
    assert.equal(code, 0, stderr);
    const doc = ProbeDocumentSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.equal(doc.peers?.matrix.length, 2);
    const rows = doc.peers?.bandwidth ?? [];
    assert.deepEqual(
      rows.map((r) => [r.from, r.to, r.bidirectional]),
      [
        [0, 1, false],
        [1, 0, false],
        [0, 1, true],
      ],
    );
    // 256 MiB peer copies on the 2-GPU H200 host: 393.6 GB/s each way, 766 GB/s both at once (probe.json there).
    const [there, back, both] = rows as [(typeof rows)[number], (typeof rows)[number], (typeof rows)[number]];
    assert.ok(Math.abs(there.gbPerSecond - back.gbPerSecond) < 0.15 * there.gbPerSecond, JSON.stringify(rows));
    assert.ok(both.gbPerSecond < 2.1 * Math.max(there.gbPerSecond, back.gbPerSecond), JSON.stringify(rows));
    if (rows.every((r) => r.path === 'peer')) {
      assert.ok(there.gbPerSecond > 60 && there.gbPerSecond < 500, JSON.stringify(there));
      assert.ok(both.gbPerSecond > 1.5 * Math.min(there.gbPerSecond, back.gbPerSecond), JSON.stringify(rows));
    } else {
      assert.ok(there.gbPerSecond > 1 && there.gbPerSecond < 60, JSON.stringify(there));
    }
  });
});
