import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concludeResult, recordedStreams, resultFacts } from '../../src/measure/conclusions.js';
import type { ModeResult } from '../../src/model/mode.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';

// A recorded Result's conclusions drawn again (measure/conclusions.ts), on an H200 run of 16 chunks on 4 streams
// with its model recorded: the facts the model takes from the Result, the stream facts a layout recorded, and which
// overlapped modes are concluded again, against which serial mode.

const [recorded] = loadResults('test/fixtures/h200-balanced-16-model.json');
assert.ok(recorded, 'the fixture holds a Result');
const result: RunResult = recorded;
const find = (r: RunResult, kind: ModeResult['role']['kind'], device = 0): ModeResult => {
  const mode = r.modes.find((m) => m.role.kind === kind && m.device === device);
  assert.ok(mode, `no ${kind} mode on device ${device}`);
  return mode;
};
const overlapped = find(result, 'overlapped');
const serial = find(result, 'serial');
const { analysis } = overlapped;
assert.ok(analysis?.model, 'the overlapped mode has its model recorded');
const recordedAnalysis = analysis;
const recordedModel = analysis.model;

/** The overlapped mode as if its model had recorded these serialisers, and its layout this op on the legacy stream. */
function withSerialisers(
  mode: ModeResult,
  serialisers: NonNullable<typeof recordedModel.serialisers>,
  legacyOp?: { chunk: number; op: 'kernel' | 'h2d' },
): ModeResult {
  const role =
    mode.role.kind === 'overlapped' && legacyOp
      ? { ...mode.role, layout: { ...mode.role.layout, legacyOp } }
      : mode.role;
  return { ...mode, role, analysis: { ...recordedAnalysis, model: { ...recordedModel, serialisers } } };
}

describe('the facts the model takes from a recorded Result (measure/conclusions.ts)', { timeout: 20_000 }, () => {
  it("keeps a buffer's host memory where it is host memory, and none for a buffer on the device only", () => {
    const buffers = result.buffers.map((b) => (b.role === 'out' ? { ...b, hostMemory: 'device-only' } : b));
    assert.deepEqual(resultFacts({ ...result, buffers }, 0).buffers, [
      { role: 'in', hostMemory: 'pinned' },
      { role: 'out' },
    ]);
  });

  it('counts the copy engines of the device asked for, and none for a device the Result did not record', () => {
    const [device] = result.devices;
    assert.ok(device);
    const devices = [
      { ...device, index: 0, asyncEngineCount: 3 },
      { ...device, index: 1, asyncEngineCount: 2 },
    ];
    assert.equal(resultFacts({ ...result, devices }, 1).copyEngines, 2);
    assert.equal(resultFacts({ ...result, devices }, 0).copyEngines, 3);
    assert.equal(resultFacts({ ...result, devices }, 2).copyEngines, 0);
  });

  it("takes the pipeline's items where the config gave them, else its elements", () => {
    assert.equal(resultFacts(result, 0).items, 67_108_864);
    assert.equal(resultFacts({ ...result, pipeline: { ...result.pipeline, items: 4096 } }, 0).items, 4096);
  });
});

describe("a layout's stream facts as its Result recorded them", { timeout: 20_000 }, () => {
  it('are null where the serialisers were not recorded: no analysis, no model, or a model from before them', () => {
    assert.equal(recordedStreams(overlapped), null);
    assert.equal(recordedStreams({ ...overlapped, analysis: null }), null);
    assert.equal(recordedStreams({ ...overlapped, analysis: { ...recordedAnalysis, model: null } }), null);
  });

  it('are null for a mode that is not an overlapped layout, whatever its analysis holds', () => {
    assert.equal(recordedStreams(withSerialisers(serial, ['per-thread default stream'])), null);
    assert.equal(recordedStreams(withSerialisers(serial, ['legacy default stream'])), null);
  });

  it('are one stream on the per-thread default stream, whatever else serialised it', () => {
    const serialisers = ['pageable memory', 'per-thread default stream'] as const;
    assert.deepEqual(recordedStreams(withSerialisers(overlapped, [...serialisers])), {
      oneStream: true,
      serialisers,
    });
  });

  it('are one stream on the legacy default stream only where the layout put no single op there', () => {
    const legacy = ['legacy default stream'] as const;
    assert.equal(recordedStreams(withSerialisers(overlapped, [...legacy]))?.oneStream, true);
    assert.equal(
      recordedStreams(withSerialisers(overlapped, [...legacy], { chunk: 3, op: 'kernel' }))?.oneStream,
      false,
    );
  });

  it('are separate streams where nothing but pageable memory, or nothing at all, serialised them', () => {
    assert.deepEqual(recordedStreams(withSerialisers(overlapped, ['pageable memory'])), {
      oneStream: false,
      serialisers: ['pageable memory'],
    });
    assert.deepEqual(recordedStreams(withSerialisers(overlapped, [])), { oneStream: false, serialisers: [] });
  });
});

