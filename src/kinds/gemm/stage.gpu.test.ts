import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RunResultSchema } from '../../result/schema.js';
import { runCli } from '../../../test/helpers/gpu-cli.js';
import { gpuSkipReason } from '../../../test/helpers/gpu.js';

// Each test skips on its own, with the reason, so a machine without a GPU still counts them.
const gpu = { skip: gpuSkipReason() ?? false };
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-gemm-'));

// 1024 rows of x (256 floats each) through y = x · w, w resident (256 × 128), in 8 chunks of 128 rows over 4 streams,
// then a kernel over y: a gemm and a kernel interleaved per chunk. cuBLAS may pick another algorithm for the whole
// buffers (m 1024) than for a chunk (m 128), so outputs compare within a tolerance, not byte for byte.
const CONFIG = `name: gemm-small
buffers:
  x: { type: float32, itemSize: 256, role: in }
  w: { type: float32, count: 32768, role: resident }
  y: { type: float32, itemSize: 128, role: out }
pipeline: { items: 1024, chunks: 8, streams: 4, mode: graph }
kernels:
  - name: layer
    gemm: { a: x, b: w, c: y, n: 128, k: 256, dtype: fp32 }
  - source: scale.cu
    entry: scale
    args: [{ buffer: y }, { buffer: y }, { chunk: elements }, { float32: 0.5 }]
verify:
  tolerance: { relative: 0.0001, absolute: 0.00001 }
repetitions: { reps: 5, warmup: 1 }
`;

describe('the gemm stage on a real device', () => {
  it(
    'runs a gemm then a kernel per chunk, verifies the outputs, replays the body as a graph and traces the gemm ops',
    gpu,
    () => {
      const config = join(out, 'gemm-small.yaml');
      writeFileSync(config, CONFIG);
      const json = join(out, 'gemm-small.json');
      const { code, stdout, stderr } = runCli(['run', config, '--json', json]);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /verification: passed/);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
      assert.equal(result.verification.status, 'passed');
      const graph = result.modes.find((m) => m.role.kind === 'overlapped' && m.role.layout.issue === 'graph');
      assert.ok(graph, 'the overlapped body captured with its cuBLAS calls and replayed as a graph');
      const overlapped = result.modes.find((m) => m.role.kind === 'overlapped' && m.role.layout.issue === undefined);
      // The bound is a floor under the layout it bounds (a layout of small GEMMs may be slower than serial, and so may
      // its bound).
      assert.ok(
        overlapped?.analysis && overlapped.analysis.bound.ms <= overlapped.stats.median * 1.01,
        JSON.stringify(overlapped?.analysis?.bound),
      );
      const rep = result.timeline?.reps.find((r) => r.mode === overlapped?.id);
      assert.ok(rep, 'a traced rep of the overlapped mode');
      const gemms = rep.ops.filter((o) => o.kind === 'gemm');
      assert.equal(gemms.length, 8);
      assert.ok(gemms.every((o) => o.kernel === 'layer' && o.bytes === 128 * 256 * 4 + 256 * 128 * 4));
      // Per chunk, the gemm ends before the kernel that reads its output starts.
      for (let chunk = 0; chunk < 8; chunk++) {
        const [g, k] = [
          rep.ops.find((o) => o.chunk === chunk && o.kind === 'gemm'),
          rep.ops.find((o) => o.chunk === chunk && o.kind === 'kernel'),
        ];
        assert.ok(g && k && g.endMs <= k.startMs + 1e-3, JSON.stringify([g, k]));
      }
    },
  );
});
