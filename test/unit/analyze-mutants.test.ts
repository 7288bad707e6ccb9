import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyzeTraces, CLOCK_NOTE } from '../../src/analysis/analyze.js';
import type { RatesSource } from '../../src/analysis/rates.js';
import type { GpuEvent, ParsedTrace, StepMark } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// analyzeTraces (src/analysis/analyze.ts) on traces built here: the order of ranks, devices and findings, the notes,
// the collective skew, and each device's medians and overlap pooled over its steps.

const DEADLINE = { timeout: 5_000 };

function ev(
  device: number,
  stream: string,
  kind: GpuEvent['kind'],
  start: number,
  end: number,
  extra: Partial<GpuEvent> = {},
): GpuEvent {
  return gpuEvent({ device, stream, kind, start, end, name: 'gemm', ...extra });
}
/** A pinned copy at 20 GB/s. */
const copy = (device: number, direction: 'h2d' | 'd2h', start: number, end: number, hostMemory = 'pinned' as const) =>
  ev(device, direction === 'h2d' ? '5' : '6', 'memcpy', start, end, {
    direction,
    hostMemory,
    bytes: 20e6 * (end - start),
    name: `Memcpy ${direction}`,
  });
const nccl = (device: number, start: number, end: number) =>
  ev(device, '9', 'kernel', start, end, { communication: true, name: 'ncclKernel_AllReduce', issued: 0 });
const mark = (name: string, device: number, start: number, end: number): StepMark => ({
  name,
  clock: 'gpu',
  device,
  start,
  end,
});
function trace(file: string, rank: number | null, gpu: GpuEvent[], extra: Partial<ParsedTrace> = {}): ParsedTrace {
  return { file, format: 'kineto', rank, gpu, host: [], steps: [], notes: [], ...extra };
}

/**
 * Four 1 ms kernels, then two 1 ms all-reduces that waited for the last: started as their buckets are ready, the step
 * takes 5 ms instead of 6 (test/unit/communication-mutants.test.ts).
 */
const ddp = (device: number, offset = 0) => [
  ...[0, 1, 2, 3].map((t) => ev(device, '7', 'kernel', offset + t, offset + t + 1, { issued: 0 })),
  nccl(device, offset + 4, offset + 5),
  nccl(device, offset + 5, offset + 6),
];

const RATES_NOTE =
  "link rates are each trace's fastest pinned copies (--rates not given): where they never ran at the link's full " +
  'rate, the rate is too low and the floor too high; pass --rates with a `cuda-pipe probe --bandwidth --json` file';

