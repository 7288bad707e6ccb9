import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { type CpuStageTiming, cpuStageSummary } from '../../src/kinds/host/section.js';
import type { MeasuredSchedule } from '../../src/measure/repeat.js';
import { buildRunResult, latencyStats, overlapAnalysis, type RunResultInput } from '../../src/measure/result.js';
import { relativeMedianError } from '../../src/measure/stats.js';
import { builtinConfigsDir } from '../../src/paths.js';
import { buildPlan } from '../../src/plan/build.js';
import { type Schedule, scheduleOps } from '../../src/plan/types.js';
import type { ModeResult } from '../../src/model/mode.js';
import { type RunResult, RunResultSchema } from '../../src/result/schema.js';
import type { ModeRole } from '../../src/vocabulary.js';
import { H100 } from '../helpers/results.js';

// How the Result is assembled from measured modes (src/measure/result.ts), which mutation testing found pinned by
// no unit test beyond its headline: each field a report or a CI job reads, with its value from chosen samples.

const close = (actual: number | null | undefined, expected: number, what = '') =>
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what} ${actual} ≠ ${expected}`,
  );

function planned(file: string, devices?: readonly number[]) {
  const path = join(builtinConfigsDir(), file);
  const { config, locate, raw } = parseConfigText(readFileSync(path, 'utf8'), path);
  return { config, raw, plan: buildPlan(config, resolveKernels(config, locate), devices ? { devices } : {}) };
}

/** Three reps per mode around a median chosen by what the mode is; the fastest rep 4% under it. */
function medianOf(role: ModeRole): number {
  switch (role.kind) {
    case 'serial':
      return 12;
    case 'overlapped':
      return 6;
    case 'stage':
      return role.stage === 'kernel' ? 3 : 4;
    case 'link':
      return 5;
    default:
      return 1;
  }
}
const three = (median: number) => [median, median * 0.96, median * 1.02];

interface Measure {
  readonly samples?: (s: Schedule) => number[];
  readonly clock?: (s: Schedule) => number[];
  readonly probes?: (s: Schedule) => number[] | undefined;
  readonly setup?: (s: Schedule) => MeasuredSchedule['setup'];
  readonly hostIssueMs?: (s: Schedule) => number[];
  readonly kindReps?: (s: Schedule) => MeasuredSchedule['kindReps'];
}

function measure(schedules: readonly Schedule[], m: Measure = {}): MeasuredSchedule[] {
  return schedules.map((schedule) => {
    const probeMs = m.probes?.(schedule);
    const kindReps = m.kindReps?.(schedule);
    return {
      schedule,
      gpuMs: m.samples?.(schedule) ?? three(medianOf(schedule.role)),
      hostIssueMs: m.hostIssueMs?.(schedule) ?? [0.3, 0.2, 0.4],
      stoppedBy: 'noise-stable',
      elapsedMs: 50,
      smClockMHz: m.clock?.(schedule) ?? [],
      gateTimeouts: 0,
      ...(probeMs ? { probeMs } : {}),
      ...(m.setup ? { setup: m.setup(schedule) } : {}),
      ...(kindReps ? { kindReps } : {}),
    };
  });
}

function input(
  file: string,
  over: Partial<RunResultInput> & {
    measure?: Measure;
    devices?: RunResultInput['devices'];
    on?: readonly number[];
  } = {},
): RunResultInput {
  const { config, raw, plan } = planned(file, over.on);
  const { measure: m, on: _on, ...rest } = over;
  return {
    toolVersion: '0.1.0',
    run: { hostname: 'gpu-host', rank: null, localRank: null, size: null, jobId: null, launcher: null },
    config,
    configHash: 'hash',
    rawConfig: raw,
    plan,
    devices: [H100, { ...H100, index: 1 }],
    traced: [],
    createdAt: '2026-11-24T00:00:00.000Z',
    software: {
      driver: '13.0',
      runtime: '13.0',
      nvrtc: '13.0',
      nvrtcArchitectures: [],
      cudartPath: 'libcudart.so.13',
      nvrtcPath: null,
    },
    compiles: [],
    policy: DEFAULT_POLICY,
    gate: false,
    clockUnavailable: null,
    measured: measure(plan.schedules, m),
    verification: { status: 'passed', mismatches: [] },
    ...rest,
  };
}

const mode = (r: RunResult, kind: ModeRole['kind'], pick: (m: ModeResult) => boolean = () => true) => {
  const found = r.modes.find((m) => m.role.kind === kind && pick(m));
  assert.ok(found, `a ${kind} mode`);
  return found;
};

describe('latency statistics of the urgent kernels', () => {
  it('sorts the latencies as numbers, takes the 99th between its neighbours and the largest', () => {
    const values = Array.from({ length: 200 }, (_, i) => ((i * 37) % 200) + 1);
    const rounded = (s: ReturnType<typeof latencyStats>) => ({ ...s, p99Ms: Number(s.p99Ms.toFixed(9)) });
    assert.deepEqual(rounded(latencyStats(values)), { n: 200, medianMs: 100.5, p99Ms: 198.01, maxMs: 200 });
    assert.deepEqual(rounded(latencyStats([10, 9, 100, 2])), { n: 4, medianMs: 9.5, p99Ms: 97.3, maxMs: 100 });
  });

  it('has no latencies to report without a sample', () => {
    const none = latencyStats([]);
    assert.equal(none.n, 0);
    assert.ok(Number.isNaN(none.p99Ms) && Number.isNaN(none.maxMs));
  });
});

describe('a mode as the Result records it', () => {
  it('keeps the SM clock range it ran at, and none where the clock was not read', () => {
    const r = buildRunResult(
      input('balanced.yaml', { measure: { clock: (s) => (s.role.kind === 'serial' ? [1755, 1980, 1410, 1600] : []) } }),
    );
    assert.deepEqual(mode(r, 'serial').smClockMHz, { min: 1410, max: 1980 });
    assert.equal(mode(r, 'overlapped').smClockMHz, null);
  });

  it("records a graph's capture and instantiation only for a mode replayed as a graph", () => {
    const r = buildRunResult(
      input('balanced.yaml', {
        measure: { setup: (s) => (s.role.kind === 'overlapped' ? { captureMs: 1.5, instantiateMs: 0.25 } : null) },
      }),
    );
    assert.deepEqual(mode(r, 'overlapped').graph, { captureMs: 1.5, instantiateMs: 0.25 });
    assert.equal('graph' in mode(r, 'serial'), false);
  });

  it("adds a kind's field from its records of the mode's timed reps, where a mode's files have always held it", () => {
    const rep = (gpuMs: number, taskMs: number[]): CpuStageTiming => ({
      endMs: gpuMs + 1,
      gpuMs,
      bytes: 64,
      taskMs,
      afterTasks: taskMs.length,
      busyMs: [taskMs[0] ?? 0, taskMs[1] ?? 0],
      tasks: [],
    });
    const records = [rep(5, [1, 3]), rep(6, [2, 4]), rep(4, [2, 2])];
    const r = buildRunResult(
      input('balanced.yaml', {
        measure: {
          kindReps: (s) =>
            s.role.kind === 'overlapped'
              ? records.map((record) => ({ kind: 'host', endMs: record.endMs, record }))
              : undefined,
        },
      }),
    );
    const overlapped = mode(r, 'overlapped') as ModeResult & { readonly cpuStage?: unknown };
    assert.deepEqual(overlapped.cpuStage, cpuStageSummary(records));
    assert.equal(cpuStageSummary(records).taskMedianMs, 2);
    // Where the mode's builder puts it, the Result's schema keeps it: a file written back is the file read.
    const keys = Object.keys(overlapped);
    assert.equal(keys.indexOf('cpuStage'), keys.indexOf('analysis') + 1);
    const parsed = RunResultSchema.parse(r).modes.find((m) => m.id === overlapped.id);
    assert.deepEqual(Object.keys(parsed ?? {}), keys);
    assert.deepEqual((parsed as typeof overlapped | undefined)?.cpuStage, overlapped.cpuStage);
    assert.equal('cpuStage' in mode(r, 'serial'), false, 'no records, no field');
  });

  it('gives an issue-cost batch the host µs per op from its median issue time, and no other mode an issue cost', () => {
    const r = buildRunResult(
      input('balanced.yaml', {
        measure: { hostIssueMs: (s) => (s.role.kind === 'issue-cost' ? [0.9, 0.4, 0.5] : [0.3]) },
      }),
    );
    const launch = mode(r, 'issue-cost', (m) => m.role.kind === 'issue-cost' && m.role.op === 'wait');
    const ops = launch.issueCost?.opsPerRep ?? 0;
    assert.ok(ops > 1, 'a batch of waits');
    close(launch.issueCost?.hostUsPerOp, (0.5 * 1000) / ops, 'µs per wait');
    assert.equal(mode(r, 'serial').issueCost, undefined);
    const silent = buildRunResult(input('balanced.yaml', { measure: { hostIssueMs: () => [] } }));
    assert.equal(mode(silent, 'issue-cost').issueCost, undefined, 'no issue time, no cost per op');
  });

  it("turns a latency mode's probes into its latency statistics and a split's into each device's times", () => {
    const r = buildRunResult(
      input('priorities.yaml', {
        measure: { probes: (s) => (s.role.kind === 'latency' ? [0.05, 0.01, 0.03, 0.02] : undefined) },
      }),
    );
    const latency = mode(r, 'latency');
    assert.deepEqual(
      { ...latency.latency, p99Ms: Number(latency.latency?.p99Ms.toFixed(9)) },
      { n: 4, medianMs: 0.025, p99Ms: 0.0494, maxMs: 0.05 },
    );
    assert.equal(latency.perDevice, undefined);
    assert.equal(mode(r, 'serial').latency, undefined);
    const split = buildRunResult(
      input('balanced.yaml', {
        on: [0, 1],
        measure: { probes: (s) => (s.probes?.length ? [3, 2.5, 3.2, 2.4, 2.9, 2.6] : undefined) },
      }),
    );
    const together = mode(split, 'split', (m) => m.role.kind === 'split' && m.role.alone === undefined);
    assert.deepEqual(together.perDevice, [
      { device: 0, samplesMs: [3, 3.2, 2.9], medianMs: 3 },
      { device: 1, samplesMs: [2.5, 2.4, 2.6], medianMs: 2.5 },
    ]);
    assert.equal(together.latency, undefined);
  });
});

describe("the overlapped mode's analysis", () => {
  const r = buildRunResult(input('balanced.yaml'));
  const { plan } = planned('balanced.yaml');
  const overlapped = plan.schedules.find((s) => s.role.kind === 'overlapped') as Schedule;
  const headline = mode(r, 'overlapped');
  const facts = {
    buffers: plan.buffers.map((b) => ({ role: b.role, hostMemory: b.hostMemory })),
    kernels: 1,
    copyEngines: 3,
    gated: false,
    maxChunks: 1024,
  };

  it("takes the speedup against the serial median, its error from both modes' spread, and the link at its fastest rep", () => {
    const a = headline.analysis;
    assert.ok(a);
    assert.equal(a.serialMs, 12);
    close(a.speedup, 2);
    const serial = mode(r, 'serial');
    close(a.speedupError, 2 * Math.hypot(relativeMedianError(serial.stats), relativeMedianError(headline.stats)));
    const link = mode(r, 'link');
    close(a.bound.linkGbPerSecond, (link.bytes.h2d + link.bytes.d2h) / 4.8 / 1e6, 'link GB/s at its 4.8 ms rep');
    close(a.efficiency, a.bound.ms / 6);
    assert.equal(a.chunkElements, overlapped.ranges[0]?.count);
    assert.equal(a.bound.copyEngines, 3);
    assert.deepEqual(r.summary, {
      mode: headline.id,
      serialMs: 12,
      overlappedMs: 6,
      speedup: a.speedup,
      speedupError: a.speedupError,
      efficiency: a.efficiency,
    });
  });

  it('gives no speedup error when either mode has one sample', () => {
    for (const one of ['serial', 'overlapped']) {
      const single = buildRunResult(
        input('balanced.yaml', {
          measure: { samples: (s) => (s.role.kind === one ? [medianOf(s.role)] : three(medianOf(s.role))) },
        }),
      );
      assert.equal(single.summary.speedupError, null, `one ${one} sample`);
      close(single.summary.speedup, 2);
    }
  });

  it("uses only its own device's serial and link, and has none without a serial there", () => {
    const elsewhere = (kind: string) => r.modes.map((m) => (m.role.kind === kind ? { ...m, device: 1 } : m));
    assert.equal(overlapAnalysis(headline, overlapped, elsewhere('serial'), facts), null);
    assert.equal(
      overlapAnalysis(
        headline,
        overlapped,
        r.modes.filter((m) => m.role.kind !== 'serial'),
        facts,
      ),
      null,
    );
    assert.equal(overlapAnalysis(headline, overlapped, elsewhere('link'), facts)?.bound.linkGbPerSecond, null);
    assert.equal(
      overlapAnalysis(mode(r, 'serial'), overlapped, r.modes, facts),
      null,
      'only an overlapped mode is analysed',
    );
  });

  it('counts a schedule without ranges as chunks of no elements', () => {
    assert.equal(overlapAnalysis(headline, { ...overlapped, ranges: [] }, r.modes, facts)?.chunkElements, 0);
  });

  it("tells the model what the layout's own streams are, so a legacy-stream op is named as a serialiser", () => {
    const legacy = buildRunResult(input('legacy-default.yaml'));
    const withOp = legacy.modes.filter((m) => m.role.kind === 'overlapped');
    assert.deepEqual(
      withOp.map((m) => [
        m.role.kind === 'overlapped' && m.role.layout.legacyOp !== undefined,
        m.analysis?.model?.serialisers,
      ]),
      [
        [false, []],
        [true, ['legacy default stream']],
      ],
    );
    assert.deepEqual(headline.analysis?.model?.serialisers, []);
  });

  it("tells the model when the layout's streams are all the per-thread default stream, so it counts them as one", () => {
    const path = join(builtinConfigsDir(), 'balanced.yaml');
    const text = readFileSync(path, 'utf8').replace(/pipeline:\n/, 'pipeline:\n  streamKind: per-thread-default\n');
    const { config, locate, raw } = parseConfigText(text, path);
    const plan = buildPlan(config, resolveKernels(config, locate));
    assert.ok(
      plan.schedules.some((s) => s.streams.every((st) => st.kind === 'per-thread-default')),
      text,
    );
    const one = buildRunResult({
      ...input('balanced.yaml'),
      config,
      rawConfig: raw,
      plan,
      measured: measure(plan.schedules),
    });
    const model = mode(one, 'overlapped').analysis?.model;
    assert.deepEqual(model?.serialisers, ['per-thread default stream']);
    assert.equal(model?.ops.sync, 2, 'the start and end events of one stream, no fork or join');
  });

  it("gives the model each buffer's role, so it counts the copies per chunk", () => {
    const parts = headline.analysis?.model?.parts;
    assert.deepEqual([parts?.h2dCopiesPerChunk, parts?.d2hCopiesPerChunk, parts?.kernelsPerChunk], [1, 1, 1]);
  });
});

describe('the Result of a run', () => {
  it('refuses a mode on a device the run did not describe, and a run with no serial baseline', () => {
    assert.throws(
      () => buildRunResult(input('balanced.yaml', { devices: [{ ...H100, index: 3 }] })),
      /mode on device 0, which the run did not describe/,
    );
    const { plan } = planned('balanced.yaml');
    const noSerial = input('balanced.yaml', {
      measured: measure(plan.schedules.filter((s) => s.role.kind !== 'serial')),
    });
    assert.throws(() => buildRunResult(noSerial), /plan balanced measured no overlapped mode with a serial baseline/);
  });

  it('reads the clock range from modes that run kernels only: not the link, not a copy stage', () => {
    const clock = (s: Schedule) =>
      s.role.kind === 'link'
        ? [900]
        : s.role.kind === 'stage' && s.role.stage !== 'kernel'
          ? [1000, 2100]
          : s.role.kind === 'stage'
            ? [1700]
            : s.role.kind === 'serial'
              ? [1980, 1800]
              : [];
    const r = buildRunResult(input('balanced.yaml', { measure: { clock } }));
    assert.deepEqual(r.clocks, {
      checked: true,
      note: 'SM clock read through NVML between reps',
      minMHz: 1700,
      maxMHz: 1980,
      sharing: r.clocks.sharing,
    });
    const none = buildRunResult(input('balanced.yaml'));
    assert.deepEqual([none.clocks.checked, none.clocks.minMHz, none.clocks.maxMHz], [true, null, null]);
  });

  it('says why the clock was not checked, and keeps what was found sharing the GPU', () => {
    const sharing = { checked: true, otherProcesses: 2, note: '2 other processes' };
    const r = buildRunResult(
      input('balanced.yaml', { clockUnavailable: 'NVML not found', measure: { clock: () => [1980] }, sharing }),
    );
    assert.deepEqual(r.clocks, {
      checked: false,
      note: 'not checked: NVML not found',
      minMHz: null,
      maxMHz: null,
      sharing,
    });
    assert.equal(buildRunResult(input('balanced.yaml')).clocks.sharing.checked, false);
  });

  it('keeps the tolerance rule and the largest error a verification within a tolerance saw, and adds none for byte for byte', () => {
    const tolerance = { relative: 0.001, absolute: 0, largestError: { absolute: 0.002, relative: 0.0004 } };
    const r = buildRunResult(input('balanced.yaml', { verification: { status: 'passed', mismatches: [], tolerance } }));
    assert.deepEqual(r.verification, { status: 'passed', mismatches: [], tolerance });
    assert.equal('tolerance' in buildRunResult(input('balanced.yaml')).verification, false);
  });

  it('records scratch buffers as device-only and each kernel with its own compile', () => {
    const compiles = [
      { label: 'small', cached: false, ms: 40, arch: 'sm_90', nvrtc: '13.0' },
      { label: 'fma', cached: true, ms: 1.5, arch: 'sm_90a', nvrtc: '13.1' },
    ];
    const r = buildRunResult(input('priorities.yaml', { compiles }));
    assert.deepEqual(
      r.buffers.map((b) => [b.name, b.hostMemory]),
      [
        ['input', 'pinned'],
        ['output', 'pinned'],
        ['probe', 'device-only'],
      ],
    );
    assert.deepEqual(
      r.kernels.map((k) => [k.label, k.compile]),
      [
        ['fma', { cached: true, ms: 1.5, arch: 'sm_90a', nvrtc: '13.1' }],
        ['small', { cached: false, ms: 40, arch: 'sm_90', nvrtc: '13.0' }],
      ],
    );
    const uncompiled = buildRunResult(input('priorities.yaml'));
    assert.deepEqual(uncompiled.kernels[0]?.compile, { cached: false, ms: 0, arch: '', nvrtc: '' });
  });

  it("records device memory, the timeline and the plan's notes only where there are some", () => {
    const traced = [{ mode: 'm', device: 0, issueMs: 0.1, totalMs: 1, streams: [], ops: [] }];
    const r = buildRunResult(
      input('ring-8gib.yaml', { deviceMemory: { askedBytes: 100, measuredBytes: 120 }, traced }),
    );
    const { plan } = planned('ring-8gib.yaml');
    assert.ok(plan.device.ring);
    assert.deepEqual(r.deviceMemory, {
      budgetBytes: plan.device.budgetBytes,
      askedBytes: 100,
      measuredBytes: 120,
      ring: { ...plan.device.ring },
    });
    assert.deepEqual(r.timeline, { reps: traced });
    const plain = buildRunResult(input('balanced.yaml', { deviceMemory: { askedBytes: 1, measuredBytes: 2 } }));
    assert.equal(plain.deviceMemory?.ring, null);
    assert.equal('deviceMemory' in buildRunResult(input('balanced.yaml')), false);
    assert.equal(buildRunResult(input('balanced.yaml')).timeline, null);
    const noted = buildRunResult(input('stage-per-stream.yaml'));
    assert.deepEqual(noted.notes, planned('stage-per-stream.yaml').plan.notes);
    assert.ok(noted.notes.length > 0);
  });

  it("adds the split's scaling, with the ops it issued, and the peer paths, only for a run over devices", () => {
    const peers = [{ from: 0, to: 1, path: 'peer' as const }];
    const i = input('balanced.yaml', {
      on: [0, 1],
      peers,
      measure: { probes: (s) => (s.probes?.length ? [3, 2.5, 3.2, 2.4, 2.9, 2.6] : undefined) },
    });
    const r = buildRunResult(i);
    const split = i.plan.schedules.find((s) => s.role.kind === 'split' && s.role.alone === undefined) as Schedule;
    assert.equal(r.scaling?.together.issuedOps, scheduleOps(split).length);
    assert.equal(r.scaling?.together.mode, split.id);
    assert.deepEqual(r.scaling?.devices, [0, 1]);
    assert.deepEqual(r.peers, peers);
    const one = buildRunResult(input('balanced.yaml'));
    assert.deepEqual(['peers' in one, 'scaling' in one, 'crossDevice' in one], [false, false, false]);
  });

  it('adds the cross-device pipeline against serial, over the peer path the run recorded', () => {
    const staged = buildRunResult(input('cross-device.yaml'));
    assert.equal(staged.crossDevice?.path, 'staged');
    close(staged.crossDevice?.speedup, 12 / 1);
    const direct = buildRunResult(input('cross-device.yaml', { peers: [{ from: 0, to: 1, path: 'peer' }] }));
    assert.equal(direct.crossDevice?.path, 'peer');
    assert.deepEqual(direct.peers, [{ from: 0, to: 1, path: 'peer' }]);
  });
});
