import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type OverlapAnalysis, OverlapAnalysisSchema, SweepSectionSchema } from '../../src/model/analysis.js';
import { type ModeResult, ModeResultSchema, ModeRoleSchema } from '../../src/model/mode.js';
import { OutputCheckRecordSchema, ToleranceCheckSchema } from '../../src/model/outputs.js';
import { isEventOp } from '../../src/model/schedule.js';

// The Result's schemas for a mode, its analysis and its output check (src/model/): a parsed document keeps every
// field it was written with (an object's schema that lost its fields would drop them, and a Result would be written
// back without them), and the bounds on counts and rates hold.

/** An overlapped mode's analysis with every optional field present, as a version-2 Result writes it. */
const analysis: OverlapAnalysis = {
  serialMs: 12.5,
  speedup: 2.5,
  speedupError: 0.04,
  bound: {
    ms: 4.2,
    limitedBy: 'H2D',
    steadyMs: 3.9,
    fillDrainMs: 0.3,
    copyEngines: 2,
    terms: [
      { term: 'H2D', steadyMs: 3.9, perOpMs: 0.1, fillDrainMs: 0.3, ms: 4.2 },
      { term: 'kernels', steadyMs: 2.1, perOpMs: 0.05, fillDrainMs: 0.6, ms: 2.7 },
    ],
    linkGbPerSecond: 24.5,
  },
  efficiency: 0.84,
  chunkElements: 1048576,
  model: {
    parts: {
      h2dMs: 3.8,
      d2hMs: 3.7,
      kernelWholeMs: 2.0,
      h2dBytes: 67108864,
      d2hBytes: 67108864,
      h2dCopiesPerChunk: 1,
      d2hCopiesPerChunk: 1,
      kernelsPerChunk: 2,
      linkMs: 5.1,
      linkPieces: 8,
      copyEngines: 2,
      h2dOpMs: 0.012,
      d2hOpMs: 0.011,
      launchOpMs: 0.004,
      hostCopyMs: 0.006,
      hostLaunchMs: 0.003,
      hostSyncMs: 0.001,
      gated: true,
    },
    kernelsChunkedMs: 2.2,
    hostIssueMs: 0.4,
    ops: { copies: 16, launches: 16, sync: 24 },
    idealMs: 3.8,
    floor: {
      chunks: 16,
      streams: 4,
      ms: 4.0,
      limitedBy: 'H2D',
      overruled: { chunks: 32, streams: 4, predictedMs: 3.95, measuredMs: 4.3 },
    },
    gap: [
      { cause: 'fill and drain', ms: 0.3 },
      { cause: 'per-op cost', ms: 0.1 },
    ],
    statistic: 'min',
    serialisers: ['pageable memory'],
    clocks: { status: 'rebuilt', mode: { min: 1980, max: 1980 }, parts: { min: 1755, max: 1980 } },
    advice: {
      code: 'layout',
      cause: 'fill and drain',
      lostMs: 0.3,
      change: 'use 16 chunks on 4 streams',
      why: 'the first chunk fills the pipeline',
      predictedMs: 4.0,
      savingMs: 0.2,
      to: { chunks: 16, streams: 4 },
    },
    words: {
      layout: '8 buckets',
      best: '16 buckets',
      limit: 'the compute',
      bestLimit: 'the all-reduces back to back',
      unpredicted: null,
      overruled: '32 buckets',
    },
  },
};

/** An overlapped mode with every optional field, its layout's variants included. */
const overlapped: ModeResult = {
  id: 'overlapped:8x2:depth-first:chunk-per-stream',
  role: {
    kind: 'overlapped',
    layout: {
      chunks: 8,
      streams: 2,
      order: 'depth-first',
      topology: 'chunk-per-stream',
      issue: 'graph',
      host: 'pinned',
      slots: 3,
      legacyOp: { chunk: 1, op: 'kernel' },
      perThreadOp: { chunk: 2, op: 'h2d' },
    },
  },
  device: 0,
  description: '8 chunks on 2 streams',
  bytes: { h2d: 1024, d2h: 2048, peer: 512, collective: 4096 },
  samplesMs: [5.1, 5.0, 5.3],
  hostIssueMs: [0.4, 0.5, 0.4],
  stats: {
    n: 3,
    median: 5.1,
    mean: 5.13,
    min: 5.0,
    max: 5.3,
    stdev: 0.15,
    q1: 5.05,
    q3: 5.2,
    iqr: 0.15,
    relativeStdev: 0.03,
    relativeNoise: 0.02,
    outliers: [2],
  },
  stoppedBy: 'fixed-reps',
  elapsedMs: 16.2,
  gateTimeouts: 0,
  smClockMHz: { min: 1755, max: 1980 },
  analysis,
  graph: { captureMs: 1.2, instantiateMs: 0.8 },
  latency: { n: 30, medianMs: 0.02, p99Ms: 0.05, maxMs: 0.07 },
  issueCost: { opsPerRep: 16, hostUsPerOp: 3.5 },
  perDevice: [{ device: 0, samplesMs: [5.1, 5.0, 5.3], medianMs: 5.1 }],
  collective: { collective: 'allreduce', calls: 8, bytes: 4096 },
  throughput: { flop: 2e12, tflops: 400, bytes: 3e9, gbPerSecond: 600 },
};

