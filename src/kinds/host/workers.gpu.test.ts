import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hostBytes } from '../../cuda/host.js';
import { openRuntime } from '../../cuda/runtime.js';
import { fillPattern } from '../../data/patterns.js';
import { checksum } from './workers/functions.js';
import { WorkerPool } from './workers/pool.js';
import { gpuSkipReason } from '../../../test/helpers/gpu.js';
import { runCli } from '../../../test/helpers/gpu-cli.js';

const gpu = { skip: gpuSkipReason() ?? false };

describe('worker threads over pinned memory', () => {
  it(
    'decode into a pinned slot by address in a worker, copy it through the device, and checksum the copy in a worker',
    gpu,
    async () => {
      const rt = openRuntime();
      const chunk = 4 << 20;
      const init = { kind: 'random', seed: 3 } as const;
      const slot = rt.memory.hostAlloc(chunk, 'pinned');
      const back = rt.memory.hostAlloc(chunk, 'pinned');
      const device = rt.memory.malloc(chunk);
      const stream = rt.streams.create({ nonBlocking: true });
      const pool = await WorkerPool.open({
        workers: 2,
        functions: {
          load: { kind: 'decode', msPerMiB: 0, buffers: { input: { type: 'float32', init } } },
          sum: { kind: 'checksum' },
        },
      });
      try {
        // The slot holds chunk 3 of the buffer 'input': its bytes from 3 × chunk on.
        await pool.submit({
          fn: 'load',
          chunk: 3,
          regions: [{ address: slot, bytes: chunk, buffer: 'input', offset: 3 * chunk }],
        });
        assert.equal(rt.memory.copyThunk(device, slot, chunk, 'h2d', stream)(), 0);
        assert.equal(rt.memory.copyThunk(back, device, chunk, 'd2h', stream)(), 0);
        rt.streams.synchronize(stream);
        const whole = new Uint8Array(4 * chunk);
        fillPattern(whole, 'float32', init);
        assert.deepEqual(hostBytes(back, chunk), whole.subarray(3 * chunk));
        const sum = await pool.submit({
          fn: 'sum',
          chunk: 3,
          regions: [{ address: back, bytes: chunk, buffer: 'output', offset: 3 * chunk }],
        });
        assert.equal(sum.value, checksum([hostBytes(back, chunk)]));
      } finally {
        await pool.close();
        rt.streams.destroy(stream);
        rt.memory.free(device);
        rt.memory.freeHost(back);
        rt.memory.freeHost(slot);
      }
    },
  );
});

describe('a host stage function that never ends, on a real device', () => {
  const root = join(import.meta.dirname, '..', '..', '..', '..');
  const stage = join(root, 'test', 'fixtures', 'workers', 'stage.mjs');
  for (const name of ['spin', 'never']) {
    it(
      `'${name}' under --timeout 5 fails the run with exit 4 within a bound, naming the stage, the function and the chunk`,
      gpu,
      () => {
        const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hang-'));
        const config = readFileSync(join(root, 'configs', 'host-stage.yaml'), 'utf8')
          .replace('after: checksum', `after: { module: ${stage}, export: ${name} }`)
          .replace('source: scale.cu', `source: ${join(root, 'kernels', 'scale.cu')}`);
        writeFileSync(join(dir, 'hang.yaml'), config);
        const started = performance.now();
        // Before the fix the run was still going at 60 s, until SIGKILL. On an H200 the hang met the stage first in a
        // mode that runs it once on the whole buffers (validation third/suite-one-gpu.log), so either place is named.
        const run = runCli(
          ['run', join(dir, 'hang.yaml'), '--timeout', '5', '--no-tracing'],
          {},
          { timeoutMs: 90_000 },
        );
        const seconds = (performance.now() - started) / 1000;
        assert.equal(run.code, 4, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(
            `function 'after' \\(export '${name}' of .*stage\\.mjs\\) did not return within 5 s on (chunk \\d+|the whole buffers) in worker \\d+`,
          ),
        );
        assert.ok(seconds < 45, `exit 4 came ${seconds.toFixed(1)} s after the start`);
      },
    );
  }
});
