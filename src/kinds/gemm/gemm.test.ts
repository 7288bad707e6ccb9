import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Chalk } from 'chalk';
import { parseConfigText } from '../../config/load.js';
import { type ActivityCollection, matchActivity } from '../../cuda/cupti.js';
import { UsageError } from '../../errors.js';
import { serialSchedule, pipelineShape } from '../../plan/schedules.js';
import { renderGantt } from '../../report/gantt.js';
import { renderSvg } from '../../report/svg.js';
import { buildTrace } from '../../report/trace.js';
import type { RunResult } from '../../result/schema.js';
import type { CublasHandle } from './cublas.js';
import type { DevicePtr } from '../../cuda/types.js';
import { type ChunkWork, phaseOps, stage } from '../index.js';
import { columnMajorCall } from '../blas/column-major.js';
import { fakeSite, siteAddress } from '../../../test/helpers/kind-site.js';
import { type CublasCalls, GemmRuntime } from './runtime.js';
import { type GemmOp, type GemmSpec, gemmBytesRead, gemmFlops } from './spec.js';
import { runCli } from '../../../test/helpers/cli.js';
import { syntheticRunResult } from '../../../test/helpers/synthetic-timeline.js';

/**
 * A libcublas that records each prebuilt call (its spec and operands as `buffer@element`) and answers `failAt`'s
 * product with status 13.
 */
function fakeCublas() {
  const calls: { spec: Parameters<CublasCalls['record']>[1]; operands: string[] }[] = [];
  let failing = -1;
  const cublas: CublasCalls = {
    create: () => 1n as CublasHandle,
    destroy: () => {},
    failure: (status, api, context) =>
      Object.assign(new Error(`${api} failed (${context}): status ${status}`), { status }) as ReturnType<
        CublasCalls['failure']
      >,
    record: (_handle, spec, a, b, c) => {
      const index = calls.push({ spec, operands: [a, b, c].map((p) => siteAddress(p as DevicePtr)) }) - 1;
      return { launch: () => (index === failing ? 13 : 0), describe: 'a product', free: () => {} };
    },
  };
  const context = {
    rt: { memory: { malloc: () => 0n, free: () => {} } },
    cleanup: { push: () => {} },
    devices: [0],
    capability: () => ({ major: 9, minor: 0 }),
    ops: [] as GemmOp[],
  };
  return {
    calls,
    runtime: new GemmRuntime(cublas, context as unknown as ConstructorParameters<typeof GemmRuntime>[1]),
    failAt: (i: number) => (failing = i),
  };
}

/** A config whose `kernels:` list is `steps` (YAML lines), over float32 buffers x (in), w (in) and y (out). */
const config = (
  steps: string,
  buffers = '  x: { type: float32, count: 4096, role: in }\n  w: { type: float32, count: 4096, role: in }\n  y: { type: float32, count: 4096, role: out }',
) => `name: g\nbuffers:\n${buffers}\nkernels:\n${steps}\npipeline: { chunks: 4, streams: 2 }\n`;

const GEMM_1x1 = '  - name: product\n    gemm: { a: x, b: w, c: y, n: 1, k: 1, dtype: fp32 }';

