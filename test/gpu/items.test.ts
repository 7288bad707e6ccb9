import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runConfig } from '../../src/api/run.js';
import { parseConfigText } from '../../src/config/load.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Each test skips on its own, with the reason, so a machine without a GPU still counts them.
const gpu = { skip: gpuSkipReason() ?? false };

// 4096 rows of 256 floats summed (kernels/row_sum.cu) with a resident table: 4 MiB in, 16 KiB out.
const config = (extra = '') =>
  `name: items-gpu\n${extra}` +
  'buffers:\n' +
  '  in: { type: float32, itemSize: 256, role: in }\n' +
  '  table: { type: float32, count: 256, role: resident }\n' +
  '  out: { type: float32, itemSize: 1, role: out }\n' +
  'kernels:\n  - { name: row_sum, source: row_sum.cu, entry: row_sum, grid: cover, args: [{ buffer: in }, { buffer: table }, { buffer: out }, { chunk: items }, { int32: 256 }] }\n' +
  'pipeline: { items: 4096, chunks: 8, streams: 4 }\n' +
  'repetitions: { reps: 3, warmup: 1 }\n';

const options = { verify: true, gate: true, trace: false, wait: 'poll' as const };

describe('buffers of any shape on a real device', () => {
  it(
    'runs chunks of rows with a resident table, verifies byte for byte, and copies only the chunked bytes',
    gpu,
    async () => {
      const result = await runConfig(parseConfigText(config(), '/tmp/items-gpu.yaml'), options);
      assert.equal(result.verification.status, 'passed', JSON.stringify(result.verification.mismatches));
      assert.equal(result.verification.tolerance, undefined);
      const serial = result.modes.find((m) => m.role.kind === 'serial');
      assert.deepEqual(serial?.bytes, { h2d: 4096 * 256 * 4, d2h: 4096 * 4 });
      assert.deepEqual(
        result.buffers.map((b) => [b.name, b.role, b.itemSize]),
        [
          ['in', 'in', 256],
          ['table', 'resident', undefined],
          ['out', 'out', undefined],
        ],
      );
      assert.equal(result.deviceMemory?.askedBytes, 4096 * 256 * 4 + 1024 + 4096 * 4);
    },
  );

  it('runs under a device-memory budget through a ring, and compares within a tolerance when asked', gpu, async () => {
    // 2 slots of 512 rows (1028 bytes a row) beside the 1 KiB table.
    const budget = 2 * 512 * 1028 + 1024;
    const result = await runConfig(
      parseConfigText(
        config(`deviceMemory: ${budget}\nverify: { tolerance: { relative: 0.001 } }\n`),
        '/tmp/items-gpu.yaml',
      ),
      options,
    );
    assert.equal(result.verification.status, 'passed', JSON.stringify(result.verification.mismatches));
    assert.deepEqual(result.deviceMemory?.ring, { slots: 2, slotElements: 512 });
    // The sums are the same bits in every layout: the largest error a tolerance saw is 0.
    assert.deepEqual(result.verification.tolerance, {
      relative: 0.001,
      absolute: 0,
      largestError: { absolute: 0, relative: 0 },
    });
  });
});
