import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostBytes } from '../../cuda/host.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import type { DevicePtr, HostPtr, StreamHandle } from '../../cuda/types.js';
import { DeviceFailure, UsageError } from '../../errors.js';
import { type IssueSite, NOT_LAUNCHED, type OpenContext } from '../api/index.js';
import { LAYER1 as CONFIG_LAYER1 } from '../../../test/helpers/matmul.js';
import { type CublasLtBinding, CublasLtError, HEURISTIC_RESULT } from './cublaslt.js';
import { openMatmul, WORKSPACE_BYTES } from './runtime.js';
import type { MatmulOp, MatmulSpec } from './spec.js';

/** What a run with no collective and no launcher opens a kind with, beyond its own fields. */
const ALONE = { schedules: [], ring: null, launch: NOT_LAUNCHED } as const;

// The runtime against a fake libcublasLt that records every call with the values it was given (what a pointer
// argument points to, read back from the native memory the runtime wrote it to), so the calls are checked on a
// machine without a GPU.

// Alpha other than 1, so that a test sees the value the runtime wrote for it.
const LAYER1: MatmulSpec = { ...CONFIG_LAYER1, alpha: 0.5 };

const op = (chunk: number, count: number, spec: MatmulSpec = LAYER1, stream = 's0'): MatmulOp => ({
  kind: 'matmul',
  stream,
  matmul: 'layer1',
  chunk,
  first: chunk * count,
  count,
  deviceFirst: chunk * count,
  spec,
});

// Device buffers at fixed bases; an element offset is 2 bytes an element.
const BASE: Readonly<Record<string, bigint>> = { x: 0x1000_0000n, w1: 0x2000_0000n, h: 0x3000_0000n, b1: 0x4000_0000n };

type Call = { readonly api: string; readonly args: readonly unknown[] };

interface Fake {
  readonly binding: CublasLtBinding;
  readonly calls: Call[];
  /** Statuses to return, by api, in order; 0 once they run out. */
  readonly fail: Map<string, number[]>;
  /** The heuristic's answer: algorithms returned, their state, workspace and waves. */
  heuristic: { returned: number; state: number; workspace: bigint; waves: number };
}

function fakeCublasLt(): Fake {
  const calls: Call[] = [];
  const fail = new Map<string, number[]>();
  let next = 0x100n;
  const status = (api: string, ...args: unknown[]) => {
    calls.push({ api, args });
    return fail.get(api)?.shift() ?? 0;
  };
  const made = (api: string, out: BigUint64Array, ...args: unknown[]) => {
    next += 0x10n;
    out[0] = next;
    return status(api, next, ...args);
  };
  const value = (pointer: HostPtr, bytes: number): bigint | number => {
    const view = new DataView(hostBytes(pointer, bytes).slice().buffer);
    return bytes === 8 ? view.getBigUint64(0, true) : view.getInt32(0, true);
  };
  const fake: Fake = {
    calls,
    fail,
    heuristic: { returned: 1, state: 0, workspace: 4096n, waves: 1.5 },
    binding: {
      path: '/fake/libcublasLt.so.13',
      create: (out) => made('cublasLtCreate', out),
      destroy: (handle) => status('cublasLtDestroy', handle),
      version: () => 130000,
      statusString: (s) => `the fake's status ${s}`,
      matmulDescCreate: (out, computeType, scaleType) => made('cublasLtMatmulDescCreate', out, computeType, scaleType),
      matmulDescDestroy: (desc) => status('cublasLtMatmulDescDestroy', desc),
      matmulDescSetAttribute: (desc, attribute, pointer, bytes) =>
        status('cublasLtMatmulDescSetAttribute', desc, attribute, value(pointer, bytes), bytes),
      matrixLayoutCreate: (out, type, rows, cols, ld) => made('cublasLtMatrixLayoutCreate', out, type, rows, cols, ld),
      matrixLayoutDestroy: (layout) => status('cublasLtMatrixLayoutDestroy', layout),
      preferenceCreate: (out) => made('cublasLtMatmulPreferenceCreate', out),
      preferenceDestroy: (preference) => status('cublasLtMatmulPreferenceDestroy', preference),
      preferenceSetAttribute: (preference, attribute, pointer, bytes) =>
        status('cublasLtMatmulPreferenceSetAttribute', preference, attribute, value(pointer, bytes), bytes),
      algoGetHeuristic: (handle, desc, a, b, c, d, preference, requested, results, returned) => {
        const bytes = hostBytes(results, HEURISTIC_RESULT.bytes);
        const result = new DataView(bytes.buffer, bytes.byteOffset, HEURISTIC_RESULT.bytes);
        result.setBigUint64(0, 0xa160n, true);
        result.setBigUint64(HEURISTIC_RESULT.workspaceSize, fake.heuristic.workspace, true);
        result.setInt32(HEURISTIC_RESULT.state, fake.heuristic.state, true);
        result.setFloat32(HEURISTIC_RESULT.wavesCount, fake.heuristic.waves, true);
        returned[0] = fake.heuristic.returned;
        return status('cublasLtMatmulAlgoGetHeuristic', handle, desc, a, b, c, d, preference, requested);
      },
      matmul: (
        handle,
        desc,
        alpha,
        a,
        aLayout,
        b,
        bLayout,
        beta,
        c,
        cLayout,
        d,
        dLayout,
        algo,
        workspace,
        workspaceBytes,
        stream,
      ) => {
        const float = (pointer: HostPtr) => new DataView(hostBytes(pointer, 4).slice().buffer).getFloat32(0, true);
        const algorithm = new DataView(hostBytes(algo, 8).slice().buffer).getBigUint64(0, true);
        return status(
          'cublasLtMatmul',
          handle,
          desc,
          float(alpha),
          a,
          aLayout,
          b,
          bLayout,
          float(beta),
          c,
          cLayout,
          d,
          dLayout,
          algorithm,
          workspace,
          workspaceBytes,
          stream,
        );
      },
    },
  };
  return fake;
}

