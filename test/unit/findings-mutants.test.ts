import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cause, CauseFacts } from '../../src/analysis/causes.js';
import type { FindingCode } from '../../src/analysis/document.js';
import { attribute, combine, type DeviceEvidence, findingsOf, LEAST_SHARE } from '../../src/analysis/findings.js';
import type { Edit } from '../../src/analysis/graph.js';
import type { StepMetrics } from '../../src/analysis/metrics.js';
import type { StepWindow } from '../../src/analysis/steps.js';
import { gpu, graphOf, points } from '../helpers/replay-graph.js';

// How analysis/findings.ts credits causes with what they save and words them, on a graph written out edge by edge
// and causes whose edits are given: edges that mutation testing (npm run mutation) found unpinned.

// One stream: ops 0, 1, 2 back to back from 0 to 3 ms (step 1), ops 3 and 4 from 10 to 12 ms (step 2).
const ops = [
  gpu({ stream: 's', start: 0, end: 1, label: 'aten::copy_' }),
  gpu({ stream: 's', start: 1, end: 2, label: 'aten::mm' }),
  gpu({ stream: 's', start: 2, end: 3, label: 'aten::mm' }),
  gpu({ stream: 's', start: 10, end: 11, label: 'aten::add' }),
  gpu({ stream: 's', start: 11, end: 12 }),
];
const at = points(ops.length);
const graph = graphOf({
  ops,
  edges: [
    { kind: 'stream', from: at.end(0), to: at.start(1) },
    { kind: 'stream', from: at.end(1), to: at.start(2) },
    { kind: 'stream', from: at.end(3), to: at.start(4) },
  ],
});
const window = (name: string, start: number, end: number): StepWindow => ({ name, start, end, host: null });
const windows = [window('step 1', 0, 10), window('step 2', 10, 20)];

/** A step's metrics: only its time and its floor matter to the findings. */
function stepOf(ms: number, floorMs: number): StepMetrics {
  const busy = { kernels: 0, h2d: 0, d2h: 0, memsets: 0, communication: 0 };
  const overlap = {
    h2dWithKernel: null,
    d2hWithKernel: null,
    h2dWithD2h: null,
    copyWithKernel: null,
    commWithCompute: null,
  };
  return {
    name: 'step',
    startMs: 0,
    ms,
    busy,
    overlap,
    copyMs: 0,
    exposedCopyMs: 0,
    commMs: 0,
    exposedCommMs: 0,
    idleMs: 0,
    hostWaitMs: 0,
    kernelWaitMs: 0,
    syncWaitMs: 0,
    otherIdleMs: 0,
    floor: { ms: floorMs, bound: 'kernels', kernelMs: floorMs, h2dMs: null, d2hMs: null, opCostMs: 0 },
    efficiency: floorMs / ms,
  };
}

const facts: CauseFacts = { count: 1, streams: ['s'] };
const cause = (code: FindingCode, edit: Edit, causeOps: number[] = [0], more: Partial<CauseFacts> = {}): Cause => ({
  code,
  edit,
  ops: causeOps,
  facts: { ...facts, ...more },
});
/** Op 0 half as long: step 1 ends 0.5 ms sooner. */
const halfFirst = cause('pageable-copy', { opDuration: new Map([[0, 0.5]]) });
/** Op 0 a quarter as long and op 3 half: step 1 would save 0.75 ms, step 2 0.5 ms. */
const graphed = cause(
  'host-bound',
  {
    opDuration: new Map([
      [0, 0.25],
      [3, 0.5],
    ]),
  },
  [1, 2, 3],
);

const evidence = (causes: Cause[], steps = [stepOf(3, 0), stepOf(2, 0)], w = windows): DeviceEvidence => ({
  graph,
  causes,
  windows: w,
  steps,
});

const close = (actual: readonly number[] | undefined, expected: readonly number[]) =>
  assert.ok(
    actual !== undefined &&
      actual.length === expected.length &&
      actual.every((x, i) => Math.abs(x - expected[i]!) < 1e-12),
    `${actual} ≠ ${expected}`,
  );

