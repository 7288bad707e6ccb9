import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostBytes } from '../../cuda/host.js';
import { openRuntime } from '../../cuda/runtime.js';
import { fillPattern } from '../../data/patterns.js';
import { checksum } from './workers/functions.js';
import { WorkerPool } from './workers/pool.js';
import { gpuSkipReason } from '../../../test/helpers/gpu.js';

const gpu = { skip: gpuSkipReason() ?? false };

describe('worker threads over pinned memory', () => {
  it('decode into a pinned slot by address in a worker, copy it through the device, and checksum the copy in a worker', gpu, async () => {
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
      await pool.submit({ fn: 'load', chunk: 3, regions: [{ address: slot, bytes: chunk, buffer: 'input', offset: 3 * chunk }] });
      assert.equal(rt.memory.copyThunk(device, slot, chunk, 'h2d', stream)(), 0);
      assert.equal(rt.memory.copyThunk(back, device, chunk, 'd2h', stream)(), 0);
      rt.streams.synchronize(stream);
      const whole = new Uint8Array(4 * chunk);
      fillPattern(whole, 'float32', init);
      assert.deepEqual(hostBytes(back, chunk), whole.subarray(3 * chunk));
      const sum = await pool.submit({ fn: 'sum', chunk: 3, regions: [{ address: back, bytes: chunk, buffer: 'output', offset: 3 * chunk }] });
      assert.equal(sum.value, checksum([hostBytes(back, chunk)]));
    } finally {
      await pool.close();
      rt.streams.destroy(stream);
      rt.memory.free(device);
      rt.memory.freeHost(back);
      rt.memory.freeHost(slot);
    }
  });
});
