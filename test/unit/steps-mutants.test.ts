import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type StepWindow, stepMembers, stepWindows } from '../../src/analysis/steps.js';
import type { GpuEvent, HostCall, ParsedTrace, StepMark } from '../../src/traces/events.js';
import { gpuEvent } from '../helpers/gpu-event.js';

// Where each step lies on a device's GPU clock (analysis/steps.ts) at the edges mutation testing found unpinned: host
// steps mapped through their launches, GPU annotations widening them or standing alone, the whole trace as one step,
// and which ops belong to which window.

function ev(start: number, end: number, correlation: number | null, device = 0): GpuEvent {
  return gpuEvent({ device, stream: 's', start, end, correlation });
}
const launch = (start: number, correlation: number | null, kind: HostCall['kind'] = 'launch'): HostCall => ({
  kind,
  name: kind === 'launch' ? 'cudaLaunchKernel' : 'cudaStreamSynchronize',
  start,
  end: start + 0.01,
  correlation,
});
const hostStep = (name: string, start: number, end: number): StepMark => ({
  name,
  clock: 'host',
  device: null,
  start,
  end,
});
const gpuStep = (name: string, start: number, end: number, device = 0): StepMark => ({
  name,
  clock: 'gpu',
  device,
  start,
  end,
});
const trace = (steps: StepMark[], host: HostCall[] = [], gpu: GpuEvent[] = []): ParsedTrace => ({
  file: 't.json',
  format: 'kineto',
  rank: null,
  gpu,
  host,
  steps,
  notes: [],
});
const windows = (t: ParsedTrace, device = 0, events = t.gpu) =>
  stepWindows(t, device, events).map((w) => [w.name, w.start, w.end, w.host && [w.host.start, w.host.end]]);

describe("a host step's GPU span", { timeout: 5_000 }, () => {
  it('runs from the first to the last GPU event its launches made, the steps in order of their start', () => {
    const t = trace(
      [hostStep('ProfilerStep#2', 10, 20), hostStep('ProfilerStep#1', 0, 10)],
      [launch(1, 1), launch(4, 2), launch(12, 3)],
      [ev(5, 6, 1), ev(7, 9, 2), ev(15, 18, 3)],
    );
    assert.deepEqual(windows(t), [
      ['ProfilerStep#1', 5, 9, [0, 10]],
      ['ProfilerStep#2', 15, 18, [10, 20]],
    ]);
  });

  it('puts a launch at the very start of a step in it, and one at its end in the next', () => {
    const t = trace(
      [hostStep('A', 0, 10), hostStep('B', 10, 20)],
      [launch(0, 1), launch(10, 2)],
      [ev(1, 2, 1), ev(11, 12, 2)],
    );
    assert.deepEqual(windows(t), [
      ['A', 1, 2, [0, 10]],
      ['B', 11, 12, [10, 20]],
    ]);
  });

  it('finds the step holding each launch among many, and none for a launch before, between or after them', () => {
    const marks = [0, 1, 2, 3, 4, 5].map((i) => hostStep(`S${i}`, i * 10, i * 10 + 5));
    // Before the first, at S0's end (5), between S0 and S1, at S1's end (15), after the last: in no step.
    const strays = [launch(-1, 100), launch(5, 101), launch(7, 102), launch(15, 103), launch(60, 104)];
    const launches = [...strays, ...marks.map((m, i) => launch(m.start + 1, i))];
    const events = strays.map((call, i) => ev(1000 + i, 1000.5 + i, call.correlation));
    for (let i = 0; i < marks.length; i += 1) events.push(ev(100 + i * 10, 102 + i * 10, i));
    assert.deepEqual(windows(trace(marks, launches, events)), [
      ['S0', 100, 102, [0, 5]],
      ['S1', 110, 112, [10, 15]],
      ['S2', 120, 122, [20, 25]],
      ['S3', 130, 132, [30, 35]],
      ['S4', 140, 142, [40, 45]],
      ['S5', 150, 152, [50, 55]],
    ]);
  });

  it('takes only launches with a correlation, not synchronizes, and only events that carry one', () => {
    const t = trace(
      [hostStep('A', 0, 10)],
      [launch(1, 1), launch(2, null), launch(3, 7, 'sync')],
      [ev(4, 5, 1), ev(1, 9, null), ev(0, 10, 7)],
    );
    assert.deepEqual(windows(t), [['A', 4, 5, [0, 10]]]);
  });

  it('leaves out a step that launched nothing here, or only an instant', () => {
    const t = trace(
      [hostStep('A', 0, 10), hostStep('B', 10, 20), hostStep('C', 20, 30)],
      [launch(1, 1), launch(21, 3)],
      [ev(2, 3, 1), ev(25, 25, 3)],
    );
    assert.deepEqual(windows(t), [['A', 2, 3, [0, 10]]]);
  });

  it("is widened, never narrowed, by this device's GPU annotation of the same name", () => {
    const t = trace(
      [
        hostStep('A', 0, 10),
        hostStep('B', 10, 20),
        gpuStep('A', 3, 9.5),
        gpuStep('B', 12, 13),
        gpuStep('A', 0, 30, 1),
        gpuStep('C', 0, 30),
      ],
      [launch(1, 1), launch(11, 2)],
      [ev(4, 9, 1), ev(11, 16, 2)],
    );
    assert.deepEqual(windows(t), [
      ['A', 3, 9.5, [0, 10]],
      ['B', 11, 16, [10, 20]],
    ]);
  });
});