describe('crediting causes with what they save (findings.ts attribute)', { timeout: 5_000 }, () => {
  it('applies the narrow causes first and credits each with what it saves on top of those before it', () => {
    const credits = attribute(evidence([graphed, halfFirst]));
    assert.deepEqual(
      credits.map((a) => a.cause.code),
      ['pageable-copy', 'host-bound'],
    );
    close(credits[0]?.savedMs, [0.5, 0]);
    close(credits[1]?.savedMs, [0.25, 0.5]);
  });

  it('credits no step with more than it takes above its floor, the later causes with what is left', () => {
    const credits = attribute(evidence([graphed, halfFirst], [stepOf(3, 2.75), stepOf(2, 0)]));
    close(credits[0]?.savedMs, [0.25, 0]);
    close(credits[1]?.savedMs, [0, 0.5]);
    const under = attribute(evidence([halfFirst], [stepOf(3, 4), stepOf(2, 0)]));
    close(under[0]?.savedMs, [0, 0]);
  });

  it('credits a cause that makes a step longer with nothing, and leaves the headroom to the next', () => {
    const longer = cause('default-stream', { opDuration: new Map([[1, 2]]) });
    const credits = attribute(evidence([longer, graphed], [stepOf(3, 2.5), stepOf(2, 0)]));
    assert.deepEqual(
      credits.map((a) => a.cause.code),
      ['default-stream', 'host-bound'],
    );
    close(credits[0]?.savedMs, [0, 0]);
    // On top of the longer step (4 ms), quartering op 0 saves 0.75 ms: capped by the 0.5 ms the first left.
    close(credits[1]?.savedMs, [0.5, 0.5]);
  });

  it("credits nothing to a step that only starts earlier: a step's time is its span", () => {
    // Op 1 starts step 2 at 10 ms, 9 ms after op 0 ends; the cause makes that wait 8.5 ms.
    const at3 = points(3);
    const shifted = graphOf({
      ops: [
        gpu({ stream: 's', start: 0, end: 1 }),
        gpu({ stream: 's', start: 10, end: 11 }),
        gpu({ stream: 's', start: 11, end: 12 }),
      ],
      edges: [
        { kind: 'wait', from: at3.end(0), to: at3.start(1), weight: 9 },
        { kind: 'stream', from: at3.end(1), to: at3.start(2) },
      ],
    });
    const sooner = cause('default-stream', { weight: new Map([[0, 8.5]]) });
    const credits = attribute({ ...evidence([sooner]), graph: shifted });
    assert.deepEqual(credits[0]?.savedMs, [0, 0]);
  });

  it('keeps causes of one code in the order they came, the later one applied on top', () => {
    const quarter = cause('pageable-copy', { opDuration: new Map([[0, 0.25]]) });
    const credits = attribute(evidence([halfFirst, quarter]));
    assert.deepEqual(
      credits.map((a) => a.cause),
      [halfFirst, quarter],
    );
    close(credits[1]?.savedMs, [0.25, 0]);
  });

  it('credits nothing to a step without ops, and nothing at all without causes or steps', () => {
    const credits = attribute(
      evidence([halfFirst], [stepOf(3, 0), stepOf(2, 0), stepOf(1, 0)], [...windows, window('empty', 30, 40)]),
    );
    assert.deepEqual(credits[0]?.savedMs, [0.5, 0, 0]);
    assert.deepEqual(attribute(evidence([])), []);
    assert.deepEqual(attribute(evidence([halfFirst], [], [])), []);
  });
});

