import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeBlock } from '../../cuda/ffi.js';
import { openRuntime } from '../../cuda/runtime.js';
import type { DevicePtr, StreamHandle } from '../../cuda/types.js';
import type { IssueSite } from '../api/index.js';
import { openCublasLt } from './cublaslt.js';
import { openMatmul } from './runtime.js';
import { EPILOGUES, type Epilogue, type MatmulDtype, type MatmulOp, type MatmulSpec, type OutputType } from './spec.js';
import { gpuSkipReason } from '../../../test/helpers/gpu.js';
import { NOT_LAUNCHED } from '../api/index.js';

// The matmul stage on a real device: each epilogue's product through the runtime against a CPU reference, which
// checks the enum values and struct offsets cublaslt.ts took from the headers, then a config run end to end through
// the CLI (chunked, verified against serial, replayed as a graph, traced). Each test skips on its own, with the
// reason, so a machine without a GPU still counts them.
const skip = gpuSkipReason();
const gpu = { skip: skip ?? false };

// 64 rows of k = 128 through n = 96 columns: small, but every dimension a multiple of 16, as fp8's kernels need.
const M = 64;
const K = 128;
const N = 96;

/** A seeded value in [-1, 1). */
function seeded(seed: number): (i: number) => number {
  return (i) => {
    let x = Math.imul(i + 1, 2654435761) ^ Math.imul(seed, 0x9e3779b9);
    x ^= x >>> 15;
    x = Math.imul(x, 0x2c1b3c6d);
    x ^= x >>> 12;
    return (x >>> 8) / 8388608 - 1;
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** A float's bfloat16 bits, rounded to nearest even, and the value they hold. */
function bf16(value: number): { bits: number; value: number } {
  f32[0] = value;
  const word = u32[0] ?? 0;
  const bits = ((word + 0x7fff + ((word >>> 16) & 1)) >>> 16) & 0xffff;
  u32[0] = bits << 16;
  return { bits, value: f32[0] ?? 0 };
}

/**
 * A float's float16 bits, rounded to nearest, and the value they hold: subnormal below 2^-14, as small seeded values
 * are.
 */
function fp16(value: number): { bits: number; value: number } {
  const sign = value < 0 ? 0x8000 : 0;
  const magnitude = Math.abs(value);
  const signed = (held: number) => (sign ? -held : held);
  if (magnitude < 2 ** -14) {
    const steps = Math.round(magnitude / 2 ** -24);
    return steps === 1024 ? fp16(signed(2 ** -14)) : { bits: sign | steps, value: signed(steps * 2 ** -24) };
  }
  const exponent = Math.floor(Math.log2(magnitude));
  const mantissa = Math.round((magnitude / 2 ** exponent - 1) * 1024);
  const held = signed((1 + mantissa / 1024) * 2 ** exponent);
  return mantissa === 1024 ? fp16(held) : { bits: sign | ((exponent + 15) << 10) | mantissa, value: held };
}

/** An e4m3 byte for j/8, |j| ≤ 15: every such value is exact in e4m3 (3 mantissa bits, exponent bias 7). */
function e4m3(eighths: number): { bits: number; value: number } {
  const value = eighths / 8;
  if (eighths === 0) return { bits: 0, value: 0 };
  const exponent = Math.floor(Math.log2(Math.abs(value)));
  const mantissa = (Math.abs(value) / 2 ** exponent - 1) * 8;
  assert.ok(Number.isInteger(mantissa), `${value} is not exact in e4m3`);
  return { bits: (value < 0 ? 0x80 : 0) | ((exponent + 7) << 3) | mantissa, value };
}

const ENCODE: Readonly<Record<OutputType, (value: number) => { bits: number; value: number }>> = {
  bfloat16: bf16,
  float16: fp16,
};

/** What cuBLASLt's epilogue does to a sum: GELU as its tanh form, as cuBLASLt computes it. */
function activate(epilogue: Epilogue, x: number): number {
  if (epilogue.endsWith('relu')) return Math.max(0, x);
  if (epilogue.endsWith('gelu')) return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
  return x;
}

interface Operands {
  /** Row-major A[M×K], Bᵀ[N×K] and the bias[N], as the device holds them (bits) and as numbers. */
  readonly a: { bits: number[]; values: number[] };
  readonly b: { bits: number[]; values: number[] };
  readonly bias: { bits: number[]; values: number[] };
}

function operands(dtype: MatmulDtype, output: OutputType): Operands {
  const make = (count: number, seed: number, scale: number, encode: (v: number) => { bits: number; value: number }) => {
    const random = seeded(seed);
    const encoded = Array.from({ length: count }, (_, i) => encode(random(i) * scale));
    return { bits: encoded.map((e) => e.bits), values: encoded.map((e) => e.value) };
  };
  const input = dtype === 'fp8' ? (v: number) => e4m3(Math.trunc(v * 15)) : ENCODE[output];
  // B scaled by k^-1/2 keeps the sums of order one, where the activations differ from identity.
  return {
    a: make(M * K, 1, 1, input),
    b: make(N * K, 2, dtype === 'fp8' ? 1 : K ** -0.5, input),
    bias: make(N, 3, 0.5, ENCODE[output]),
  };
}

/** D = epilogue(alpha·A·Bᵀ + bias) on the CPU, in float64 over the values the device holds. */
function reference(ops: Operands, epilogue: Epilogue, alpha: number): number[] {
  const bias = epilogue.startsWith('bias');
  return Array.from({ length: M * N }, (_, index) => {
    const [i, j] = [Math.floor(index / N), index % N];
    let sum = 0;
    for (let k = 0; k < K; k++) sum += (ops.a.values[i * K + k] ?? 0) * (ops.b.values[j * K + k] ?? 0);
    return activate(epilogue, alpha * sum + (bias ? (ops.bias.values[j] ?? 0) : 0));
  });
}

/** The decoded outputs of a 16-bit buffer. */
function decode(bits: Uint16Array, output: OutputType): number[] {
  return Array.from(bits, (b) => {
    if (output === 'bfloat16') {
      u32[0] = b << 16;
      return f32[0] ?? 0;
    }
    const exponent = (b >>> 10) & 0x1f;
    const magnitude = exponent === 0 ? (b & 0x3ff) * 2 ** -24 : (1 + (b & 0x3ff) / 1024) * 2 ** (exponent - 15);
    return b & 0x8000 ? -magnitude : magnitude;
  });
}

/** One product on the device through the runtime: A and Bᵀ in, D out, as `dtype` with `epilogue`. */
function runProduct(
  dtype: MatmulDtype,
  output: OutputType,
  epilogue: Epilogue,
  alpha: number,
): { got: number[]; want: number[] } {
  const rt = openRuntime();
  rt.setDevice(0);
  const data = operands(dtype, output);
  const inputBytes = dtype === 'fp8' ? 1 : 2;
  const releases: (() => void)[] = [];
  const cleanup = { push: (release: () => void) => releases.push(release) };
  try {
    const upload = (bits: readonly number[], bytes: number): DevicePtr => {
      const host = nativeBlock(bits.length * bytes);
      bits.forEach((b, i) => (bytes === 1 ? host.view.setUint8(i, b) : host.view.setUint16(i * 2, b, true)));
      const device = rt.memory.malloc(bits.length * bytes);
      cleanup.push(() => rt.memory.free(device));
      rt.memory.copy(device, host.address, bits.length * bytes, 'h2d');
      host.free();
      return device;
    };
    const base = {
      a: upload(data.a.bits, inputBytes),
      b: upload(data.b.bits, inputBytes),
      bias: upload(data.bias.bits, 2),
      c: upload(new Array<number>(M * N).fill(0), 2),
    };
    const stream = rt.streams.create({ nonBlocking: true });
    cleanup.push(() => rt.streams.destroy(stream));
    const spec: MatmulSpec = {
      a: { buffer: 'a', itemSize: K, elementBytes: inputBytes },
      b: { buffer: 'b', itemSize: null, elementBytes: inputBytes },
      c: { buffer: 'c', itemSize: N, elementBytes: 2 },
      bias: epilogue.startsWith('bias') ? { buffer: 'bias', elementBytes: 2 } : null,
      m: null,
      n: N,
      k: K,
      dtype,
      output,
      epilogue,
      transB: true,
      alpha,
      beta: 0,
    };
    const op: MatmulOp = {
      kind: 'matmul',
      stream: 's0',
      matmul: `product-${epilogue}`,
      chunk: null,
      first: 0,
      count: M,
      deviceFirst: 0,
      spec,
    };
    const bytesOf = (buffer: string) => (buffer === 'a' || buffer === 'b' ? inputBytes : 2);
    const site: IssueSite = {
      stream: stream as StreamHandle,
      device: 0,
      schedule: 'the GPU test',
      address: (buffer, offset) => (base[buffer as keyof typeof base] + BigInt(offset * bytesOf(buffer))) as DevicePtr,
      buffer: (buffer) => ({ type: buffer === 'a' || buffer === 'b' ? 'raw' : output, elementBytes: bytesOf(buffer) }),
      onDevice: (make) => make(),
      scheduleId: 'test',
      ranges: [],
      hostCall: () => {
        throw new Error('no host function here');
      },
    };
    const capability = {
      major: rt.attribute('computeCapabilityMajor', 0),
      minor: rt.attribute('computeCapabilityMinor', 0),
    };
    const runtime = openMatmul(openCublasLt(), {
      rt,
      cleanup,
      devices: [0],
      capability: () => capability,
      ops: [op],
      schedules: [],
      ring: null,
      launch: NOT_LAUNCHED,
    });
    assert.equal(runtime.issue(op, site).issue(), 0);
    rt.streams.synchronize(stream, 'the matmul');
    const back = nativeBlock(M * N * 2);
    cleanup.push(() => back.free());
    rt.memory.copy(back.address, base.c, M * N * 2, 'd2h');
    const bits = Uint16Array.from({ length: M * N }, (_, i) => back.view.getUint16(i * 2, true));
    return { got: decode(bits, output), want: reference(data, epilogue, alpha) };
  } finally {
    for (const release of releases.reverse()) release();
  }
}

/** The elements outside |got - want| ≤ absolute + relative·|want|, the first few, for the message. */
function outside(
  got: readonly number[],
  want: readonly number[],
  tolerance: { relative: number; absolute: number },
): string[] {
  return want.flatMap((w, i) => {
    const g = got[i] ?? Number.NaN;
    return Math.abs(g - w) <= tolerance.absolute + tolerance.relative * Math.abs(w)
      ? []
      : [`[${Math.floor(i / N)}, ${i % N}]: got ${g}, want ${w}`];
  });
}

// A 16-bit output rounds to 8 (bf16) or 11 (fp16) significant bits, and the device sums 128 products in another order.
const TOLERANCE: Readonly<Record<OutputType, { relative: number; absolute: number }>> = {
  bfloat16: { relative: 0.01, absolute: 0.01 },
  float16: { relative: 0.002, absolute: 0.002 },
};

describe('the matmul runtime on a real device, against a CPU reference', () => {
  for (const epilogue of EPILOGUES) {
    it(
      `computes bf16 D = ${epilogue}(0.5·A·Bᵀ${epilogue.startsWith('bias') ? ' + bias' : ''}) within bf16 rounding`,
      gpu,
      () => {
        const { got, want } = runProduct('bf16', 'bfloat16', epilogue, 0.5);
        const bad = outside(got, want, TOLERANCE.bfloat16);
        assert.deepEqual(bad.slice(0, 5), [], `${bad.length} of ${want.length} elements outside the tolerance`);
        // The reference is not trivially met: a ReLU zeroes some of it, and every output is not the same.
        assert.ok(new Set(want).size > M * N * 0.3);
      },
    );
  }

  it('computes fp16 D = bias-gelu(A·Bᵀ + bias) within fp16 rounding', gpu, () => {
    const { got, want } = runProduct('fp16', 'float16', 'bias-gelu', 1);
    const bad = outside(got, want, TOLERANCE.float16);
    assert.deepEqual(bad.slice(0, 5), [], `${bad.length} of ${want.length} elements outside the tolerance`);
  });

  const fp8 = (() => {
    if (skip) return { skip };
    const rt = openRuntime();
    const cc = rt.attribute('computeCapabilityMajor', 0) * 10 + rt.attribute('computeCapabilityMinor', 0);
    return cc >= 89
      ? {}
      : { skip: `fp8 needs compute capability 8.9 or newer; device 0 is ${Math.floor(cc / 10)}.${cc % 10}` };
  })();
  it('computes fp8 (e4m3) D = bias-relu(A·Bᵀ + bias) into bf16, the inputs exact in e4m3', fp8, () => {
    const { got, want } = runProduct('fp8', 'bfloat16', 'bias-relu', 1);
    const bad = outside(got, want, TOLERANCE.bfloat16);
    assert.deepEqual(bad.slice(0, 5), [], `${bad.length} of ${want.length} elements outside the tolerance`);
  });
});

// 1,024 rows of x (256 bf16 each) through h = relu(x · w1ᵀ + b1), then y = h · w2ᵀ, in 8 chunks of 128 rows over 4
// streams: two matmuls per chunk, the first with its bias and activation in the epilogue. The heuristic may pick
// another algorithm for the whole buffers than for a chunk, so outputs compare within a tolerance.
const CONFIG = `name: matmul-small
buffers:
  x: { type: bfloat16, itemSize: 256, role: in, init: { kind: random, seed: 1 } }
  w1: { type: bfloat16, count: 65536, role: resident, init: { kind: random, seed: 2 } }
  b1: { type: bfloat16, count: 256, role: resident, init: { kind: constant, value: 0.01 } }
  h: { type: bfloat16, itemSize: 256, role: scratch }
  w2: { type: bfloat16, count: 32768, role: resident, init: { kind: random, seed: 3 } }
  y: { type: bfloat16, itemSize: 128, role: out }
pipeline: { items: 1024, chunks: 8, streams: 4, mode: graph }
kernels:
  - name: layer1
    matmul: { a: x, b: w1, c: h, bias: b1, epilogue: bias-relu, n: 256, k: 256, dtype: bf16, transB: true }
  - name: layer2
    matmul: { a: h, b: w2, c: y, n: 128, k: 256, dtype: bf16, transB: true }
verify:
  tolerance: { relative: 0.02, absolute: 0.05 }
repetitions: { reps: 5, warmup: 1 }
`;

/** The compiled CLI beside this file's compiled form: dist/src/cli/main.js, in the repository or the bundle. */
const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'cli', 'main.js');

interface ModeJson {
  readonly id: string;
  readonly role: {
    readonly kind: string;
    readonly stage?: string;
    readonly kernel?: string;
    readonly layout?: { readonly issue?: string };
  };
  readonly throughput?: { readonly flop?: number; readonly tflops?: number };
}
interface ResultJson {
  readonly verification: { readonly status: string };
  readonly modes: readonly ModeJson[];
  readonly timeline?: {
    readonly reps: readonly {
      readonly mode: string;
      readonly ops: readonly {
        readonly kind: string;
        readonly kernel: string | null;
        readonly chunk: number | null;
        readonly bytes: number;
      }[];
    }[];
  };
}

describe('the matmul stage in a config, on a real device', () => {
  it(
    'runs two matmuls per chunk, verifies them against serial, replays them as a graph, traces them and rates the stage',
    gpu,
    () => {
      const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-matmul-'));
      const config = join(out, 'matmul-small.yaml');
      writeFileSync(config, CONFIG);
      const json = join(out, 'matmul-small.json');
      const run = spawnSync(process.execPath, [CLI, 'run', config, '--json', json], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1', COLUMNS: '1000' },
        timeout: 120_000,
      });
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /verification: passed/);
      const result = JSON.parse(readFileSync(json, 'utf8')) as ResultJson;
      assert.equal(result.verification.status, 'passed');
      assert.ok(
        result.modes.some((m) => m.role.kind === 'overlapped' && m.role.layout?.issue === 'graph'),
        'the body captured with its cuBLASLt calls and replayed as a graph',
      );
      // Each step alone on whole buffers is a mode of its own, rated from its product's flop.
      const alone = (kernel: string) =>
        result.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'kernel' && m.role.kernel === kernel)
          ?.throughput;
      assert.deepEqual([alone('layer1')?.flop, alone('layer2')?.flop], [2 * 1024 * 256 * 256, 2 * 1024 * 128 * 256]);
      assert.ok((alone('layer1')?.tflops ?? 0) > 0 && (alone('layer2')?.tflops ?? 0) > 0);
      const overlapped = result.modes.find((m) => m.role.kind === 'overlapped' && m.role.layout?.issue === undefined);
      const rep = result.timeline?.reps.find((r) => r.mode === overlapped?.id);
      assert.ok(rep, 'a traced rep of the overlapped mode');
      const matmuls = rep.ops.filter((o) => o.kind === 'matmul');
      assert.deepEqual(
        [matmuls.filter((o) => o.kernel === 'layer1').length, matmuls.filter((o) => o.kernel === 'layer2').length],
        [8, 8],
      );
      assert.ok(
        matmuls.filter((o) => o.kernel === 'layer1').every((o) => o.bytes === 128 * 256 * 2 + 256 * 256 * 2 + 256 * 2),
      );
    },
  );
});