describe('analyzeTraces: ranks, devices, findings and notes', () => {
  // Given out of rank order; the traces without a rank keep the order given, after the ranked ones.
  const traces = [
    trace('rank2.json', 2, [ev(1, '7', 'kernel', 0, 5), ...ddp(0, 0.25)], { notes: ['an event without a stream'] }),
    trace('cpu.json', null, []),
    trace('rank1.json', 1, ddp(0)),
    trace('solo-b.json', null, [ev(3, '7', 'kernel', 0, 1)]),
    trace('solo-a.json', null, [ev(2, '7', 'kernel', 0, 1)]),
  ];

  it('lists devices by rank, each trace by device, the traces without a rank last as given', DEADLINE, () => {
    const doc = analyzeTraces(traces, { rates: null, toolVersion: '9.9.9' });
    assert.equal(doc.schema, 'cuda-pipe/analysis');
    assert.equal(doc.version, 2);
    assert.deepEqual(doc.tool, { name: 'cuda-pipe', version: '9.9.9' });
    assert.deepEqual(
      doc.devices.map((d) => `${d.file}:${d.device}`),
      ['rank1.json:0', 'rank2.json:0', 'rank2.json:1', 'solo-b.json:3', 'solo-a.json:2'],
    );
  });

  it("lists findings by rank too: each rank's all-reduces started early save 1 ms of 6", DEADLINE, () => {
    const doc = analyzeTraces(traces, { rates: null, toolVersion: 't' });
    assert.deepEqual(
      doc.findings.map((f) => [f.code, f.file, f.device, f.rank, Number(f.ms.toFixed(9)), f.steps]),
      [
        ['exposed-communication', 'rank1.json', 0, 1, 1, 1],
        ['exposed-communication', 'rank2.json', 0, 2, 1, 1],
      ],
    );
  });

  it("pairs the ranks' collectives in rank order and says the clocks are not aligned", DEADLINE, () => {
    const doc = analyzeTraces(traces, { rates: null, toolVersion: 't' });
    assert.ok(doc.collectives?.kind === 'measured');
    assert.deepEqual(
      doc.collectives.participants.map((p) => p.rank),
      [1, 2],
    );
    assert.deepEqual(
      doc.collectives.calls.map((c) => [c.startsMs, c.last]),
      [
        [[4, 4.25], 1],
        [[5, 5.25], 1],
      ],
    );
    assert.deepEqual(doc.notes, [
      'rank2.json: an event without a stream',
      'cpu.json: no GPU events (kernels, copies, memsets): nothing to analyse',
      RATES_NOTE,
      CLOCK_NOTE,
    ]);
  });

  it('one rank with collectives has no skew, and no clock note', DEADLINE, () => {
    const doc = analyzeTraces([trace('rank0.json', 0, ddp(0)), trace('x.json', 1, [ev(1, '7', 'kernel', 0, 1)])], {
      rates: null,
      toolVersion: 't',
    });
    assert.equal(doc.collectives, undefined);
    assert.equal('collectives' in doc, false);
    assert.deepEqual(doc.notes, [RATES_NOTE]);
  });

  it('lists the ranks given in order in that order', DEADLINE, () => {
    const doc = analyzeTraces([trace('rank1.json', 1, ddp(0)), trace('rank2.json', 2, ddp(0, 0.5))], {
      rates: null,
      toolVersion: 't',
    });
    assert.ok(doc.collectives?.kind === 'measured');
    assert.deepEqual(
      doc.collectives.participants.map((p) => p.rank),
      [1, 2],
    );
    assert.deepEqual(
      doc.devices.map((d) => d.rank),
      [1, 2],
    );
  });

  it('looks for causes in a trace of copies and kernels alone, without host calls', DEADLINE, () => {
    // An H2D copy between kernels on their stream, twice: moved off it, the kernels run 2 ms sooner.
    const h2d = (start: number, end: number) => ({ ...copy(0, 'h2d', start, end), stream: '7', issued: 0 });
    const kernel = (start: number, end: number) => ev(0, '7', 'kernel', start, end, { issued: 0 });
    const gpu = [kernel(0, 1), h2d(1, 2), kernel(2, 3), h2d(3, 4), kernel(4, 5)];
    const doc = analyzeTraces([trace('t.json', 0, gpu)], { rates: null, toolVersion: 't' });
    assert.deepEqual(
      doc.findings.map((f) => [f.code, f.ms]),
      [['copy-on-compute-stream', 2]],
    );
  });

  it('looks for causes in a trace of kernels on a stream of their own and their launches alone', DEADLINE, () => {
    // Six 50 µs kernels, each started 5 µs after its 100 µs launch, launches 0.5 ms apart: the host held them back.
    const gpu = [0, 1, 2, 3, 4, 5].map((j) =>
      ev(0, '7', 'kernel', j * 0.5 + 0.105, j * 0.5 + 0.155, { correlation: j }),
    );
    const host = gpu.map((_, j) => ({
      kind: 'launch' as const,
      name: 'cudaLaunchKernel',
      start: j * 0.5,
      end: j * 0.5 + 0.1,
      correlation: j,
      thread: 1,
    }));
    const doc = analyzeTraces([trace('t.json', 0, gpu, { host })], { rates: null, toolVersion: 't' });
    assert.deepEqual(
      doc.findings.map((f) => [f.code, Number(f.ms.toFixed(9))]),
      [['host-bound', 2.25]],
    );
  });

  it('ranks whose collectives do not pair get the reason, without the clock note', DEADLINE, () => {
    const doc = analyzeTraces([trace('rank0.json', 0, ddp(0)), trace('rank1.json', 1, ddp(0).slice(0, 5))], {
      rates: null,
      toolVersion: 't',
    });
    assert.equal(doc.collectives?.kind, 'unknown');
    assert.equal(doc.notes.includes(CLOCK_NOTE), false);
  });

  it('a trace without GPU work gives a note and nothing else; no devices, no rates note', DEADLINE, () => {
    const doc = analyzeTraces([trace('cpu.json', null, [])], { rates: null, toolVersion: 't' });
    assert.deepEqual(doc.devices, []);
    assert.deepEqual(doc.findings, []);
    assert.deepEqual(doc.notes, ['cpu.json: no GPU events (kernels, copies, memsets): nothing to analyse']);
  });
});

