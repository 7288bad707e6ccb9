import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ActivityCollection, matchActivity } from '../cuda/cupti.js';
import { loadConfigFile } from '../config/load.js';
import { resolveKernels } from '../kernels/resolve.js';
import { verifySchedules } from '../measure/repeat.js';
import { buildPlan } from '../plan/build.js';
import type { Op, Schedule } from '../plan/types.js';
import type { GemmOp } from './gemm/spec.js';
import { MODEL_RESOURCES, nounCounts, stage, takesTolerance, type WorkOp, workNames } from '../kinds/index.js';
import { FakeRunner } from '../../test/helpers/fake-runner.js';
import { tinySweepPlan } from '../../test/helpers/tiny-sweep.js';

// What the rest of the code reads from the stage table instead of spelling kinds out: the kernels a failure names,
// the printed plan's nouns, which CUPTI records are an op's time, the model's resources and which outputs take the
// config's tolerance.

const operand = (buffer: string) => ({ buffer, itemSize: 4, elementBytes: 4 });
const gemmOp = (c: string): GemmOp => ({
  kind: 'gemm',
  stream: 's0',
  gemm: 'layer',
  chunk: 0,
  first: 0,
  count: 4,
  deviceFirst: 0,
  spec: {
    a: operand('x'),
    b: operand('w'),
    c: operand(c),
    m: null,
    n: 4,
    k: 4,
    dtype: 'fp32',
    transB: false,
    alpha: 1,
    beta: 0,
    cFloat32: false,
  },
});
const kernelOp: WorkOp = {
  kind: 'kernel',
  stream: 's0',
  kernel: 'scale',
  chunk: 0,
  first: 0,
  count: 4,
  deviceFirst: 0,
};
const copy = (direction: 'h2d' | 'd2h', buffer: string): WorkOp => ({
  kind: 'copy',
  stream: 's0',
  direction,
  buffer,
  hostOffset: 0,
  deviceOffset: 0,
  bytes: 16,
  chunk: 0,
});

describe('the list of stage kinds, read by the code outside src/kinds', () => {
  it('names the kernels and library calls of a body once each, and nothing for copies, host functions or ordering ops', () => {
    const ops: Op[] = [
      copy('h2d', 'x'),
      gemmOp('y'),
      kernelOp,
      gemmOp('y'),
      { kind: 'record', stream: 's0', event: 'e' },
      { kind: 'host', stream: 's0', name: 'sum', chunk: 0 },
    ];
    assert.deepEqual(workNames(ops), ['layer', 'scale']);
  });

  it("counts a body's ops under each kind's noun, copies of both directions as one, in the table's order", () => {
    const ops: Op[] = [
      copy('h2d', 'x'),
      copy('d2h', 'y'),
      gemmOp('y'),
      kernelOp,
      kernelOp,
      { kind: 'wait', stream: 's0', event: 'e' },
    ];
    const counts = nounCounts(ops);
    assert.deepEqual(
      counts.map((n) => [n.one, n.count, n.always]),
      [
        ['copy', 2, true],
        ['kernel launch', 2, true],
        ['cuBLAS GEMM', 1, false],
        ['cuBLASLt matmul', 0, false],
        ['NCCL collective', 0, false],
        ['host function', 0, false],
      ],
    );
  });

  it("counts a memset among a gemm's records as its time, and one correlated with a kernel's launch as a record of the wrong kind", () => {
    const collection: ActivityCollection = {
      records: [
        { kind: 'memset', correlationId: 1, deviceId: 0, streamId: 1, bytes: 0, startNs: 90, endNs: 95 },
        { kind: 'kernel', correlationId: 2, deviceId: 0, streamId: 1, bytes: 0, startNs: 100, endNs: 400 },
        { kind: 'memset', correlationId: 3, deviceId: 0, streamId: 1, bytes: 0, startNs: 410, endNs: 420 },
        { kind: 'kernel', correlationId: 4, deviceId: 0, streamId: 1, bytes: 0, startNs: 430, endNs: 500 },
      ],
      external: new Map([
        [1, 1],
        [2, 1],
        [3, 2],
        [4, 2],
      ]),
      dropped: 0,
      malformed: 0,
    };
    const matched = matchActivity(collection, [stage('gemm').cupti, stage('kernel').cupti]);
    assert.deepEqual(matched.spans, [
      { start: 90, end: 400 },
      { start: 430, end: 500 },
    ]);
    assert.equal(matched.wrongKind, 1);
  });

  it('gives the model its resources once each in pipeline order, kernels and GEMMs on one', () => {
    assert.deepEqual(
      MODEL_RESOURCES.map((r) => [r.term, r.estimate, r.hostLink]),
      [
        ['H2D', 'copy', true],
        ['kernels', 'alone', false],
        ['D2H', 'copy', true],
      ],
    );
    assert.equal(stage('gemm').model, stage('kernel').model);
    assert.equal(stage('host').model, undefined);
  });

  it('lets an output take the tolerance where a gemm writes it as its C or a kernel may write it, never where it is only copied', () => {
    assert.equal(takesTolerance('y', [copy('h2d', 'x'), gemmOp('y'), copy('d2h', 'y')]), true);
    assert.equal(takesTolerance('z', [copy('h2d', 'x'), gemmOp('y'), copy('d2h', 'z')]), false);
    assert.equal(takesTolerance('z', [copy('h2d', 'z'), kernelOp, copy('d2h', 'z')]), true);
    assert.equal(takesTolerance('z', [copy('h2d', 'z'), copy('d2h', 'z')]), false);
  });
});

