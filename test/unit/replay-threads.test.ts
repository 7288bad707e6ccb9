import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildGraph } from '../../src/analysis/graph-edges.js';
import { opStart } from '../../src/analysis/graph.js';
import { replay } from '../../src/analysis/replay.js';
import type { GpuEvent, HostCall } from '../../src/traces/events.js';

// Two host threads taking turns, as PyTorch's main thread and autograd's do: the main thread launches the forward
// pass and calls backward, whose kernels autograd's thread launches; the main thread waits at the step's end. A replay
// that frees the main thread sooner must bring autograd's launches forward with it: they waited for the main thread,
// not for autograd's own work.

const MAIN = 1;
const AUTOGRAD = 2;

const kernel = (correlation: number, start: number, end: number, stream = '7'): GpuEvent => ({
  device: 0,
  stream,
  kind: 'kernel',
  start,
  end,
  bytes: null,
  direction: null,
  hostMemory: null,
  name: `k${correlation}`,
  correlation,
  communication: false,
  issued: null,
  defaultStream: false,
});

const launch = (correlation: number, thread: number, start: number): HostCall => ({
  kind: 'launch',
  name: 'cudaLaunchKernel',
  start,
  end: start + 0.005,
  correlation,
  thread,
});

/**
 * Two steps: main launches a forward kernel, autograd's thread a backward one, main synchronizes. Step 2's backward
 * kernel, on a stream of its own, starts as soon as it is launched: its launch is what holds it.
 */
function twoSteps() {
  const events = [kernel(1, 0.01, 1.01), kernel(2, 1.012, 1.512), kernel(3, 1.6, 2.6), kernel(4, 1.6, 2.1, '8')];
  const calls: HostCall[] = [
    launch(1, MAIN, 0),
    launch(2, AUTOGRAD, 0.05),
    { kind: 'sync', name: 'cudaDeviceSynchronize', start: 0.1, end: 1.52, correlation: null, thread: MAIN },
    launch(3, MAIN, 1.55),
    launch(4, AUTOGRAD, 1.59),
    { kind: 'sync', name: 'cudaDeviceSynchronize', start: 1.6, end: 2.61, correlation: null, thread: MAIN },
  ];
  return { events, calls };
}

describe('replay: host threads that take turns', () => {
  it('gives the trace back unchanged', () => {
    const { events, calls } = twoSteps();
    const graph = buildGraph(events, calls, { linkRates: { h2d: null, d2h: null }, perOpMs: 0.002 });
    const time = replay(graph);
    graph.ops.forEach((op, i) => assert.ok(Math.abs(time[opStart(i)]! - op.start) < 1e-9, op.name));
  });

  it("moves autograd's next launch as much sooner as the main thread is freed: a 0.5 ms shorter forward kernel starts step 2's backward 0.5 ms sooner", () => {
    const { events, calls } = twoSteps();
    const graph = buildGraph(events, calls, { linkRates: { h2d: null, d2h: null }, perOpMs: 0.002 });
    const at = (name: string) => graph.ops.findIndex((op) => op.name === name);
    const time = replay(graph, { opDuration: new Map([[at('k1'), 0.5]]) });
    assert.ok(
      Math.abs(time[opStart(at('k3'))]! - (1.6 - 0.5)) < 1e-9,
      `step 2's forward at ${time[opStart(at('k3'))]}`,
    );
    assert.ok(
      Math.abs(time[opStart(at('k4'))]! - (1.6 - 0.5)) < 1e-9,
      `step 2's backward at ${time[opStart(at('k4'))]}`,
    );
  });
});