describe('the findings of a device (findings.ts findingsOf)', { timeout: 5_000 }, () => {
  const place = { file: 'trace.json', device: 1, rank: 3 };

  it('lists each credited cause by its mean saving over the steps, largest first, with the steps it saved in', () => {
    const found = findingsOf(place, 'stream 7', evidence([halfFirst, graphed], [stepOf(3, 2.75), stepOf(2, 0)]), 2);
    assert.deepEqual(
      found.map((f) => [f.code, f.ms, f.steps, f.file, f.device, f.rank]),
      [
        ['host-bound', 0.25, 1, 'trace.json', 1, 3],
        ['pageable-copy', 0.125, 1, 'trace.json', 1, 3],
      ],
    );
    const uncapped = findingsOf(place, 'stream 7', evidence([halfFirst, graphed]), 2);
    assert.deepEqual(
      uncapped.map((f) => [f.code, f.ms, f.steps]),
      [
        ['host-bound', 0.375, 2],
        ['pageable-copy', 0.25, 1],
      ],
    );
  });

  it('leaves out a finding that saves less than half a percent of the median step, or nothing', () => {
    const e = evidence([halfFirst, graphed], [stepOf(3, 2.75), stepOf(2, 0)]);
    // pageable-copy saves 0.125 ms a step: exactly 0.5% of 25 ms.
    assert.equal(LEAST_SHARE * 25, 0.125);
    assert.deepEqual(
      findingsOf(place, '7', e, 25).map((f) => f.code),
      ['host-bound', 'pageable-copy'],
    );
    assert.deepEqual(
      findingsOf(place, '7', e, 25.001).map((f) => f.code),
      ['host-bound'],
    );
    assert.deepEqual(findingsOf(place, '7', evidence([cause('host-sync', {})]), 0), [], 'saves nothing');
  });

  it("names the label most of the cause's ops carry, the first of equals, and none where they carry none", () => {
    const labelOf = (causeOps: number[]) =>
      findingsOf(place, '7', evidence([cause('host-bound', { opDuration: new Map([[0, 0.5]]) }, causeOps)]), 1)[0]
        ?.label;
    assert.equal(labelOf([0, 1, 2]), 'aten::mm');
    assert.equal(labelOf([0, 1]), 'aten::copy_');
    assert.equal(labelOf([1, 0]), 'aten::mm');
    assert.equal(labelOf([3, 0, 2, 0]), 'aten::copy_');
    assert.equal(labelOf([4]), null);
  });

  it('counts only the ops that carry a label, however many carry none', () => {
    const unlabelled = [
      { ...gpu({ stream: 's', start: 0, end: 1 }), label: undefined },
      { ...gpu({ stream: 's', start: 1, end: 2 }), label: undefined },
      gpu({ stream: 's', start: 2, end: 3, label: 'aten::mm' }),
    ];
    const at3 = points(3);
    const labelled = graphOf({
      ops: unlabelled,
      edges: [
        { kind: 'stream', from: at3.end(0), to: at3.start(1) },
        { kind: 'stream', from: at3.end(1), to: at3.start(2) },
      ],
    });
    const one = cause('host-bound', { opDuration: new Map([[0, 0.5]]) }, [0, 1, 2]);
    const [finding] = findingsOf(place, '7', { ...evidence([one]), graph: labelled }, 1);
    assert.equal(finding?.label, 'aten::mm');
  });
});