describe('verification by the kinds that write an output', () => {
  const { plan } = tinySweepPlan();
  // Every overlapped mode's y differs from serial's by 0.01%: within a 1% tolerance, never byte for byte.
  const write = (s: Schedule, out: Uint8Array) =>
    new Float32Array(out.buffer, out.byteOffset, out.byteLength / 4).fill(s.role.kind === 'overlapped' ? 1.0001 : 1);
  const tolerance = { relative: 0.01, absolute: 0 };

  it("compares a kernel's output within the config's tolerance", async () => {
    const v = await verifySchedules(
      new FakeRunner(plan.schedules, plan.buffers, { write }),
      true,
      undefined,
      tolerance,
    );
    assert.equal(v.status, 'passed');
    assert.ok((v.tolerance?.largestError.relative ?? 0) > 0.00009);
  });

  it('compares an output no kernel or library call writes byte for byte, tolerance or not', async () => {
    const copiesOnly = plan.schedules.map((s) => ({ ...s, body: s.body.filter((op) => op.kind !== 'kernel') }));
    const v = await verifySchedules(new FakeRunner(copiesOnly, plan.buffers, { write }), true, undefined, tolerance);
    assert.equal(v.status, 'failed');
    assert.deepEqual([...new Set(v.mismatches.map((m) => m.buffer))], ['y']);
  });
});

describe('the shipped configs with verify.tolerance', () => {
  it('compare every output of every verified mode within the tolerance, as they did before the kinds decided it', () => {
    for (const file of ['configs/inference.yaml', 'configs/weight-streaming.yaml']) {
      const loaded = loadConfigFile(file);
      assert.ok(loaded.config.tolerance, file);
      const plan = buildPlan(loaded.config, resolveKernels(loaded.config, loaded.locate));
      const outputs = plan.buffers.filter((b) => b.role === 'out' || b.role === 'inout');
      assert.ok(outputs.length > 0, file);
      const verified = plan.schedules.filter((s) => s.verify);
      assert.ok(verified.length >= 2, `${file}: serial and a layout`);
      for (const schedule of verified) {
        for (const b of outputs) assert.ok(takesTolerance(b.name, schedule.body), `${file} ${schedule.id} ${b.name}`);
      }
    }
  });
});
