import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeDevice } from '../../src/cuda/device.js';
import { hostBytes } from '../../src/cuda/host.js';
import { openNvrtc } from '../../src/cuda/nvrtc.js';
import { openRuntime } from '../../src/cuda/runtime.js';
import { offsetPointer } from '../../src/cuda/types.js';
import { DeviceFailure } from '../../src/errors.js';
import { gpuSkipReason } from '../helpers/gpu.js';

const skip = gpuSkipReason() ?? false;

describe('the CUDA runtime on a real device', { skip }, () => {
  it('describes the device with sane facts', () => {
    const d = describeDevice(openRuntime(), 0);
    assert.ok(d.name.length > 0);
    assert.match(d.uuid, /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.ok(d.multiprocessors > 0 && d.memoryBytes > 2 ** 30);
    assert.ok(d.asyncEngineCount >= 1);
    assert.ok(d.streamPriority.greatest <= d.streamPriority.least);
    assert.match(d.pciBusId, /^[0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$/);
  });

  it('round-trips data through pinned memory with async copies and a memset', () => {
    const rt = openRuntime();
    const bytes = 1 << 20;
    const host = rt.hostAlloc(bytes, 'pinned');
    const device = rt.malloc(bytes);
    const stream = rt.createStream({ nonBlocking: true });
    try {
      const view = hostBytes(host, bytes);
      for (let i = 0; i < bytes; i++) view[i] = i % 251;
      const expected = view.slice();
      assert.equal(rt.copyThunk(device, host, bytes, 'h2d', stream)(), 0);
      view.fill(0);
      assert.equal(rt.memsetThunk(offsetPointer(device, 16), 7, 16, stream)(), 0);
      assert.equal(rt.copyThunk(host, device, bytes, 'd2h', stream)(), 0);
      rt.streamSynchronize(stream);
      expected.fill(7, 16, 32);
      assert.deepEqual(view, expected);
    } finally {
      rt.destroyStream(stream);
      rt.free(device);
      rt.freeHost(host);
    }
  });

  it('times with events and orders streams with event waits', () => {
    const rt = openRuntime();
    const a = rt.createStream({ nonBlocking: true });
    const b = rt.createStream({ nonBlocking: true, priority: rt.streamPriorityRange().greatest });
    const start = rt.createEvent({ timing: true });
    const end = rt.createEvent({ timing: true });
    const bytes = 64 << 20;
    const device = rt.malloc(bytes);
    try {
      rt.recordEvent(start, a);
      rt.streamWaitEvent(b, start);
      rt.memset(device, 1, bytes, b);
      const joined = rt.createEvent({ timing: false });
      rt.recordEvent(joined, b);
      rt.streamWaitEvent(a, joined);
      rt.recordEvent(end, a);
      rt.eventSynchronize(end);
      assert.ok(rt.eventDone(joined));
      const ms = rt.elapsedMs(start, end);
      assert.ok(ms > 0 && ms < 100, `elapsed ${ms} ms`);
      rt.destroyEvent(joined);
    } finally {
      rt.free(device);
      for (const e of [start, end]) rt.destroyEvent(e);
      for (const s of [a, b]) rt.destroyStream(s);
    }
  });

  it('loads an NVRTC CUBIN, launches it from a prebuilt record, and replays it as a captured graph', () => {
    const rt = openRuntime();
    rt.setDevice(0);
    const major = rt.attribute('computeCapabilityMajor', 0);
    const minor = rt.attribute('computeCapabilityMinor', 0);
    const source = 'extern "C" __global__ void add(float *x, unsigned long long n, float v) { unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; if (i < n) x[i] += v; }';
    const compiled = openNvrtc().compile(source, 'add.cu', [`--gpu-architecture=sm_${major}${minor}`]);
    assert.ok(compiled.ok, compiled.ok ? '' : compiled.log);
    const library = rt.loadLibrary(compiled.cubin);
    const n = 1000;
    const host = rt.hostAlloc(n * 4, 'pinned');
    const device = rt.malloc(n * 4);
    const stream = rt.createStream({ nonBlocking: true });
    const record = rt.launchRecord({
      kernel: rt.getKernel(library.library, 'add'), grid: 4, block: 256, sharedBytes: 0, stream,
      args: [{ kind: 'pointer', value: device }, { kind: 'scalar', type: 'uint64', value: n }, { kind: 'scalar', type: 'float32', value: 1.5 }],
      describe: 'add',
    });
    try {
      const values = new Float32Array(hostBytes(host, n * 4).buffer, hostBytes(host, n * 4).byteOffset, n);
      values.fill(1);
      rt.copy(device, host, n * 4, 'h2d');
      assert.equal(record.launch(), 0);
      rt.beginCapture(stream);
      assert.equal(record.launch(), 0);
      assert.equal(record.launch(), 0);
      const graph = rt.endCapture(stream);
      const exec = rt.instantiateGraph(graph);
      assert.equal(rt.graphLaunchThunk(exec, stream)(), 0);
      rt.streamSynchronize(stream);
      rt.copy(host, device, n * 4, 'd2h');
      // 1 + one direct launch + two captured launches replayed once.
      assert.ok(values.every((v) => v === 1 + 1.5 * 3), `got ${values[0]}`);
      rt.destroyGraphExec(exec);
      rt.destroyGraph(graph);
    } finally {
      record.free();
      rt.destroyStream(stream);
      rt.free(device);
      rt.freeHost(host);
      library.unload();
    }
  });

  it('runs a host function from the stream on the JS thread, waited for without blocking', async () => {
    const rt = openRuntime();
    const stream = rt.createStream({ nonBlocking: true });
    let calls = 0;
    const registration = rt.launchHostFunc(stream, () => { calls += 1; });
    try {
      // A synchronous wait here would deadlock: CUDA's thread waits for the JS thread to run the callback.
      const deadline = Date.now() + 5000;
      while (!rt.streamIdle(stream) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      assert.equal(calls, 1);
    } finally {
      registration.unregister();
      rt.destroyStream(stream);
    }
  });

  it('reports an allocation larger than the device as a CUDA failure naming the API', () => {
    const rt = openRuntime();
    assert.throws(() => rt.malloc(2 ** 50), (error: unknown) => error instanceof DeviceFailure && /cudaMalloc failed .*cudaErrorMemoryAllocation \(2\)/.test(error.message));
  });
});
