import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runWarnings } from '../../src/measure/warnings.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { ModelAnalysis } from '../../src/model/analysis.js';
import type { RunResult } from '../../src/result/schema.js';
import { makeResult } from '../helpers/results.js';

// The run's warnings (src/measure/warnings.ts) at the thresholds and branches mutation testing found unpinned:
// each warning appears exactly past its threshold, and a layout slower than serial gets the remedy that fits it.

type Base = Omit<RunResult, 'warnings'>;
const base = makeResult({ noise: 0.001 });
const codes = (r: Base) => runWarnings(r).map((w) => w.code);
const withModes = (r: Base, change: (m: ModeResult) => ModeResult): Base => ({ ...r, modes: r.modes.map(change) });
const isOverlapped = (m: ModeResult) => m.role.kind === 'overlapped';

describe('noise warnings', () => {
  const noisy = (noise: number, n: number, stoppedBy: ModeResult['stoppedBy'] = 'noise-stable', which = isOverlapped) =>
    withModes(base, (m) => (which(m) ? { ...m, stoppedBy, stats: { ...m.stats, n, relativeNoise: noise } } : m));
  const target = base.policy.maxNoise;

  it('start just above the target, and need two samples', () => {
    assert.deepEqual(codes(base), []);
    assert.deepEqual(codes(noisy(target, 30)), []);
    assert.deepEqual(codes(noisy(target * 1.5, 30)), ['noisy']);
    assert.deepEqual(codes(noisy(target * 1.5, 1)), []);
  });

  it('say why the loop stopped, and ask for more time only when the budget ran out', () => {
    const [stable] = runWarnings(noisy(target * 2, 30, 'noise-stable'));
    assert.match(stable?.message ?? '', /\(it stopped falling\)\.$/);
    const [time] = runWarnings(noisy(target * 2, 30, 'max-time'));
    assert.match(time?.message ?? '', /\(the time budget ran out\)\.$/);
    assert.equal(time?.remedy, 'Raise --max-time.');
    const [reps] = runWarnings(noisy(target * 2, 30, 'max-reps'));
    assert.match(reps?.message ?? '', /\(30 reps were taken\)\.$/);
    assert.notEqual(reps?.remedy, 'Raise --max-time.');
  });

  it('judge only the serial and overlapped modes, not the parts measured beside them', () => {
    assert.deepEqual(
      codes(noisy(target * 2, 30, 'noise-stable', (m) => m.role.kind === 'stage' || m.role.kind === 'link')),
      [],
    );
    assert.deepEqual(codes(noisy(target * 2, 30, 'noise-stable', (m) => m.role.kind === 'serial')), ['noisy']);
  });
});

describe('the clock warning', () => {
  const clocks = (c: Partial<Base['clocks']>): Base => ({ ...base, clocks: { ...base.clocks, ...c } });

  it('needs a change of more than 5% of the highest reading, read through NVML', () => {
    assert.deepEqual(codes(clocks({ checked: true, minMHz: 1900, maxMHz: 2000 })), []);
    assert.deepEqual(codes(clocks({ checked: true, minMHz: 1899, maxMHz: 2000 })), ['clock-change']);
    assert.deepEqual(codes(clocks({ checked: false, minMHz: 1000, maxMHz: 2000 })), []);
    assert.deepEqual(codes(clocks({ checked: true, minMHz: null, maxMHz: 2000 })), []);
  });
});

describe('the bound and serial warnings', () => {
  const analysed = (change: (a: NonNullable<ModeResult['analysis']>) => NonNullable<ModeResult['analysis']>) =>
    withModes(base, (m) => (isOverlapped(m) && m.analysis ? { ...m, analysis: change(m.analysis) } : m));
  const withModel = (model: Partial<ModelAnalysis> | null, speedup = 0.8) =>
    analysed((a) => ({ ...a, speedup, model: model === null || !a.model ? null : { ...a.model, ...model } }));

  it('flag a measurement beyond 1% under the bound, and a layout slower than serial, each only past its threshold', () => {
    assert.deepEqual(codes(analysed((a) => ({ ...a, efficiency: 1.01 }))), []);
    assert.deepEqual(codes(analysed((a) => ({ ...a, efficiency: 1.02 }))), ['above-bound']);
    assert.deepEqual(codes(analysed((a) => ({ ...a, speedup: 1 }))), []);
    assert.deepEqual(codes(analysed((a) => ({ ...a, speedup: 0.99 }))), ['slower-than-serial']);
  });

  const slower = (r: Base) => runWarnings(r).find((w) => w.code === 'slower-than-serial');

  it('fits the remedy to what serialises the layout: one stream, pageable memory, the legacy stream', () => {
    const one = slower(withModel({ serialisers: ['per-thread default stream'] }));
    assert.match(
      one?.message ?? '',
      /\(0\.80×\): every stream is the per-thread default stream, so its streams are one stream and nothing overlaps\.$/,
    );
    assert.match(one?.remedy ?? '', /^Use `streamKind: non-blocking`/);
    assert.match(slower(withModel({ serialisers: ['pageable memory'] }))?.remedy ?? '', /^Use `hostMemory: pinned`/);
    assert.match(
      slower(withModel({ serialisers: ['legacy default stream'] }))?.remedy ?? '',
      /^Keep work off the legacy default stream/,
    );
  });

  it("suggests the model's chunk count where it is fewer, and says the model cannot explain the loss otherwise", () => {
    const overlapped = base.modes.find(isOverlapped);
    assert.ok(overlapped);
    const layoutChunks = (overlapped.role as { layout: { chunks: number } }).layout.chunks;
    const floor = (chunks: number) => ({ chunks, streams: 4, ms: 1, limitedBy: 'link' as const });
    assert.equal(
      slower(withModel({ serialisers: [], floor: floor(layoutChunks / 2) }))?.remedy,
      `Use fewer chunks, about ${layoutChunks / 2} (the model's best layout for this workload): per-op costs dominate small chunks.`,
    );
    assert.match(
      slower(withModel({ serialisers: [], floor: floor(layoutChunks) }))?.remedy ?? '',
      /^Nothing in this config is known to run ops one after another/,
    );
  });

  it('falls back to the general advice, with no word of one stream, for a Result without serialisers', () => {
    const old = slower(withModel({ serialisers: undefined }));
    assert.match(old?.message ?? '', /\(0\.80×\)\.$/);
    assert.match(old?.remedy ?? '', /^Use fewer chunks \(per-op costs dominate small chunks\)/);
    const none = slower(withModel(null));
    assert.match(none?.message ?? '', /\(0\.80×\)\.$/);
  });
});
