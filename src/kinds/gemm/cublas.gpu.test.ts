import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import {
  type Cublas,
  type CublasGemmCall,
  type CublasHandle,
  DEFAULT_WORKSPACE_BYTES,
  GEMM_TYPES,
  openCublas,
} from './cublas.js';
import { hostBytes } from '../../cuda/host.js';
import { type CudaRuntime, openRuntime } from '../../cuda/runtime.js';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import { median } from '../../quantile.js';
import { gpuSkipReason } from '../../../test/helpers/gpu.js';

function cublasSkipReason(): string | null {
  const gpu = gpuSkipReason();
  if (gpu) return gpu;
  try {
    openCublas();
    return null;
  } catch (error) {
    return `no libcublas here: ${(error as Error).message.split('\n')[0]}`;
  }
}

const gpu = { skip: cublasSkipReason() ?? false };

/** Seeded values in [-1, 1), so that no GEMM is timed or checked on zeros. */
function pattern(count: number, seed: number): Float64Array {
  const values = new Float64Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values[i] = state / 2 ** 31 - 1;
  }
  return values;
}

/** float32 → bfloat16 bits, rounding to nearest even, as CUDA's __float2bfloat16 does for finite values. */
function toBf16(value: number): number {
  const bits = new Uint32Array(new Float32Array([value]).buffer)[0] ?? 0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

function fromBf16(bits: number): number {
  return new Float32Array(new Uint32Array([bits << 16]).buffer)[0] ?? 0;
}

/** C = alpha · op(A) · op(B) + beta · C0 in float64, column-major like cuBLAS. */
function reference(spec: CublasGemmCall, a: Float64Array, b: Float64Array, c0: Float64Array): Float64Array {
  const c = new Float64Array(spec.ldc * spec.n);
  for (let j = 0; j < spec.n; j++) {
    for (let i = 0; i < spec.m; i++) {
      let sum = 0;
      for (let l = 0; l < spec.k; l++) {
        const av = spec.transA === 'N' ? a[i + l * spec.lda] : a[l + i * spec.lda];
        const bv = spec.transB === 'N' ? b[l + j * spec.ldb] : b[j + l * spec.ldb];
        sum += (av ?? NaN) * (bv ?? NaN);
      }
      c[i + j * spec.ldc] = spec.alpha * sum + spec.beta * (c0[i + j * spec.ldc] ?? NaN);
    }
  }
  return c;
}

/** Device memory for one operand, filled from `values` in the GEMM's dtype; `read` returns it as numbers. */
interface Operand {
  readonly device: DevicePtr;
  read(): Float64Array;
}

function operands(
  rt: CudaRuntime,
  dtype: CublasGemmCall['dtype'],
  arrays: readonly Float64Array[],
  owned: Array<() => void>,
): Operand[] {
  const bytes = GEMM_TYPES[dtype].elementBytes;
  return arrays.map((values) => {
    const size = values.length * bytes;
    const host = rt.memory.hostAlloc(size, 'pinned');
    const device = rt.memory.malloc(size);
    owned.push(
      () => rt.memory.free(device),
      () => rt.memory.freeHost(host),
    );
    const view = hostBytes(host, size);
    // One view of the operand's own element size: a float32 view over a bf16 operand would be twice too long.
    const stored =
      dtype === 'bf16'
        ? new Uint16Array(view.buffer, view.byteOffset, values.length)
        : new Float32Array(view.buffer, view.byteOffset, values.length);
    values.forEach((v, i) => {
      stored[i] = dtype === 'bf16' ? toBf16(v) : v;
    });
    rt.memory.copy(device, host, size, 'h2d');
    return {
      device,
      read: () => {
        rt.memory.copy(host, device, size, 'd2h');
        return Float64Array.from(stored, (v) => (dtype === 'bf16' ? fromBf16(v) : v));
      },
    };
  });
}

/** The operands as the GPU sees them: bf16 inputs rounded, fp32 inputs as float32. */
function asStored(dtype: CublasGemmCall['dtype'], values: Float64Array): Float64Array {
  return values.map((v) => (dtype === 'bf16' ? fromBf16(toBf16(v)) : Math.fround(v)));
}

function worstExcess(
  got: Float64Array,
  want: Float64Array,
  tolerance: (want: number) => number,
): { index: number; excess: number } {
  let worst = { index: -1, excess: 0 };
  want.forEach((w, index) => {
    const excess = Math.abs((got[index] ?? NaN) - w) - tolerance(w);
    if (!(excess <= worst.excess)) worst = { index, excess };
  });
  return worst;
}

/** A stream with its workspace and a cuBLAS handle bound to both, as a gemm stage's lane has them. */
interface Lane {
  readonly stream: StreamHandle;
  readonly handle: CublasHandle;
}

interface OnDevice {
  readonly rt: CudaRuntime;
  readonly cublas: Cublas;
  /** Frees, in reverse order of pushing, whatever the test made, after it ends either way. */
  readonly owned: Array<() => void>;
  readonly lane: () => Lane;
}

/** Runs a test body on device 0 with cuBLAS loaded, releasing everything it made even when it fails. */
function onDevice(body: (device: OnDevice) => void): void {
  const rt = openRuntime();
  rt.setDevice(0);
  const cublas = openCublas();
  const owned: Array<() => void> = [];
  const lane = (): Lane => {
    const stream = rt.streams.create({ nonBlocking: true });
    const workspace = rt.memory.malloc(DEFAULT_WORKSPACE_BYTES);
    owned.push(
      () => rt.streams.destroy(stream),
      () => rt.memory.free(workspace),
    );
    const handle = cublas.create(stream, workspace, DEFAULT_WORKSPACE_BYTES);
    owned.push(() => cublas.destroy(handle));
    return { stream, handle };
  };
  try {
    body({ rt, cublas, owned, lane });
  } finally {
    for (const free of owned.reverse()) free();
  }
}

// Tolerances. fp32 (CUBLAS_COMPUTE_32F, no TF32): 64 products of values below 1 summed in float32 stay within 1e-4;
// TF32 inputs (10-bit mantissa) would miss it by an order of magnitude, so this also checks TF32 was not used.
// bf16: the reference uses the rounded inputs, and the output's rounding to bf16 costs at most half a unit in the
// 8th significant bit (2^-8 relative), plus the fp32 accumulation's 1e-4.
const FP32_TOLERANCE = (): number => 1e-4;
const BF16_TOLERANCE = (want: number): number => Math.abs(want) * 2 ** -8 + 1e-4;

describe('cuBLAS on a real device', () => {
  it(
    'a bf16 and an fp32 GEMM on two streams with two handles match a float64 reference within their tolerances',
    gpu,
    () => {
      onDevice(({ rt, cublas, owned, lane }) => {
        const [bf16Lane, fp32Lane] = [lane(), lane()];
        const [m, n, k] = [96, 80, 64];
        // bf16: A as stored (m × k), B transposed (stored n × k); fp32: A transposed (stored k × m), alpha and beta
        // set.
        const bf16: CublasGemmCall = {
          transA: 'N',
          transB: 'T',
          m,
          n,
          k,
          lda: m,
          ldb: n,
          ldc: m,
          alpha: 1,
          beta: 0,
          dtype: 'bf16',
        };
        const fp32: CublasGemmCall = {
          transA: 'T',
          transB: 'N',
          m,
          n,
          k,
          lda: k,
          ldb: k,
          ldc: m,
          alpha: 1.5,
          beta: 0.5,
          dtype: 'fp32',
        };
        const cases = [
          {
            spec: bf16,
            lane: bf16Lane,
            data: [pattern(m * k, 1), pattern(n * k, 2), new Float64Array(m * n)],
            tolerance: BF16_TOLERANCE,
          },
          {
            spec: fp32,
            lane: fp32Lane,
            data: [pattern(k * m, 3), pattern(k * n, 4), pattern(m * n, 5)],
            tolerance: FP32_TOLERANCE,
          },
        ].map((c) => {
          const [a, b, out] = operands(rt, c.spec.dtype, c.data, owned) as [Operand, Operand, Operand];
          const record = cublas.record(c.lane.handle, c.spec, a.device, b.device, out.device);
          owned.push(() => record.free());
          const stored = c.data.map((values) => asStored(c.spec.dtype, values)) as [
            Float64Array,
            Float64Array,
            Float64Array,
          ];
          return { ...c, record, out, want: reference(c.spec, ...stored) };
        });
        for (const c of cases) assert.equal(c.record.launch(), 0, c.record.describe);
        for (const c of cases) rt.streams.synchronize(c.lane.stream);
        for (const c of cases) {
          const got = c.out.read();
          const worst = worstExcess(got, c.want, c.tolerance);
          assert.equal(
            worst.index,
            -1,
            `${c.record.describe}: element ${worst.index} is ${got[worst.index]}, want ${c.want[worst.index]}`,
          );
        }
        for (const c of cases)
          assert.ok(
            cublas.version(c.lane.handle) >= 120000,
            `cuBLAS ${cublas.version(c.lane.handle)} from ${cublas.libraryPath}`,
          );
      });
    },
  );

  it('a GEMM captured into a CUDA graph and replayed computes the same product', gpu, () => {
    onDevice(({ rt, cublas, owned, lane: newLane }) => {
      const { stream, handle } = newLane();
      const spec: CublasGemmCall = {
        transA: 'N',
        transB: 'N',
        m: 64,
        n: 48,
        k: 32,
        lda: 64,
        ldb: 32,
        ldc: 64,
        alpha: 1,
        beta: 1,
        dtype: 'fp32',
      };
      const data = [pattern(64 * 32, 6), pattern(32 * 48, 7), new Float64Array(64 * 48)];
      const [a, b, out] = operands(rt, 'fp32', data, owned) as [Operand, Operand, Operand];
      const record = cublas.record(handle, spec, a.device, b.device, out.device);
      owned.push(() => record.free());
      // One call outside the capture first, as a stage's checked rep does: cuBLAS may set up a new handle lazily.
      assert.equal(record.launch(), 0);
      rt.graphs.beginCapture(stream);
      assert.equal(record.launch(), 0);
      const graph = rt.graphs.endCapture(stream);
      const exec = rt.graphs.instantiate(graph);
      owned.push(
        () => rt.graphs.destroy(graph),
        () => rt.graphs.destroyExec(exec),
      );
      // beta 1 accumulates: the direct call and two replays leave 3 · A · B, which also shows the capture computed
      // nothing.
      const replay = rt.graphs.launchThunk(exec, stream);
      assert.equal(replay(), 0);
      assert.equal(replay(), 0);
      rt.streams.synchronize(stream);
      const [sa, sb] = data.map((v) => asStored('fp32', v)) as [Float64Array, Float64Array];
      const want = reference({ ...spec, alpha: 3, beta: 0 }, sa, sb, new Float64Array(64 * 48));
      const got = out.read();
      const worst = worstExcess(got, want, () => 2e-4);
      assert.equal(worst.index, -1, `element ${worst.index} is ${got[worst.index]}, want ${want[worst.index]}`);
    });
  });

  it(
    'the prebuilt GEMM call costs the host a few microseconds, measured against a 4-byte memset from the same loop',
    gpu,
    (t) => {
      onDevice(({ rt, cublas, owned, lane: newLane }) => {
        const { stream, handle } = newLane();
        const spec: CublasGemmCall = {
          transA: 'N',
          transB: 'N',
          m: 128,
          n: 128,
          k: 128,
          lda: 128,
          ldb: 128,
          ldc: 128,
          alpha: 1,
          beta: 0,
          dtype: 'bf16',
        };
        const [a, b, out] = operands(
          rt,
          'bf16',
          [pattern(128 * 128, 8), pattern(128 * 128, 9), new Float64Array(128 * 128)],
          owned,
        ) as [Operand, Operand, Operand];
        const record = cublas.record(handle, spec, a.device, b.device, out.device);
        owned.push(() => record.free());
        const memset = rt.memory.memsetThunk(out.device, 0, 4, stream);
        const perCallUs = (call: () => number): number => {
          const batches: number[] = [];
          for (let batch = 0; batch < 7; batch++) {
            rt.streams.synchronize(stream);
            const started = performance.now();
            for (let i = 0; i < 200; i++) if (call() !== 0) throw new Error('a call failed');
            batches.push(((performance.now() - started) * 1000) / 200);
          }
          rt.streams.synchronize(stream);
          return median(batches.slice(2));
        };
        const gemmUs = perCallUs(record.launch);
        const memsetUs = perCallUs(memset);
        t.diagnostic(
          `host cost per call: cublasGemmEx ${gemmUs.toFixed(2)} µs (bf16 128³), cudaMemsetAsync ${memsetUs.toFixed(2)} µs`,
        );
        // cuBLAS's own heuristics cache and launch are a few µs (a kernel launch is 3.4 to 4.6 µs on the H200); 25 µs
        // would mean the wrapper does work per call that it should have done once.
        assert.ok(gemmUs < 25, `cublasGemmEx costs the host ${gemmUs.toFixed(2)} µs per call`);
      });
    },
  );
});
