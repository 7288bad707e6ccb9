import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeDevice } from '../../src/exec/device-facts.js';
import { hostBytes } from '../../src/cuda/host.js';
import { openNvrtc } from '../../src/cuda/nvrtc.js';
import { openRuntime } from '../../src/cuda/runtime.js';
import { offsetPointer } from '../../src/cuda/types.js';
import { DeviceFailure } from '../../src/errors.js';
import { makeWaiter, WAIT_STRATEGIES } from '../../src/exec/wait.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Each test skips on its own, with the reason, so a machine without a GPU still counts them.
const gpu = { skip: gpuSkipReason() ?? false };

describe('the CUDA runtime on a real device', () => {
  it('describes the device with sane facts', gpu, () => {
    const d = describeDevice(openRuntime(), 0);
    assert.ok(d.name.length > 0);
    assert.match(d.uuid, /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.ok(d.multiprocessors > 0 && d.memoryBytes > 2 ** 30);
    assert.ok(d.asyncEngineCount >= 1);
    assert.ok(d.streamPriority.greatest <= d.streamPriority.least);
    assert.match(d.pciBusId, /^[0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$/);
  });

  it('round-trips data through pinned memory with async copies and a memset', gpu, () => {
    const rt = openRuntime();
    const bytes = 1 << 20;
    const host = rt.memory.hostAlloc(bytes, 'pinned');
    const device = rt.memory.malloc(bytes);
    const stream = rt.streams.create({ nonBlocking: true });
    try {
      const view = hostBytes(host, bytes);
      for (let i = 0; i < bytes; i++) view[i] = i % 251;
      const expected = view.slice();
      assert.equal(rt.memory.copyThunk(device, host, bytes, 'h2d', stream)(), 0);
      view.fill(0);
      assert.equal(rt.memory.memsetThunk(offsetPointer(device, 16), 7, 16, stream)(), 0);
      assert.equal(rt.memory.copyThunk(host, device, bytes, 'd2h', stream)(), 0);
      rt.streams.synchronize(stream);
      expected.fill(7, 16, 32);
      assert.deepEqual(view, expected);
    } finally {
      rt.streams.destroy(stream);
      rt.memory.free(device);
      rt.memory.freeHost(host);
    }
  });

  it('times with events and orders streams with event waits', gpu, () => {
    const rt = openRuntime();
    const a = rt.streams.create({ nonBlocking: true });
    const b = rt.streams.create({ nonBlocking: true, priority: rt.streamPriorityRange().greatest });
    const start = rt.streams.createEvent({ timing: true });
    const end = rt.streams.createEvent({ timing: true });
    const bytes = 64 << 20;
    const device = rt.memory.malloc(bytes);
    try {
      rt.streams.record(start, a);
      rt.streams.waitEvent(b, start);
      rt.memory.memset(device, 1, bytes, b);
      const joined = rt.streams.createEvent({ timing: false });
      rt.streams.record(joined, b);
      rt.streams.waitEvent(a, joined);
      rt.streams.record(end, a);
      rt.streams.eventSynchronize(end);
      assert.ok(rt.streams.eventDone(joined));
      const ms = rt.streams.elapsedMs(start, end);
      assert.ok(ms > 0 && ms < 100, `elapsed ${ms} ms`);
      rt.streams.destroyEvent(joined);
    } finally {
      rt.memory.free(device);
      for (const e of [start, end]) rt.streams.destroyEvent(e);
      for (const s of [a, b]) rt.streams.destroy(s);
    }
  });

  it('loads an NVRTC CUBIN, launches it from a prebuilt record, and replays it as a captured graph', gpu, async () => {
    const rt = openRuntime();
    rt.setDevice(0);
    const major = rt.attribute('computeCapabilityMajor', 0);
    const minor = rt.attribute('computeCapabilityMinor', 0);
    const source =
      'extern "C" __global__ void add(float *x, unsigned long long n, float v) { unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; if (i < n) x[i] += v; }';
    const compiled = await openNvrtc().compile(source, 'add.cu', [`--gpu-architecture=sm_${major}${minor}`]);
    assert.ok(compiled.ok, compiled.ok ? '' : compiled.log);
    const library = rt.launch.loadLibrary(compiled.cubin);
    const n = 1000;
    const host = rt.memory.hostAlloc(n * 4, 'pinned');
    const device = rt.memory.malloc(n * 4);
    const stream = rt.streams.create({ nonBlocking: true });
    const record = rt.launch.record({
      kernel: rt.launch.getKernel(library.library, 'add'),
      grid: 4,
      block: 256,
      sharedBytes: 0,
      stream,
      args: [
        { kind: 'pointer', value: device },
        { kind: 'scalar', type: 'uint64', value: n },
        { kind: 'scalar', type: 'float32', value: 1.5 },
      ],
      describe: 'add',
    });
    try {
      const values = new Float32Array(hostBytes(host, n * 4).buffer, hostBytes(host, n * 4).byteOffset, n);
      values.fill(1);
      rt.memory.copy(device, host, n * 4, 'h2d');
      assert.equal(record.launch(), 0);
      rt.graphs.beginCapture(stream);
      assert.equal(record.launch(), 0);
      assert.equal(record.launch(), 0);
      const graph = rt.graphs.endCapture(stream);
      const exec = rt.graphs.instantiate(graph);
      assert.equal(rt.graphs.launchThunk(exec, stream)(), 0);
      rt.streams.synchronize(stream);
      rt.memory.copy(host, device, n * 4, 'd2h');
      // 1 + one direct launch + two captured launches replayed once.
      assert.ok(
        values.every((v) => v === 1 + 1.5 * 3),
        `got ${values[0]}`,
      );
      rt.graphs.destroyExec(exec);
      rt.graphs.destroy(graph);
    } finally {
      record.free();
      rt.streams.destroy(stream);
      rt.memory.free(device);
      rt.memory.freeHost(host);
      library.unload();
    }
  });

  it(
    'runs a host function registered once, enqueued twice with tags, while an event wait of either strategy keeps the JS thread free',
    gpu,
    async () => {
      const rt = openRuntime();
      const stream = rt.streams.create({ nonBlocking: true });
      const done = rt.streams.createEvent({ timing: false });
      const tags: number[] = [];
      const fn = rt.hostFunctions.register((tag) => {
        tags.push(tag);
      });
      try {
        for (const strategy of WAIT_STRATEGIES) {
          // A blocking wait on the JS thread here would deadlock: CUDA's thread waits for the JS thread to run the
          // callback.
          assert.equal(fn.launchThunk(stream, 7)(), 0);
          assert.equal(fn.launchThunk(stream, 8)(), 0);
          rt.streams.record(done, stream);
          const code = await Promise.race([
            makeWaiter(rt, strategy).event(done),
            new Promise<number>((resolve) => setTimeout(() => resolve(-1), 5000)),
          ]);
          assert.equal(code, 0, `${strategy}: the wait did not complete`);
        }
        assert.deepEqual(tags, [7, 8, 7, 8]);
      } finally {
        fn.unregister();
        rt.streams.destroyEvent(done);
        rt.streams.destroy(stream);
      }
    },
  );

  it('reports an allocation larger than the device as a CUDA failure naming the API', gpu, () => {
    const rt = openRuntime();
    assert.throws(
      () => rt.memory.malloc(2 ** 50),
      (error: unknown) =>
        error instanceof DeviceFailure && /cudaMalloc failed .*cudaErrorMemoryAllocation \(2\)/.test(error.message),
    );
  });
});