interface Harness {
  readonly context: OpenContext<MatmulOp>;
  readonly released: string[];
  readonly mallocs: number[];
  run(): void;
}

function harness(ops: readonly MatmulOp[], capability = { major: 9, minor: 0 }): Harness {
  const released: string[] = [];
  const mallocs: number[] = [];
  const releases: (() => void)[] = [];
  const rt = {
    memory: {
      malloc: (bytes: number) => {
        mallocs.push(bytes);
        return (0x9000_0000n + BigInt(mallocs.length) * 0x1000_0000n) as DevicePtr;
      },
      free: (pointer: DevicePtr) => released.push(`free ${pointer.toString(16)}`),
    },
  } as unknown as CudaRuntime;
  return {
    context: {
      ...ALONE,
      rt,
      cleanup: { push: (release) => releases.push(release) },
      devices: [0],
      capability: () => capability,
      ops,
    },
    released,
    mallocs,
    run: () => {
      for (const release of releases.reverse()) release();
    },
  };
}

const site = (stream: bigint): IssueSite => ({
  stream: stream as StreamHandle,
  device: 0,
  schedule: 'overlapped, 4 streams × 16 chunks',
  address: (buffer, elementOffset) => ((BASE[buffer] ?? 0n) + BigInt(elementOffset) * 2n) as DevicePtr,
  buffer: () => ({ type: 'bfloat16', elementBytes: 2 }),
  onDevice: (make) => make(),
  scheduleId: 'test',
  ranges: [],
  hostCall: () => {
    throw new Error('no host function here');
  },
});

const apis = (calls: readonly Call[]) => calls.map((c) => c.api);
const argsOf = (calls: readonly Call[], api: string) => calls.filter((c) => c.api === api).map((c) => c.args);