describe("a mode's schema", () => {
  it('keeps every field of an overlapped mode it parses, its analysis and the optional records included', () => {
    assert.deepEqual(ModeResultSchema.parse(overlapped), overlapped);
  });

  it('keeps a peer role that copied both ways', () => {
    const role = { kind: 'peer', from: 0, to: 1, both: true };
    assert.deepEqual(ModeRoleSchema.parse(role), role);
  });

  it('rejects a negative collective byte count and a negative rate', () => {
    const bytes = { ...overlapped, collective: { collective: 'allreduce', calls: 8, bytes: -1 } };
    assert.equal(ModeResultSchema.safeParse(bytes).success, false);
    for (const field of ['flop', 'tflops', 'bytes', 'gbPerSecond']) {
      const negative = { ...overlapped, throughput: { [field]: -1 } };
      assert.equal(ModeResultSchema.safeParse(negative).success, false, field);
    }
    const zero = { ...overlapped, throughput: { flop: 0, tflops: 0, bytes: 0, gbPerSecond: 0 } };
    assert.deepEqual(ModeResultSchema.parse(zero).throughput, zero.throughput);
  });
});

describe("an overlapped mode's analysis schema", () => {
  it('keeps every field it parses, the model, its floor, advice, clocks and words included', () => {
    assert.deepEqual(OverlapAnalysisSchema.parse(analysis), analysis);
  });

  it('reads a file from before the model had its terms as no model, and a term without a per-op part as 0', () => {
    const { model: _, ...old } = analysis;
    const terms = [{ term: 'H2D', steadyMs: 3.9, fillDrainMs: 0.3, ms: 4.2 }];
    const parsed = OverlapAnalysisSchema.parse({ ...old, bound: { ...old.bound, terms } });
    assert.equal(parsed.model, null);
    assert.equal(parsed.bound.terms[0]?.perOpMs, 0);
  });

  it("keeps a sweep's axes, settings, points and best", () => {
    const sweep = {
      axes: [
        { name: 'chunks', values: [4, 8] },
        { name: 'host', values: ['pinned', 'pageable'] },
      ],
      settings: { host: 'pinned', size: 64 },
      points: [{ mode: 'overlapped:8x2', chunks: 8, streams: 2, order: 'breadth-first' }],
      best: { mode: 'overlapped:8x2', ties: ['overlapped:4x2'] },
      budgetMs: 60000,
      elapsedMs: 41000,
    };
    assert.deepEqual(SweepSectionSchema.parse(sweep), sweep);
  });
});

describe("an output check's schema", () => {
  const tolerance = { relative: 1e-5, absolute: 1e-6, largestError: { absolute: 2e-7, relative: 3e-6 } };
  const check = {
    rule: 'allreduce-sum',
    text: 'the sum over 2 ranks',
    ranks: 2,
    buffers: [{ name: 'gradients', elements: 1048576 }],
    exact: false,
    tolerance,
    status: 'passed',
  };

  it('keeps a tolerance and the largest error it saw', () => {
    assert.deepEqual(ToleranceCheckSchema.parse(tolerance), tolerance);
  });

  it('keeps every field of a check against the reference rep', () => {
    assert.deepEqual(OutputCheckRecordSchema.parse(check), check);
  });

  it('rejects a negative tolerance, a negative error and a negative element count', () => {
    assert.equal(ToleranceCheckSchema.safeParse({ ...tolerance, relative: -1e-5 }).success, false);
    assert.equal(ToleranceCheckSchema.safeParse({ ...tolerance, absolute: -1e-6 }).success, false);
    const error = { ...tolerance, largestError: { absolute: -2e-7, relative: 3e-6 } };
    assert.equal(ToleranceCheckSchema.safeParse(error).success, false);
    const buffers = [{ name: 'gradients', elements: -1 }];
    assert.equal(OutputCheckRecordSchema.safeParse({ ...check, buffers }).success, false);
  });
});

describe('an event op', () => {
  it('is a record or a wait, never a gate, an empty kernel or a work op', () => {
    assert.equal(isEventOp({ kind: 'record' }), true);
    assert.equal(isEventOp({ kind: 'wait' }), true);
    for (const kind of ['gate', 'empty', 'kernel', 'h2d', 'collective']) assert.equal(isEventOp({ kind }), false, kind);
  });
});
