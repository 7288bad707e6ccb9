import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarize } from '../../src/measure/stats.js';
import { runWarnings } from '../../src/measure/warnings.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { RunResult } from '../../src/result/schema.js';
import { type WarningCode, WarningCodeSchema } from '../../src/result/warnings.js';
import { makeResult, samplesAround } from '../helpers/results.js';

// Every rule of runWarnings, each asserted by its exact text on a result that trips it alone.

const clean = makeResult({ noise: 0.001 });
const overlappedIndex = clean.modes.findIndex((m) => m.role.kind === 'overlapped');

function warningsOf(
  change: (r: RunResult) => Omit<RunResult, 'warnings'>,
): Array<{ code: string; message: string; remedy: string }> {
  return runWarnings(change(structuredClone(clean)));
}

const withOverlapped = (r: RunResult, change: (m: ModeResult) => ModeResult): RunResult => ({
  ...r,
  modes: r.modes.map((m, i) => (i === overlappedIndex ? change(m) : m)),
});

describe('run warnings', () => {
  it('says nothing about a clean run', () => {
    assert.deepEqual(clean.warnings, []);
  });

  it('warns that overlap cannot help without a copy engine', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, devices: r.devices.map((d) => ({ ...d, asyncEngineCount: 0 })) })),
      [
        {
          code: 'no-copy-engine',
          message: 'NVIDIA H100 80GB HBM3 reports no asynchronous copy engine: copies cannot overlap kernels.',
          remedy: 'Overlap cannot help on this device; the serial time is the floor.',
        },
      ],
    );
  });

  it('warns that one copy engine cannot overlap H2D with D2H, and suggests breadth-first', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, devices: r.devices.map((d) => ({ ...d, asyncEngineCount: 1 })) })),
      [
        {
          code: 'one-copy-engine',
          message: 'One copy engine: H2D and D2H cannot overlap each other, only kernels.',
          remedy: 'Try `--order breadth-first`, which keeps the single engine busy with one direction at a time.',
        },
      ],
    );
  });

  it('names pageable buffers', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, buffers: r.buffers.map((b) => ({ ...b, hostMemory: 'pageable' })) })),
      [
        {
          code: 'pageable-memory',
          message:
            'Pageable host memory (input, output): copies are staged through a driver buffer and will not overlap compute.',
          remedy: 'Use `hostMemory: pinned` (or `registered` for memory you already have).',
        },
      ],
    );
  });

  it('names write-combined outputs, but not write-combined inputs', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, buffers: r.buffers.map((b) => ({ ...b, hostMemory: 'write-combined' })) })),
      [
        {
          code: 'write-combined-output',
          message: 'Write-combined host memory holds outputs (output): the CPU reads it very slowly.',
          remedy: 'Keep write-combined memory for inputs the GPU reads; use pinned memory for outputs.',
        },
      ],
    );
  });

  it('warns that unverified outputs may be wrong', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, verification: { status: 'skipped', mismatches: [] } })),
      [
        {
          code: 'not-verified',
          message: 'Outputs were not verified (--no-verify): the overlapped figure may come from a wrong result.',
          remedy: 'Drop --no-verify.',
        },
      ],
    );
  });

  it('gives noise above the target with the rule that stopped the mode, and the remedy that fits it', () => {
    const noisy = (stoppedBy: ModeResult['stoppedBy']) =>
      warningsOf((r) => withOverlapped(r, (m) => ({ ...m, stoppedBy, stats: { ...m.stats, relativeNoise: 0.031 } })));
    assert.deepEqual(noisy('max-time'), [
      {
        code: 'noisy',
        message:
          'Noise of the overlapped mode (32 chunks over 4 streams, depth-first) is 3.10%, above the 0.50% target (the time budget ran out).',
        remedy: 'Raise --max-time.',
      },
    ]);
    assert.deepEqual(
      noisy('noise-stable').map((w) => [w.message, w.remedy]),
      [
        [
          'Noise of the overlapped mode (32 chunks over 4 streams, depth-first) is 3.10%, above the 0.50% target (it stopped falling).',
          'Keep other work off the GPU, the PCIe link and the host while measuring; --gate removes host issue jitter.',
        ],
      ],
    );
  });

  it('counts outliers and says they were kept', () => {
    const samples = [...samplesAround(12.6, 0.001, 20), 30];
    const warnings = warningsOf((r) => ({
      ...r,
      modes: r.modes.map((m) =>
        m.role.kind === 'serial' ? { ...m, samplesMs: samples, stats: summarize(samples) } : m,
      ),
    }));
    assert.deepEqual(warnings, [
      {
        code: 'outliers',
        message:
          '1 of 21 samples of the serial mode are outliers (modified z-score above 3.5); they are kept in the statistics.',
        remedy: 'Look for other processes using the GPU or the PCIe link, then re-run.',
      },
    ]);
  });

  it('adds up gate time-outs over every mode', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, modes: r.modes.map((m) => ({ ...m, gateTimeouts: 1 })) })),
      [
        {
          code: 'gate-timeout',
          message: 'The gate timed out in 13 reps: those include host issue cost after all.',
          remedy: "Use fewer chunks: a rep with many ops can fill the GPU's queue while the gate holds it.",
        },
      ],
    );
  });

  it('flags an SM clock that moved more than 5%, and not one that moved less', () => {
    assert.deepEqual(
      warningsOf((r) => ({ ...r, clocks: { ...r.clocks, minMHz: 1700, maxMHz: 1980 } })),
      [
        {
          code: 'clock-change',
          message:
            'The SM clock changed during the run (1700 to 1980 MHz): power or thermal limits, or another process, moved it.',
          remedy: 'Compare only runs whose clocks agree; let the GPU cool, and keep other work off it.',
        },
      ],
    );
    assert.deepEqual(
      warningsOf((r) => ({ ...r, clocks: { ...r.clocks, minMHz: 1900, maxMHz: 1980 } })),
      [],
    );
  });

  it('calls a bound more than 1% above the measurement a defect of the model', () => {
    const warnings = warningsOf((r) =>
      withOverlapped(r, (m) => ({ ...m, analysis: m.analysis && { ...m.analysis, efficiency: 1.011 } })),
    );
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['above-bound'],
    );
    assert.match(
      warnings[0]?.message ?? '',
      /^The overlapped mode \(32 chunks over 4 streams, depth-first\) measured faster than the model's bound \(bound \d\.\d{3} ms, limited by [a-zA-Z0-9 ]+; efficiency 1\.01\): the bound is built to be a floor, so this is a defect in cuda-pipe's model, not a property of this config\.$/,
    );
    assert.deepEqual(
      warningsOf((r) =>
        withOverlapped(r, (m) => ({ ...m, analysis: m.analysis && { ...m.analysis, efficiency: 1.009 } })),
      ),
      [],
    );
  });

  it('says when an overlapped mode is slower than serial, and what to try when the model knows nothing that serialises it', () => {
    const warnings = warningsOf((r) =>
      withOverlapped(r, (m) => ({ ...m, analysis: m.analysis && { ...m.analysis, speedup: 0.8 } })),
    );
    assert.deepEqual(warnings, [
      {
        code: 'slower-than-serial',
        message: 'The overlapped mode (32 chunks over 4 streams, depth-first) is slower than serial (0.80×).',
        remedy:
          'Nothing in this config is known to run ops one after another, and the model does not explain the loss: `--timeline` shows where the streams waited.',
      },
    ]);
  });

  it('names streams that are all the per-thread default stream as the cause of a layout slower than serial, not the chunk count', () => {
    const warnings = warningsOf((r) =>
      withOverlapped(r, (m) => ({
        ...m,
        analysis: m.analysis && {
          ...m.analysis,
          speedup: 0.97,
          model: m.analysis.model && { ...m.analysis.model, serialisers: ['per-thread default stream'] },
        },
      })),
    );
    assert.deepEqual(warnings, [
      {
        code: 'slower-than-serial',
        message:
          'The overlapped mode (32 chunks over 4 streams, depth-first) is slower than serial (0.97×): every stream is the per-thread default stream, so its streams are one stream and nothing overlaps.',
        remedy: 'Use `streamKind: non-blocking` (or `blocking`): streams of their own are what lets chunks overlap.',
      },
    ]);
  });

  it('does not call a layout without the host stage slower than a serial run that has it', () => {
    const hosted = (m: ModeResult): ModeResult =>
      m.role.kind === 'overlapped' ? { ...m, role: { ...m.role, layout: { ...m.role.layout, host: 'checksum' } } } : m;
    const warnings = warningsOf((r) => {
      const without = r.modes[overlappedIndex] as ModeResult;
      const slow = { ...without, id: 'without', analysis: without.analysis && { ...without.analysis, speedup: 0.5 } };
      return { ...r, modes: [...r.modes.map(hosted), slow] };
    });
    assert.deepEqual(warnings, []);
  });

  describe('one rule per code, and no code without a rule', () => {
    type Change = (r: RunResult) => Omit<RunResult, 'warnings'>;
    const outlying = [...samplesAround(12.6, 0.001, 20), 30];
    const withSerialSamples = (r: RunResult, samples: number[]): RunResult => ({
      ...r,
      modes: r.modes.map((m) =>
        m.role.kind === 'serial' ? { ...m, samplesMs: samples, stats: summarize(samples) } : m,
      ),
    });
    const withNoise = (r: RunResult, relativeNoise: number) =>
      withOverlapped(r, (m) => ({ ...m, stats: { ...m.stats, relativeNoise } }));
    const withAnalysis = (r: RunResult, change: Partial<NonNullable<ModeResult['analysis']>>) =>
      withOverlapped(r, (m) => ({ ...m, analysis: m.analysis && { ...m.analysis, ...change } }));
    const withOthers = (r: RunResult, otherProcesses: number) => ({
      ...r,
      clocks: { ...r.clocks, sharing: { checked: true, otherProcesses, note: 'NVML' } },
    });
    // A case that trips each rule, and one as near as can be that does not.
    const cases: { readonly [C in WarningCode]: { readonly fires: Change; readonly quiet: Change } } = {
      'no-copy-engine': {
        fires: (r) => ({ ...r, devices: r.devices.map((d) => ({ ...d, asyncEngineCount: 0 })) }),
        quiet: (r) => ({ ...r, devices: r.devices.map((d) => ({ ...d, asyncEngineCount: 1 })) }),
      },
      'one-copy-engine': {
        fires: (r) => ({ ...r, devices: r.devices.map((d) => ({ ...d, asyncEngineCount: 1 })) }),
        quiet: (r) => ({ ...r, devices: r.devices.map((d) => ({ ...d, asyncEngineCount: 2 })) }),
      },
      'pageable-memory': {
        fires: (r) => ({ ...r, buffers: r.buffers.map((b) => ({ ...b, hostMemory: 'pageable' })) }),
        quiet: (r) => ({ ...r, buffers: r.buffers.map((b) => ({ ...b, hostMemory: 'registered' })) }),
      },
      'write-combined-output': {
        fires: (r) => ({ ...r, buffers: r.buffers.map((b) => ({ ...b, hostMemory: 'write-combined' })) }),
        quiet: (r) => ({
          ...r,
          buffers: r.buffers.map((b) => (b.role === 'in' ? { ...b, hostMemory: 'write-combined' } : b)),
        }),
      },
      'not-verified': {
        fires: (r) => ({ ...r, verification: { status: 'skipped', mismatches: [] } }),
        quiet: (r) => ({ ...r, verification: { status: 'nothing-compared', mismatches: [] } }),
      },
      noisy: { fires: (r) => withNoise(r, 0.0051), quiet: (r) => withNoise(r, 0.005) },
      outliers: {
        fires: (r) => withSerialSamples(r, outlying),
        quiet: (r) => withSerialSamples(r, outlying.slice(0, -1)),
      },
      'gate-timeout': {
        fires: (r) => ({ ...r, modes: r.modes.map((m, i) => (i === 0 ? { ...m, gateTimeouts: 1 } : m)) }),
        quiet: (r) => ({ ...r, modes: r.modes.map((m) => ({ ...m, gateTimeouts: 0 })) }),
      },
      'shared-gpu': { fires: (r) => withOthers(r, 1), quiet: (r) => withOthers(r, 0) },
      'clock-change': {
        fires: (r) => ({ ...r, clocks: { ...r.clocks, minMHz: 1700, maxMHz: 1980 } }),
        quiet: (r) => ({ ...r, clocks: { ...r.clocks, minMHz: 1890, maxMHz: 1980 } }),
      },
      'above-bound': {
        fires: (r) => withAnalysis(r, { efficiency: 1.011 }),
        quiet: (r) => withAnalysis(r, { efficiency: 1.009 }),
      },
      'slower-than-serial': {
        fires: (r) => withAnalysis(r, { speedup: 0.99 }),
        quiet: (r) => withAnalysis(r, { speedup: 1 }),
      },
    };

    it('lists exactly the codes the rules give', () => {
      const given = new Set(Object.values(cases).flatMap(({ fires }) => warningsOf(fires).map((w) => w.code)));
      assert.deepEqual([...given].sort(), [...WarningCodeSchema.options].sort());
    });

    for (const code of WarningCodeSchema.options) {
      it(`gives ${code} where its rule holds, and nothing where it just does not`, () => {
        assert.deepEqual(
          warningsOf(cases[code].fires).map((w) => w.code),
          [code],
        );
        assert.deepEqual(
          warningsOf(cases[code].quiet).map((w) => w.code),
          code === 'no-copy-engine' ? ['one-copy-engine'] : [],
        );
      });
    }

    it('refuses a saved warning whose code no rule gives', () => {
      assert.equal(WarningCodeSchema.safeParse('too-fast').success, false);
      assert.equal(WarningCodeSchema.safeParse('noisy').success, true);
    });
  });
});