describe('the matmul runtime against a fake cuBLASLt', () => {
  it('prepares a product once: handle, descriptor with transposes, epilogue and bias, layouts, workspace preference, heuristic', () => {
    const fake = fakeCublasLt();
    const chunk = op(1, 512);
    const h = harness([chunk]);
    openMatmul(fake.binding, h.context).issue(chunk, site(7n));
    assert.deepEqual(apis(fake.calls), [
      'cublasLtMatmulDescCreate',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatrixLayoutCreate',
      'cublasLtMatrixLayoutCreate',
      'cublasLtMatrixLayoutCreate',
      'cublasLtMatmulPreferenceCreate',
      'cublasLtMatmulPreferenceSetAttribute',
      'cublasLtMatmulPreferenceSetAttribute',
      'cublasLtMatmulPreferenceSetAttribute',
      'cublasLtMatmulPreferenceSetAttribute',
      'cublasLtMatmulPreferenceSetAttribute',
      'cublasLtCreate',
      'cublasLtMatmulAlgoGetHeuristic',
    ]);
    const [desc] = argsOf(fake.calls, 'cublasLtMatmulDescCreate');
    assert.deepEqual(desc?.slice(1), [68, 0], 'CUBLAS_COMPUTE_32F, scale CUDA_R_32F');
    // TRANSA = T, TRANSB = N, EPILOGUE = RELU_BIAS, BIAS_POINTER = b1's base, BIAS_DATA_TYPE = CUDA_R_16BF.
    assert.deepEqual(
      argsOf(fake.calls, 'cublasLtMatmulDescSetAttribute').map((a) => a.slice(1)),
      [
        [3, 1, 4],
        [4, 0, 4],
        [7, 6, 4],
        [8, BASE.b1, 8],
        [26, 14, 4],
      ],
    );
    // cuBLASLt's A is w1 stored as 4096 rows of 4096 (k × n, ld k), its B x's chunk (k × m), its C and D h's (n × m).
    assert.deepEqual(
      argsOf(fake.calls, 'cublasLtMatrixLayoutCreate').map((a) => a.slice(1)),
      [
        [14, 4096, 4096, 4096],
        [14, 4096, 512, 4096],
        [14, 4096, 512, 4096],
      ],
    );
    // The workspace, and the operands' alignments: every one 256 bytes here (the fake's bases, chunk rows of 8 KiB).
    assert.deepEqual(
      argsOf(fake.calls, 'cublasLtMatmulPreferenceSetAttribute').map((a) => a.slice(1)),
      [
        [1, BigInt(WORKSPACE_BYTES), 8],
        [5, 256, 4],
        [6, 256, 4],
        [7, 256, 4],
        [8, 256, 4],
      ],
    );
    const [layoutA, layoutB, layoutC] = argsOf(fake.calls, 'cublasLtMatrixLayoutCreate').map((a) => a[0]);
    const [handle] = argsOf(fake.calls, 'cublasLtCreate')[0] ?? [];
    const [preference] = argsOf(fake.calls, 'cublasLtMatmulPreferenceCreate')[0] ?? [];
    assert.deepEqual(argsOf(fake.calls, 'cublasLtMatmulAlgoGetHeuristic')[0], [
      handle,
      desc?.[0],
      layoutA,
      layoutB,
      layoutC,
      layoutC,
      preference,
      1,
    ]);
    assert.deepEqual(h.mallocs, [WORKSPACE_BYTES], "the stream's workspace");
  });

  it('calls cublasLtMatmul with every argument prebuilt: B, A and C at the chunk, D over C, the algorithm, the workspace, the stream', () => {
    const fake = fakeCublasLt();
    const chunk = op(1, 512);
    const h = harness([chunk]);
    const issued = openMatmul(fake.binding, h.context).issue(chunk, site(7n));
    assert.equal(issued.hostTag, null);
    const before = fake.calls.length;
    assert.equal(issued.issue(), 0);
    assert.equal(issued.issue(), 0);
    const calls = fake.calls.slice(before);
    assert.deepEqual(
      apis(calls),
      ['cublasLtMatmul', 'cublasLtMatmul'],
      'the hot loop calls cublasLtMatmul and nothing else',
    );
    const [
      handle,
      desc,
      alpha,
      a,
      aLayout,
      b,
      bLayout,
      beta,
      c,
      cLayout,
      d,
      dLayout,
      algorithm,
      workspace,
      workspaceBytes,
      stream,
    ] = calls[0]?.args ?? [];
    const [layoutA, layoutB, layoutC] = argsOf(fake.calls, 'cublasLtMatrixLayoutCreate').map((x) => x[0]);
    assert.deepEqual(
      [handle, desc],
      [argsOf(fake.calls, 'cublasLtCreate')[0]?.[0], argsOf(fake.calls, 'cublasLtMatmulDescCreate')[0]?.[0]],
    );
    assert.deepEqual([alpha, beta], [0.5, 0]);
    assert.deepEqual([a, aLayout, b, bLayout], [BASE.w1, layoutA, (BASE.x ?? 0n) + 512n * 4096n * 2n, layoutB]);
    assert.deepEqual(
      [c, cLayout, d, dLayout],
      [(BASE.h ?? 0n) + 512n * 4096n * 2n, layoutC, (BASE.h ?? 0n) + 512n * 4096n * 2n, layoutC],
    );
    assert.deepEqual([algorithm, workspace, workspaceBytes, stream], [0xa160n, 0xa000_0000n, WORKSPACE_BYTES, 7n]);
  });

  it('shares one handle and one prepared shape across chunks of a row count, and gives each stream its own workspace', () => {
    const fake = fakeCublasLt();
    const ops = [op(0, 512), op(1, 512, LAYER1, 's1'), op(2, 256)];
    const h = harness(ops);
    const runtime = openMatmul(fake.binding, h.context);
    runtime.issue(ops[0] as MatmulOp, site(7n));
    runtime.issue(ops[1] as MatmulOp, site(8n));
    runtime.issue(ops[2] as MatmulOp, site(7n));
    assert.equal(argsOf(fake.calls, 'cublasLtCreate').length, 1);
    assert.equal(argsOf(fake.calls, 'cublasLtMatmulAlgoGetHeuristic').length, 2, 'one for m 512, one for m 256');
    assert.deepEqual(h.mallocs, [WORKSPACE_BYTES, WORKSPACE_BYTES], 'streams 7 and 8');
  });

  it("tells the heuristic how aligned a chunk's rows are, and prepares a shape again for another alignment", () => {
    const fake = fakeCublasLt();
    // Rows of 1,000 bf16 values (2,000 bytes): chunk 1 of 8 rows starts 16,000 bytes in, 128-byte aligned; chunk 2 256.
    const logits: MatmulSpec = { ...LAYER1, c: { ...LAYER1.c, itemSize: 1000 }, n: 1000, bias: null, epilogue: 'none' };
    const ops = [op(1, 8, logits), op(2, 8, logits), op(4, 8, logits)];
    const runtime = openMatmul(fake.binding, harness(ops).context);
    for (const chunk of ops) runtime.issue(chunk, site(7n));
    const alignments = argsOf(fake.calls, 'cublasLtMatmulPreferenceSetAttribute')
      .filter((a) => a[1] === 7)
      .map((a) => a[2]);
    assert.deepEqual(alignments, [128, 256], 'chunk 4 (64,000 bytes in) reuses the 256-byte shape of chunk 2');
    assert.equal(argsOf(fake.calls, 'cublasLtMatmulAlgoGetHeuristic').length, 2);
  });

  it('releases everything it made with the run, in reverse order of making', () => {
    const fake = fakeCublasLt();
    const chunk = op(0, 512);
    const h = harness([chunk]);
    openMatmul(fake.binding, h.context).issue(chunk, site(7n));
    const before = fake.calls.length;
    h.run();
    assert.deepEqual(apis(fake.calls.slice(before)), [
      'cublasLtDestroy',
      'cublasLtMatmulPreferenceDestroy',
      'cublasLtMatrixLayoutDestroy',
      'cublasLtMatrixLayoutDestroy',
      'cublasLtMatrixLayoutDestroy',
      'cublasLtMatmulDescDestroy',
    ]);
    assert.deepEqual(h.released, ['free a0000000'], 'the workspace, the last thing made, freed first');
  });

  it('reports a release that fails, naming the call and the product', () => {
    const fake = fakeCublasLt();
    fake.fail.set('cublasLtMatrixLayoutDestroy', [7]);
    const chunk = op(0, 512);
    const h = harness([chunk]);
    openMatmul(fake.binding, h.context).issue(chunk, site(7n));
    assert.throws(
      h.run,
      /^CublasLtError: cublasLtMatrixLayoutDestroy failed \(matmul layer1, m 512\): CUBLAS_STATUS_INVALID_VALUE \(7\)/,
    );
  });

  it('throws a failing status as a device failure naming the call, the op, the product and the algorithm', () => {
    const fake = fakeCublasLt();
    fake.fail.set('cublasLtMatmul', [13]);
    const chunk = op(1, 512);
    const issued = openMatmul(fake.binding, harness([chunk]).context).issue(chunk, site(7n));
    assert.throws(issued.issue, (error: unknown) => {
      assert.ok(error instanceof CublasLtError && error instanceof DeviceFailure);
      assert.equal(
        error.message,
        "cublasLtMatmul failed (matmul layer1: bf16 4096×512×4096 (A T, B N), epilogue bias-relu, algorithm: the heuristic's first (workspace 4096 bytes, 1.50 waves)): CUBLAS_STATUS_EXECUTION_FAILED (13): the fake's status 13",
      );
      return true;
    });
    assert.equal(issued.issue(), 0, 'the next call goes through');
  });

  it('names the attribute a descriptor refused, and hints at what status 15 means', () => {
    const fake = fakeCublasLt();
    fake.fail.set('cublasLtMatmulDescSetAttribute', [0, 0, 15]);
    const chunk = op(0, 512);
    assert.throws(
      () => openMatmul(fake.binding, harness([chunk]).context).issue(chunk, site(7n)),
      (error: unknown) => {
        assert.ok(error instanceof CublasLtError);
        assert.equal(
          error.message,
          "cublasLtMatmulDescSetAttribute failed (EPILOGUE of matmul layer1, m 512): CUBLAS_STATUS_NOT_SUPPORTED (15): the fake's status 15",
        );
        assert.match(error.hint ?? '', /no algorithm for this combination/);
        return true;
      },
    );
  });

  it('refuses a product for which the heuristic returns no algorithm, naming it', () => {
    const fake = fakeCublasLt();
    fake.heuristic.returned = 0;
    const chunk = op(0, 512);
    assert.throws(
      () => openMatmul(fake.binding, harness([chunk]).context).issue(chunk, site(7n)),
      /cublasLtMatmulAlgoGetHeuristic failed \(matmul layer1, m 512: cuBLASLt 13\.0\.0 \(\/fake\/libcublasLt\.so\.13\) has no algorithm for bf16 4096×512×4096 \(A T, B N\), epilogue bias-relu\): CUBLAS_STATUS_NOT_SUPPORTED \(15\)/,
    );
  });

  it('makes one call per item where m is given, each with its own B, and sets no bias without a bias epilogue', () => {
    const fake = fakeCublasLt();
    const weights: MatmulSpec = {
      ...LAYER1,
      a: { ...LAYER1.a, itemSize: null },
      b: { ...LAYER1.b, itemSize: 4096 * 4096 },
      c: { ...LAYER1.c, itemSize: null },
      m: 64,
      bias: null,
      epilogue: 'gelu',
    };
    const chunk = op(1, 2, weights);
    const issued = openMatmul(fake.binding, harness([chunk]).context).issue(chunk, site(7n));
    assert.deepEqual(
      argsOf(fake.calls, 'cublasLtMatmulDescSetAttribute').map((a) => a.slice(1, 3)),
      [
        [3, 1],
        [4, 0],
        [7, 32],
      ],
    );
    const before = fake.calls.length;
    issued.issue();
    const bs = argsOf(fake.calls.slice(before), 'cublasLtMatmul').map((a) => a[3]);
    assert.deepEqual(bs, [(BASE.w1 ?? 0n) + 2n * 4096n * 4096n * 2n, (BASE.w1 ?? 0n) + 3n * 4096n * 4096n * 2n]);
  });

  it('refuses fp8 on a device older than compute capability 8.9 before making anything', () => {
    const fake = fakeCublasLt();
    const fp8: MatmulSpec = {
      ...LAYER1,
      a: { ...LAYER1.a, elementBytes: 1 },
      b: { ...LAYER1.b, elementBytes: 1 },
      dtype: 'fp8',
    };
    const chunk = op(0, 512, fp8);
    assert.throws(
      () => openMatmul(fake.binding, harness([chunk], { major: 8, minor: 0 }).context),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          'matmul layer1 has dtype fp8, which needs compute capability 8.9 or newer (Ada, Hopper), and device 0 is 8.0.' &&
        error.hint === 'Use dtype bf16 or fp16 on this GPU.',
    );
    assert.deepEqual(fake.calls, []);
    openMatmul(fake.binding, harness([chunk], { major: 8, minor: 9 }).context).issue(chunk, site(7n));
    assert.deepEqual(
      argsOf(fake.calls, 'cublasLtMatrixLayoutCreate').map((a) => a[1]),
      [28, 28, 14],
      'e4m3 inputs, a bf16 output',
    );
  });
});