describe('GPU annotations alone', { timeout: 5_000 }, () => {
  it("are the steps where no host step launched anything here, each the union of its streams' spans, in order", () => {
    const t = trace(
      [
        hostStep('ProfilerStep#1', 0, 10),
        gpuStep('ProfilerStep#2', 20, 25),
        gpuStep('ProfilerStep#1', 4, 6),
        gpuStep('ProfilerStep#1', 2, 5),
        gpuStep('ProfilerStep#1', 5, 8),
        gpuStep('ProfilerStep#1', 0, 50, 1),
      ],
      [launch(1, 1)],
      [ev(3, 4, 9)],
    );
    assert.deepEqual(windows(t), [
      ['ProfilerStep#1', 2, 8, [0, 10]],
      ['ProfilerStep#2', 20, 25, null],
    ]);
  });

  it('of equal start are ordered by end', () => {
    const t = trace([gpuStep('long', 0, 9), gpuStep('short', 0, 3)]);
    assert.deepEqual(windows(t), [
      ['short', 0, 3, null],
      ['long', 0, 9, null],
    ]);
  });

  it("belong to their device: another device's annotations make no step here", () => {
    const t = trace([gpuStep('A', 0, 5, 1)], [], [ev(1, 2, null), ev(3, 7, null)]);
    assert.deepEqual(windows(t), [['whole trace', 1, 7, null]]);
  });
});

describe('a trace without steps', { timeout: 5_000 }, () => {
  it("is one step from its first event's start to its last event's end", () => {
    assert.deepEqual(windows(trace([], [], [ev(3, 4, null), ev(1, 2, null), ev(2, 9, null), ev(5, 6, null)])), [
      ['whole trace', 1, 9, null],
    ]);
  });

  it('has no step without events', () => {
    assert.deepEqual(stepWindows(trace([]), 0, []), []);
  });
});

describe("a window's members", { timeout: 5_000 }, () => {
  const w = (name: string, start: number, end: number): StepWindow => ({ name, start, end, host: null });

  it('are the ops starting inside it, each window in the order given, however the windows are sorted', () => {
    const given = [w('C', 20, 30), w('A', 0, 5), w('B', 10, 15), w('D', 30, 40)];
    const ops = [-1, 0, 4.9, 5, 7, 10, 14, 15, 20, 29, 30, 39.9, 40, 50].map((start) => ({ start }));
    // -1 is before every window, 5 to 10 and 15 to 20 fall between them, 40 and 50 after the last.
    assert.deepEqual(stepMembers(ops, given), [
      [8, 9],
      [1, 2],
      [5, 6],
      [10, 11],
    ]);
  });

  it('are empty with no ops, and no ops belong anywhere without windows', () => {
    assert.deepEqual(stepMembers([], [w('A', 0, 1)]), [[]]);
    assert.deepEqual(stepMembers([{ start: 0 }], []), []);
  });

  it('go to the later of two windows that overlap, and past its end to neither', () => {
    assert.deepEqual(stepMembers([{ start: 1 }, { start: 3 }, { start: 6 }], [w('A', 0, 10), w('B', 2, 5)]), [
      [0],
      [1],
    ]);
  });
});