function usageError(text: string): UsageError {
  try {
    parseConfigText(text, '/cfg/g.yaml');
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail('the config should have been refused');
}

describe('a gemm entry in kernels:', () => {
  it('resolves to a gemm step in list order, with its operands, defaults and m left to the chunk', () => {
    const { config: c } = parseConfigText(
      config(
        `${GEMM_1x1}\n  - source: scale.cu\n    entry: scale\n    args: [{ buffer: y }, { chunk: elements }, { float32: 2 }]`,
      ),
      '/cfg/g.yaml',
    );
    assert.deepEqual(
      c.steps?.map((s) => [s.stage, s.label]),
      [
        ['gemm', 'product'],
        ['kernel', 'scale'],
      ],
    );
    assert.deepEqual(
      c.kernels.map((k) => k.label),
      ['scale'],
      'only kernels go to NVRTC',
    );
    const spec = c.steps?.[0]?.spec as GemmSpec;
    assert.deepEqual(spec, {
      a: { buffer: 'x', itemSize: 1, elementBytes: 4 },
      b: { buffer: 'w', itemSize: 1, elementBytes: 4 },
      c: { buffer: 'y', itemSize: 1, elementBytes: 4 },
      m: null,
      n: 1,
      k: 1,
      dtype: 'fp32',
      transB: false,
      alpha: 1,
      beta: 0,
      cFloat32: false,
    });
  });

  it('refuses an operand that names no buffer, naming the field and the buffers there are', () => {
    const error = usageError(config('  - gemm: { a: x, b: weights, c: y, n: 1, k: 1, dtype: fp32 }'));
    assert.match(
      error.message,
      /g\.yaml:7:\d+: kernels\[0\]: gemm\.b names no buffer "weights" \(buffers: x, w, y\)\./,
    );
  });

  it('refuses A or C whose items are not k or n elements long, naming the field and the itemSize to give', () => {
    assert.match(
      usageError(config('  - gemm: { a: x, b: w, c: y, n: 1, k: 64, dtype: fp32 }')).message,
      /gemm\.a: buffer "x" has itemSize 1, but a row of A is k = 64 elements; give "x" itemSize: 64/,
    );
    assert.match(
      usageError(config('  - gemm: { a: x, b: w, c: y, n: 8, k: 1, dtype: fp32 }')).message,
      /gemm\.c: buffer "y" has itemSize 1, but a row of C is n = 8 elements; give "y" itemSize: 8/,
    );
  });

  it("refuses operands of another type than the dtype's, and lets C hold float32 under a 16-bit dtype", () => {
    assert.match(
      usageError(config('  - gemm: { a: x, b: w, c: y, n: 1, k: 1, dtype: fp16 }')).message,
      /gemm\.a: buffer "x" holds float32, but dtype fp16 needs float16/,
    );
    const halves =
      '  x: { type: float16, count: 64, role: in }\n  w: { type: float16, count: 64, role: in }\n  y: { type: float32, count: 64, role: out }';
    const { config: c } = parseConfigText(
      config('  - gemm: { a: x, b: w, c: y, n: 1, k: 1, dtype: fp16 }', halves),
      '/cfg/g.yaml',
    );
    assert.deepEqual(
      c.steps?.map((step) => (step.spec as GemmSpec).cFloat32),
      [true],
    );
    const wrongC =
      '  x: { type: float16, count: 64, role: in }\n  w: { type: float16, count: 64, role: in }\n  y: { type: int32, count: 64, role: out }';
    assert.match(
      usageError(config('  - gemm: { a: x, b: w, c: y, n: 1, k: 1, dtype: fp16 }', wrongC)).message,
      /gemm\.c: buffer "y" holds int32, but dtype fp16 needs float16 or float32/,
    );
  });

  it("reports a bad entry as the form it was meant to be: a gemm's field, or a kernel's", () => {
    const gemm = usageError(config('  - gemm: { a: x, b: w, c: y, n: 1, k: 1, dtype: fp32, tranB: true }')).message;
    assert.match(gemm, /unknown field "kernels\[0\]\.gemm\.tranB"; did you mean "transB"\?/);
    assert.doesNotMatch(gemm, /source|entry/);
    const kernel = usageError(config('  - source: scale.cu\n    args: []')).message;
    assert.match(kernel, /kernels\[0\]\.entry: /);
    assert.doesNotMatch(kernel, /gemm/);
  });

  it('is refused in a pipeline across two devices, whose handoff splits kernels only', () => {
    const steps = `  - name: first\n    source: scale.cu\n    entry: scale\n    args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }]\n${GEMM_1x1}\n  - name: last\n    source: scale.cu\n    entry: scale\n    args: [{ buffer: y }, { buffer: y }, { chunk: elements }, { float32: 2 }]`;
    const text = config(steps).replace(
      'pipeline: { chunks: 4, streams: 2 }',
      'devices: [0, 1]\npipeline: { chunks: 4, streams: 2, handoff: { after: first } }',
    );
    assert.match(
      usageError(text).message,
      /g\.yaml:18:\d+: a pipeline across two devices runs kernels only, and "product" is a gemm step\./,
    );
  });

  it('refuses two steps of one name', () => {
    assert.match(
      usageError(config(`${GEMM_1x1}\n${GEMM_1x1}`)).message,
      /g\.yaml:9:5: two kernels are called "product"/,
    );
  });
});

describe('planning compute steps', () => {
  it("runs a chunk's kernels and gemms in the config's order, each planned by its own kind", () => {
    const { config: c } = parseConfigText(
      config(
        `  - source: scale.cu\n    entry: scale\n    args: [{ buffer: x }, { chunk: elements }, { float32: 2 }]\n${GEMM_1x1}\n  - name: again\n    source: scale.cu\n    entry: scale\n    args: [{ buffer: y }, { chunk: elements }, { float32: 2 }]`,
      ),
      '/cfg/g.yaml',
    );
    const shape = pipelineShape(c, [{ label: 'scale' }, { label: 'again' }], false);
    const compute = serialSchedule(shape).body.flatMap((op) =>
      op.kind === 'kernel' ? [`kernel ${op.kernel}`] : op.kind === 'gemm' ? [`gemm ${op.gemm} m ${op.count}`] : [],
    );
    assert.deepEqual(compute, ['kernel scale', 'gemm product m 4096', 'kernel again']);
  });

  it("gives a gemm op the chunk's item range as m and its device position", () => {
    const spec: GemmSpec = {
      a: { buffer: 'x', itemSize: 4096, elementBytes: 2 },
      b: { buffer: 'w', itemSize: null, elementBytes: 2 },
      c: { buffer: 'h', itemSize: 1000, elementBytes: 4 },
      m: null,
      n: 1000,
      k: 4096,
      dtype: 'bf16',
      transB: true,
      alpha: 1,
      beta: 0,
      cFloat32: true,
    };
    const work: ChunkWork = {
      buffers: [],
      compute: [
        { stage: 'kernel', label: 'k1', spec: null },
        { stage: 'gemm', label: 'layer', spec },
      ],
      host: null,
      range: { first: 512, count: 256 },
      deviceFirst: 0,
      stream: 's1',
      chunk: 2,
    };
    const ops = phaseOps('compute', work);
    assert.deepEqual(
      ops.map((op) => op.kind),
      ['kernel', 'gemm'],
    );
    const gemm = ops[1];
    assert.ok(gemm?.kind === 'gemm');
    assert.deepEqual([gemm.first, gemm.count, gemm.deviceFirst, gemm.stream, gemm.chunk], [512, 256, 0, 's1', 2]);
    assert.equal(gemmFlops(gemm), 2 * 256 * 1000 * 4096);
    assert.equal(gemmBytesRead(gemm), 256 * 4096 * 2 + 4096 * 1000 * 2, 'A and B; C is not read with beta 0');
    assert.equal(
      gemmBytesRead({ ...gemm, spec: { ...spec, beta: 1 } }),
      256 * 4096 * 2 + 4096 * 1000 * 2 + 256 * 1000 * 4,
    );
  });
});

describe("cuBLAS's column-major call for row-major operands", () => {
  it('computes Cᵀ = Bᵀ·Aᵀ: B first, n × m, leading dimensions n, k and n', () => {
    const { operands, layouts: _, ...call } = columnMajorCall({ n: 1000, k: 4096, transB: false }, 256);
    assert.deepEqual(call, { transA: 'N', transB: 'N', m: 1000, n: 256, k: 4096, lda: 1000, ldb: 4096, ldc: 1000 });
    assert.deepEqual(operands, ['b', 'a', 'c']);
  });

  it("with transB (B stored n rows of k), transposes cuBLAS's A and gives it leading dimension k", () => {
    const { operands: _, layouts: __, ...call } = columnMajorCall({ n: 1000, k: 4096, transB: true }, 256);
    assert.deepEqual(call, { transA: 'T', transB: 'N', m: 1000, n: 256, k: 4096, lda: 4096, ldb: 4096, ldc: 1000 });
  });

  it('issues cublasGemmEx with B, A, C at their chunk offsets: chunked at deviceFirst × itemSize, resident at 0', () => {
    const spec: GemmSpec = {
      a: { buffer: 'x', itemSize: 64, elementBytes: 4 },
      b: { buffer: 'w', itemSize: null, elementBytes: 4 },
      c: { buffer: 'y', itemSize: 32, elementBytes: 4 },
      m: null,
      n: 32,
      k: 64,
      dtype: 'tf32',
      transB: false,
      alpha: 0.5,
      beta: 0,
      cFloat32: false,
    };
    const { calls, runtime } = fakeCublas();
    const issued = runtime.issue(
      { kind: 'gemm', stream: 's0', gemm: 'g', chunk: 1, first: 10, count: 10, deviceFirst: 10, spec },
      fakeSite(),
    );
    assert.equal(issued.hostTag, null);
    assert.deepEqual(calls, [
      {
        spec: {
          transA: 'N',
          transB: 'N',
          m: 32,
          n: 10,
          k: 64,
          lda: 32,
          ldb: 64,
          ldc: 32,
          alpha: 0.5,
          beta: 0,
          dtype: 'tf32',
          cFloat32: false,
        },
        operands: ['w@0', 'x@640', 'y@320'],
      },
    ]);
  });
});

describe('a gemm on the timeline', () => {
  it("spans every kernel (and memset) cuBLAS launched under the call's correlation id, first start to last end", () => {
    const rec = (kind: 'kernel' | 'memset', correlationId: number, startNs: number, endNs: number) => ({
      kind,
      correlationId,
      deviceId: 0,
      streamId: 1,
      bytes: 0,
      startNs,
      endNs,
    });
    const collection: ActivityCollection = {
      records: [
        rec('kernel', 20, 100, 400),
        rec('memset', 21, 90, 95),
        rec('kernel', 22, 410, 900),
        rec('kernel', 30, 950, 990),
      ],
      external: new Map([
        [20, 1],
        [21, 1],
        [22, 1],
        [30, 2],
      ]),
      dropped: 0,
      malformed: 0,
    };
    const matched = matchActivity(collection, [stage('gemm').cupti, stage('gemm').cupti]);
    assert.deepEqual(matched.spans, [
      { start: 90, end: 900 },
      { start: 950, end: 990 },
    ]);
    assert.equal(matched.wrongKind, 0);
  });

  it("has no engine time for a call whose only record is a memset: cuBLAS's kernels were not seen, so the rep falls back to events", () => {
    const collection: ActivityCollection = {
      records: [{ kind: 'memset', correlationId: 21, deviceId: 0, streamId: 1, bytes: 0, startNs: 90, endNs: 95 }],
      external: new Map([[21, 1]]),
      dropped: 0,
      malformed: 0,
    };
    assert.deepEqual(matchActivity(collection, [stage('gemm').cupti]).spans, [null]);
  });

  it("draws gemm ops with the letter G and names them in the legends of the Gantt chart, the SVG and the trace's SMs track", () => {
    const base = syntheticRunResult();
    const timeline = base.timeline as NonNullable<RunResult['timeline']>;
    const result: RunResult = {
      ...base,
      timeline: {
        ...timeline,
        reps: timeline.reps.map((rep) => ({
          ...rep,
          ops: rep.ops.map((op) => (op.kind === 'kernel' ? { ...op, kind: 'gemm' as const, kernel: 'layer1' } : op)),
        })),
      },
    };
    assert.match(renderGantt(result, { style: new Chalk({ level: 0 }), columns: 120 }), /G gemm/);
    assert.match(renderSvg(result), /<rect class="legend gemm" [^>]*fill="#b5179e"\/>.*>G<\/text>.*>gemm<\/text>/);
    assert.ok(
      buildTrace(result).traceEvents.some((e) => e.cat === 'gemm'),
      'a trace event of a gemm op',
    );
  });
});

describe('libcublas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gemm-'));
  const missing = { CUDA_PIPE_CUBLAS: join(dir, 'libcublas.so.13') };

  it('is looked for when a config has a gemm, and a missing one is exit 3 naming where it looked', () => {
    const path = join(dir, 'gemm.yaml');
    writeFileSync(path, config(GEMM_1x1));
    const run = runCli(['run', path], missing);
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /libcublas/);
    assert.match(run.stderr, /CUDA_PIPE_CUBLAS/);
  });

  it('is never loaded for a config without a gemm', () => {
    const path = join(dir, 'kernel.yaml');
    writeFileSync(
      path,
      config('  - source: scale.cu\n    entry: scale\n    args: [{ buffer: y }, { chunk: elements }, { float32: 2 }]'),
    );
    const run = runCli(['run', path], missing);
    assert.doesNotMatch(run.stderr, /cublas/i);
  });
});