describe("which modes a recorded Result's conclusions are drawn again for", { timeout: 30_000 }, () => {
  const concluded = concludeResult(result);

  it("judges an overlapped mode against its device's serial mode, wherever the serial is listed", () => {
    assert.equal(find(concluded, 'overlapped').analysis?.serialMs, serial.stats.median);
    const overlappedFirst = { ...result, modes: [overlapped, ...result.modes.filter((m) => m !== overlapped)] };
    assert.deepEqual(
      find(concludeResult(overlappedFirst), 'overlapped').analysis,
      find(concluded, 'overlapped').analysis,
    );
  });

  it("judges each device's overlapped mode against that device's serial mode, not the first listed", () => {
    const [device] = result.devices;
    assert.ok(device);
    const second = result.modes.map((m) => ({
      ...m,
      id: `${m.id}@1`,
      device: 1,
      stats: m.role.kind === 'serial' ? { ...m.stats, median: m.stats.median * 1.5 } : m.stats,
    }));
    const twoDevices = {
      ...result,
      devices: [device, { ...device, index: 1 }],
      modes: [...result.modes, ...second],
    };
    const both = concludeResult(twoDevices);
    assert.equal(find(both, 'overlapped', 0).analysis?.serialMs, serial.stats.median);
    assert.equal(find(both, 'overlapped', 1).analysis?.serialMs, serial.stats.median * 1.5);
  });

  it('keeps an overlapped mode as recorded where its device has no serial mode to judge it against', () => {
    const modes = result.modes.filter((m) => m.role.kind !== 'serial');
    const kept = concludeResult({ ...result, modes });
    assert.equal(find(kept, 'overlapped'), overlapped);
  });

  it('keeps an overlapped mode with no analysis recorded as it is', () => {
    const bare = { ...overlapped, analysis: null };
    const modes = result.modes.map((m) => (m === overlapped ? bare : m));
    assert.equal(find(concludeResult({ ...result, modes }), 'overlapped'), bare);
  });

  it('keeps the recorded summary where the headline it names is not among the modes', () => {
    const summary = { ...result.summary, mode: 'overlapped:8x2:depth-first:chunk-per-stream' };
    assert.deepEqual(concludeResult({ ...result, summary }).summary, summary);
  });
});

describe("a recorded sweep's best layout, picked again from its raced layouts", { timeout: 30_000 }, () => {
  const [swept] = loadResults('test/fixtures/h200-sweep-balanced.json');
  assert.ok(swept?.sweep, 'the fixture holds a sweep');
  const sweep = swept.sweep;
  const best = {
    mode: 'overlapped:32x8:depth-first:chunk-per-stream',
    ties: ['overlapped:32x4:depth-first:chunk-per-stream'],
  };
  const slowest = 'overlapped:1x1:depth-first:chunk-per-stream';

  it('picks the fastest raced layout and its ties, whatever best the file recorded, and heads the summary with it', () => {
    assert.deepEqual(concludeResult(swept).sweep?.best, best);
    const misrecorded = concludeResult({ ...swept, sweep: { ...sweep, best: { mode: slowest, ties: [] } } });
    assert.deepEqual(misrecorded.sweep?.best, best);
    assert.equal(misrecorded.summary.mode, best.mode);
  });

  it('picks among the raced layouts the Result lists, passing over a point whose mode it does not', () => {
    const [first] = sweep.points;
    assert.ok(first);
    const points = [...sweep.points, { ...first, mode: 'overlapped:64x8:depth-first:chunk-per-stream' }];
    assert.deepEqual(concludeResult({ ...swept, sweep: { ...sweep, points } }).sweep?.best, best);
  });

  it('keeps the recorded best where the Result lists none of the raced layouts', () => {
    const points = sweep.points.map((p) => ({ ...p, mode: `${p.mode}@elsewhere` }));
    const recordedBest = { mode: slowest, ties: [] };
    const kept = concludeResult({ ...swept, sweep: { ...sweep, points, best: recordedBest } });
    assert.deepEqual(kept.sweep?.best, recordedBest);
  });
});