describe("analyzeTraces: the trace's devices", () => {
  const HEAVY = { blocks: 100, threadsPerBlock: 1024, registersPerThread: 64, sharedBytesPerBlock: 0 };
  const CHANNELS = { blocks: 50, threadsPerBlock: 512, registersPerThread: 32, sharedBytesPerBlock: 0 };
  const shape = (index: number) => ({
    index,
    multiprocessors: 100,
    registersPerSm: 65536,
    sharedBytesPerSm: 228 * 1024,
    threadsPerSm: 2048,
  });
  const shaped = ddp(0).map((e) => ({ ...e, launch: e.communication ? CHANNELS : HEAVY }));
  const saved = (devices: ReturnType<typeof shape>[]) =>
    analyzeTraces([trace('t.json', 0, shaped, { devices })], { rates: null, toolVersion: 't' }).findings.map((f) =>
      Number(f.ms.toFixed(9)),
    );

  it(
    "slows the compute beside the moved all-reduces by the device's SMs: 1 ms saved becomes 2 − 233/144",
    DEADLINE,
    () => {
      // The first all-reduce moves beside kernel 2, which then takes 233/144 ms (communication-mutants.test.ts).
      assert.deepEqual(saved([shape(1), shape(0)]), [Number((2 - 233 / 144).toFixed(9))]);
    },
  );

  it("takes only its own device's shape: another GPU's says nothing of it", DEADLINE, () => {
    assert.deepEqual(saved([shape(1)]), [1]);
    assert.deepEqual(saved([]), [1]);
  });
});

describe('analyzeTraces: link rates', () => {
  it('a direction without a pinned copy borrows the other direction’s rate, and says so', DEADLINE, () => {
    const gpu = [copy(0, 'h2d', 0, 1), copy(0, 'd2h', 1, 2, 'pageable' as 'pinned')];
    const doc = analyzeTraces([trace('t.json', 0, gpu)], { rates: null, toolVersion: 't' });
    assert.deepEqual(doc.devices[0]?.rates, { h2dGbPerSecond: 20, d2hGbPerSecond: 20, source: 'trace', file: null });
    assert.ok(
      doc.notes.includes(
        "t.json: GPU 0 has no pinned d2h copy to take its rate from: the other direction's rate stands in for it",
      ),
      doc.notes.join('\n'),
    );
  });

  it('no note where the trace has no copy of the direction that borrowed', DEADLINE, () => {
    const doc = analyzeTraces([trace('t.json', 0, [copy(0, 'h2d', 0, 1)])], { rates: null, toolVersion: 't' });
    assert.deepEqual(doc.notes, [RATES_NOTE]);
  });

  it('takes the rates given, per device, naming their file, with no note about the trace’s own', DEADLINE, () => {
    const rates: RatesSource = {
      source: 'probe',
      file: 'probe.json',
      byDevice: new Map([[0, { h2d: 25, d2h: 24 }]]),
    };
    const doc = analyzeTraces([trace('t.json', 0, [copy(0, 'h2d', 0, 1)])], { rates, toolVersion: 't' });
    assert.deepEqual(doc.devices[0]?.rates, {
      h2dGbPerSecond: 25,
      d2hGbPerSecond: 24,
      source: 'probe',
      file: 'probe.json',
    });
    assert.deepEqual(doc.notes, []);
  });
});