describe('a gemm over streamed weights (m given, A and C resident)', () => {
  const layers = (m: string) =>
    'name: layers\npipeline: { items: 4, chunks: 4, streams: 2 }\nbuffers:\n' +
    '  w: { type: bfloat16, itemSize: 64, role: in }\n  x: { type: bfloat16, count: 256, role: resident }\n  y: { type: bfloat16, count: 256, role: resident }\n' +
    `  out: { type: float32, itemSize: 1, role: out }\nkernels:\n  - name: layer\n    gemm: { a: x, b: w, c: y, ${m}n: 8, k: 8, dtype: bf16, transB: true }\n`;

  it("takes m as the rows of every chunk's product, and B at the chunk's own block of weights", () => {
    const { config: c } = parseConfigText(layers('m: 32, '), '/cfg/l.yaml');
    const shape = pipelineShape(c, [], false);
    const gemms = serialSchedule(shape).body.filter((op) => op.kind === 'gemm');
    assert.equal(gemms.length, 1);
    const op = gemms[0] as GemmOp;
    assert.equal(op.spec.m, 32);
    assert.equal(
      gemmFlops(op),
      4 * (2 * 32 * 8 * 8),
      'whole buffers: one product of m = 32 rows per layer, for each of the 4 layers',
    );
    assert.equal(gemmBytesRead(op), 4 * (32 * 8 * 2 + 8 * 8 * 2));
  });

  it("issues one product per item, each with that item's block of B and the resident A and C at their base", () => {
    const { config: c } = parseConfigText(layers('m: 32, '), '/cfg/l.yaml');
    const spec = c.steps?.[0]?.spec as GemmSpec;
    const { calls, runtime, failAt } = fakeCublas();
    const issued = runtime.issue(
      { kind: 'gemm', stream: 's0', gemm: 'layer', chunk: null, first: 0, count: 3, deviceFirst: 1, spec },
      fakeSite(),
    );
    assert.deepEqual(
      calls.map((g) => [g.spec.n, g.operands]),
      [
        [32, ['w@64', 'x@0', 'y@0']],
        [32, ['w@128', 'x@0', 'y@0']],
        [32, ['w@192', 'x@0', 'y@0']],
      ],
    );
    assert.equal(issued.issue(), 0);
    failAt(1);
    assert.throws(
      () => issued.issue(),
      /cublasGemmEx failed \(gemm layer: a product\): status 13/,
      "the first failing product's status, naming the op",
    );
  });

  it('refuses m where A or C is chunked, naming gemm.m', () => {
    const text = layers('m: 32, ').replace(
      'y: { type: bfloat16, count: 256, role: resident }',
      'y: { type: bfloat16, itemSize: 8, role: scratch }',
    );
    assert.match(usageError(text).message, /gemm\.m: m is the row count of a resident A and C, but "y" is chunked/);
  });
});