describe("a finding's sentence (findings.ts)", { timeout: 5_000 }, () => {
  /** The sentence of one cause that saves 0.5 ms in step 1 (0.25 ms a step), its ops labelled as given. */
  const say = (code: FindingCode, more: Partial<CauseFacts>, causeOps = [4]) =>
    findingsOf(
      { file: 'f', device: 0, rank: null },
      'stream 7',
      evidence([cause(code, { opDuration: new Map([[0, 0.5]]) }, causeOps, more)]),
      1,
    )[0]?.message;

  it('says how many pageable copies ran at what rate, and the rate pinned memory gives', () => {
    assert.equal(
      say('pageable-copy', { count: 1, rateGbPerSecond: 10, observedGbPerSecond: 1 }, [1]),
      '1 copy from or to pageable host memory (aten::mm) ran at 1.0 GB/s and held the host until done; from pinned ' +
        'memory (at 10.0 GB/s) the step would take 0.250 ms less. Pin the host tensors (tensor.pin_memory(), ' +
        'DataLoader(pin_memory=True)) and copy with non_blocking=True.',
    );
    assert.match(say('pageable-copy', { count: 2, rateGbPerSecond: 10, observedGbPerSecond: 1 }) ?? '', /^2 copies /);
    assert.match(say('pageable-copy', { count: 2 }) ?? '', / ran at – and .*\(at –\)/);
  });

  it("names the default stream as the trace's format does, and the streams that waited with it", () => {
    assert.equal(
      say('default-stream', { count: 1, streams: ['3'] }),
      'Work on the legacy default stream (stream 7) and on stream 3, which never ran beside it and so synchronise ' +
        'with it (created without cudaStreamNonBlocking, as CUDA C++ and CuPy make them), waited for each other ' +
        'once; with that work on a non-blocking stream (torch.cuda.Stream(), cudaStreamCreateWithFlags(…, ' +
        'cudaStreamNonBlocking)) the step would take 0.250 ms less.',
    );
    assert.match(say('default-stream', { count: 3, streams: ['3', '4'] }) ?? '', /on streams 3, 4, .* 3 times;/);
  });

  it('words serialised copies, copies on compute streams and exposed communication', () => {
    assert.equal(
      say('serialised-copies', { count: 2, streams: ['1', '2'] }, [0]),
      'Copies of one direction on streams 1, 2 (aten::copy_) waited for each other 2 times while the link had room; ' +
        'overlapped as far as the link allows, the step would take 0.250 ms less. Look for a wait between the copy ' +
        'streams (wait_stream, an event) that the data does not need.',
    );
    assert.equal(
      say('copy-on-compute-stream', { count: 1, streams: ['1'] }),
      '1 copy on stream 1, which also runs the compute, hold the kernels around them; on a stream of their own ' +
        '(torch.cuda.Stream() with non_blocking=True, then compute_stream.wait_stream(copy_stream) and ' +
        'tensor.record_stream) the step would take 0.250 ms less.',
    );
    assert.match(say('copy-on-compute-stream', { count: 2 }) ?? '', /^2 copies on stream s, /);
    assert.equal(
      say('exposed-communication', {}),
      "NCCL communication runs with no computation beside it; started earlier (DDP's buckets, bucket_cap_mb), the " +
        'step would take 0.250 ms less.',
    );
  });

  it('says one synchronize stops the host, several stop it', () => {
    assert.equal(
      say('host-sync', { count: 1 }),
      'A synchronize in the middle of a step (.item(), .cpu(), torch.cuda.synchronize()) stops the host until the ' +
        'GPU drains, then the GPU waits for the host; without it the step would take 0.250 ms less. Keep the value ' +
        "on the GPU, or read it back once at the step's end.",
    );
    assert.match(
      say('host-sync', { count: 2 }) ?? '',
      /^2 synchronizes in the middle of a step .* stop the host .*; without them the step/,
    );
  });

  it('says how many launch calls a CUDA graph would issue at once', () => {
    assert.equal(
      say('host-bound', { count: 1 }),
      'The GPU waits for its launches: 1 launch call issue the work one by one; issued at once from a CUDA graph ' +
        '(torch.cuda.graphs, torch.compile(mode="reduce-overhead")) the step would take 0.250 ms less.',
    );
    assert.match(say('host-bound', { count: 5 }) ?? '', /: 5 launch calls issue/);
  });
});

describe('two edits as one (findings.ts combine)', { timeout: 5_000 }, () => {
  it("keeps both edits' dropped and added edges, and the second's duration or weight where both set one", () => {
    const edge = { kind: 'stream' as const, from: 1, to: 2, weight: 0, lag: 0 };
    const both = combine(
      {
        opDuration: new Map([
          [0, 1],
          [1, 1],
        ]),
        callDuration: new Map([[0, 5]]),
        dropped: new Set([1]),
        added: [edge],
      },
      { opDuration: new Map([[1, 2]]), weight: new Map([[3, 0]]), dropped: new Set([2]), added: [{ ...edge, to: 4 }] },
    );
    assert.deepEqual(
      [...(both.opDuration ?? [])],
      [
        [0, 1],
        [1, 2],
      ],
    );
    assert.deepEqual([...(both.callDuration ?? [])], [[0, 5]]);
    assert.deepEqual([...(both.weight ?? [])], [[3, 0]]);
    assert.deepEqual([...(both.dropped ?? [])], [1, 2]);
    assert.deepEqual(both.added, [edge, { ...edge, to: 4 }]);
    assert.deepEqual(combine({}, {}), {
      opDuration: new Map(),
      callDuration: new Map(),
      weight: new Map(),
      dropped: new Set(),
      added: [],
    });
  });
});