describe("analyzeTraces: a device's figures over its steps", () => {
  // Three steps of 10, 4 and 16 ms: kernels on stream 7, H2D copies, D2H copies beside some of them, all-reduces.
  const gpu = [
    ev(0, '7', 'kernel', 0, 8),
    copy(0, 'h2d', 1, 3),
    copy(0, 'd2h', 2, 2.5),
    nccl(0, 8, 9),
    ev(0, '7', 'kernel', 10, 12),
    copy(0, 'h2d', 10, 13),
    ev(0, '7', 'kernel', 14, 20),
    nccl(0, 20, 22),
    copy(0, 'h2d', 21, 29),
    copy(0, 'd2h', 26, 30),
  ];
  const steps = [mark('s1', 0, 0, 10), mark('s2', 0, 10, 14), mark('s3', 0, 14, 30)];
  const device = () =>
    analyzeTraces([trace('t.json', 0, gpu, { steps })], { rates: null, toolVersion: 't' }).devices[0]!;

  it('takes the median step for each time, and the efficiency of the medians', DEADLINE, () => {
    const d = device();
    assert.deepEqual(
      d.steps.map((s) => [s.name, s.ms]),
      [
        ['s1', 10],
        ['s2', 4],
        ['s3', 16],
      ],
    );
    const median = (pick: (s: (typeof d.steps)[number]) => number) => d.steps.map(pick).sort((a, b) => a - b)[1];
    assert.equal(d.stepMs, 10);
    assert.equal(
      d.floorMs,
      median((s) => s.floor.ms),
    );
    assert.equal(d.efficiency, d.floorMs / 10);
    for (const key of [
      'exposedCopyMs',
      'exposedCommMs',
      'idleMs',
      'hostWaitMs',
      'kernelWaitMs',
      'syncWaitMs',
      'otherIdleMs',
    ] as const)
      assert.equal(
        d[key],
        median((s) => s[key]),
        key,
      );
    assert.deepEqual(
      d.steps.map((s) => s.exposedCopyMs),
      [0, 1, 9],
    );
  });

  it('pools each overlap over the steps, weighted by the time of its first party', DEADLINE, () => {
    const d = device();
    // H2D beside kernels: 2 of 2 ms, 2 of 3, 0 of 8: 4 of 13, not the mean of the shares.
    assert.deepEqual(
      d.steps.map((s) => s.overlap.h2dWithKernel),
      [1, 2 / 3, 0],
    );
    assert.equal(d.overlap.h2dWithKernel, 4 / 13);
    // D2H beside kernels: 0.5 of 0.5 ms and 0 of 4 (the step without D2H counts for nothing).
    assert.equal(d.overlap.d2hWithKernel, 0.5 / 4.5);
    // H2D beside D2H, over the shorter of the two: 0.5 of 0.5 ms and 3 of 4; over the longer it would be 0.8.
    assert.deepEqual(
      d.steps.map((s) => s.overlap.h2dWithD2h),
      [1, null, 0.75],
    );
    assert.ok(Math.abs(d.overlap.h2dWithD2h! - 3.5 / 4.5) < 1e-12);
    const copyShare = d.steps.reduce((sum, s) => sum + (s.overlap.copyWithKernel ?? 0) * s.copyMs, 0);
    assert.equal(d.overlap.copyWithKernel, copyShare / d.steps.reduce((sum, s) => sum + s.copyMs, 0));
    // All-reduces beside compute: none, over 3 ms of them.
    assert.equal(d.overlap.commWithCompute, 0);
  });

  it('a device without collectives has no comm overlap at all', DEADLINE, () => {
    const doc = analyzeTraces([trace('t.json', 0, [ev(0, '7', 'kernel', 0, 1)])], { rates: null, toolVersion: 't' });
    assert.equal('commWithCompute' in doc.devices[0]!.overlap, false);
    assert.deepEqual(doc.devices[0]!.overlap, {
      h2dWithKernel: null,
      d2hWithKernel: null,
      h2dWithD2h: null,
      copyWithKernel: null,
    });
  });

  it('a trace whose work takes no time has an efficiency of 0, not NaN', DEADLINE, () => {
    const doc = analyzeTraces([trace('t.json', 0, [ev(0, '7', 'kernel', 1, 1)])], { rates: null, toolVersion: 't' });
    assert.equal(doc.devices[0]!.stepMs, 0);
    assert.equal(doc.devices[0]!.efficiency, 0);
  });
});
