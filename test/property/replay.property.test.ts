import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { causesOf } from '../../src/analysis/causes.js';
import type { GpuEvent, HostCall } from '../../src/traces/events.js';
import { attribute } from '../../src/analysis/findings.js';
import { deviceTimeline, stepMetrics } from '../../src/analysis/metrics.js';
import { buildGraph } from '../../src/analysis/graph-edges.js';
import type { Edit } from '../../src/analysis/graph.js';
import { replay } from '../../src/analysis/replay.js';
import type { StepWindow } from '../../src/analysis/steps.js';

// The replay behind every finding, on synthetic timelines: a host thread issues ops onto a few streams (some of
// them copies, some on the default stream, some behind a synchronize), and a simple GPU runs them (a stream's ops
// in order, each no sooner than its launch plus a latency, sometimes late for no reason the trace shows). Whatever
// the timeline, the graph must give the trace back unchanged, an edit that only takes constraints away or shortens
// work must never make anything later, and the findings' credits must be non-negative and within each step's time
// above its floor.

interface Planned {
  readonly stream: number;
  readonly kind: 'kernel' | 'h2d' | 'd2h';
  readonly durationUs: number;
  readonly hostGapUs: number;
  readonly extraDelayUs: number;
  readonly sync: boolean;
}

const plannedArbitrary: fc.Arbitrary<Planned> = fc.record({
  stream: fc.integer({ min: 0, max: 3 }),
  kind: fc.constantFrom('kernel', 'kernel', 'h2d', 'd2h'),
  durationUs: fc.integer({ min: 1, max: 400 }),
  hostGapUs: fc.integer({ min: 0, max: 60 }),
  extraDelayUs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 80 })),
  sync: fc.integer({ min: 0, max: 9 }).map((n) => n < 3),
});

/** The trace of the plan: GPU events and the host calls that issued them, in ms. */
function timelineOf(plan: readonly Planned[]): { events: GpuEvent[]; calls: HostCall[]; windows: StepWindow[] } {
  const events: GpuEvent[] = [];
  const calls: HostCall[] = [];
  const streamFree = [0, 0, 0, 0];
  let host = 0;
  plan.forEach((p, i) => {
    host += p.hostGapUs;
    const call = { start: host, end: host + 5 };
    calls.push({
      kind: 'launch',
      name: 'cudaLaunchKernel',
      start: call.start / 1000,
      end: call.end / 1000,
      correlation: i,
      thread: 1,
    });
    host = call.end;
    const start = Math.max(call.end + 3, streamFree[p.stream]!) + p.extraDelayUs;
    const end = start + p.durationUs;
    streamFree[p.stream] = end;
    const copy = p.kind !== 'kernel';
    events.push({
      device: 0,
      stream: p.stream === 0 ? '7' : String(10 + p.stream),
      kind: copy ? 'memcpy' : 'kernel',
      start: start / 1000,
      end: end / 1000,
      bytes: copy ? p.durationUs * 20_000 : null,
      direction: copy ? (p.kind as 'h2d' | 'd2h') : null,
      hostMemory: copy ? 'pinned' : null,
      name: p.kind,
      correlation: i,
      communication: false,
      issued: call.end / 1000,
      defaultStream: p.stream === 0,
    });
    if (p.sync) {
      const waitedUntil = Math.max(host, ...streamFree) + 4;
      calls.push({
        kind: 'sync',
        name: 'cudaDeviceSynchronize',
        start: host / 1000,
        end: waitedUntil / 1000,
        correlation: null,
        thread: 1,
      });
      host = waitedUntil;
    }
  });
  const start = Math.min(...events.map((e) => e.start));
  const end = Math.max(...events.map((e) => e.end));
  const mid = (start + end) / 2;
  const windows = [
    { name: 'step 1', start, end: mid, host: { start: 0, end: calls[calls.length - 1]!.end / 2 } },
    {
      name: 'step 2',
      start: mid,
      end: end + 1e-9,
      host: { start: calls[calls.length - 1]!.end / 2, end: calls[calls.length - 1]!.end + 1 },
    },
  ];
  return { events, calls, windows };
}

const planArbitrary = fc.array(plannedArbitrary, { minLength: 1, maxLength: 40 });
const RATES = { h2d: 50, d2h: 50 };

describe('the replay graph, for any synthetic timeline', () => {
  it('replayed unchanged, gives back every start and end of the trace', () => {
    fc.assert(
      fc.property(planArbitrary, (plan) => {
        const { events, calls } = timelineOf(plan);
        const graph = buildGraph(events, calls, { linkRates: RATES, perOpMs: 0.001 });
        const time = replay(graph);
        for (let p = 0; p < time.length; p++)
          assert.ok(
            Math.abs(time[p]! - graph.observed[p]!) < 1e-9,
            `point ${p}: ${time[p]} against ${graph.observed[p]}`,
          );
      }),
    );
  });

  it('taking edges out and shortening work never makes a point later', () => {
    fc.assert(
      fc.property(
        planArbitrary,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 8, maxLength: 8 }),
        (plan, dice) => {
          const { events, calls } = timelineOf(plan);
          const graph = buildGraph(events, calls, { linkRates: RATES, perOpMs: 0.001 });
          const pick = (k: number) => dice[k % dice.length]! < 0.4;
          const dropped = new Set<number>();
          for (let k = 0; k < graph.edges.count; k++) if (pick(k)) dropped.add(k);
          const opDuration = new Map(
            graph.ops.map((op, i) => [i, (op.end - op.start) * (pick(i + 3) ? 0.5 : 1)] as const),
          );
          const callDuration = new Map(
            graph.calls.map((_, j) => [j, pick(j + 5) ? 0 : graph.duration[graph.ops.length + j]!] as const),
          );
          const edit: Edit = { dropped, opDuration, callDuration };
          const time = replay(graph, edit);
          for (let p = 0; p < time.length; p++)
            assert.ok(
              time[p]! <= graph.observed[p]! + 1e-9,
              `point ${p} moved later: ${time[p]} > ${graph.observed[p]}`,
            );
        },
      ),
    );
  });

  it('credits every cause with a saving of 0 or more, and no step with more than it takes above its floor', () => {
    fc.assert(
      fc.property(planArbitrary, (plan) => {
        const { events, calls, windows } = timelineOf(plan);
        const timeline = deviceTimeline(events, calls);
        const graph = buildGraph(timeline.events, calls, { linkRates: RATES, perOpMs: timeline.perOpMs });
        const steps = windows.map((w) => stepMetrics(timeline, w, RATES));
        const causes = causesOf({ graph, pinned: RATES, windows, device: null });
        const credited = attribute({ graph, causes, windows, steps });
        windows.forEach((_, s) => {
          const total = credited.reduce((sum, c) => sum + c.savedMs[s]!, 0);
          for (const c of credited) assert.ok(c.savedMs[s]! >= 0, `${c.cause.code} credited ${c.savedMs[s]}`);
          assert.ok(
            total <= Math.max(0, steps[s]!.ms - steps[s]!.floor.ms) + 1e-9,
            `step ${s}: ${total} over ${steps[s]!.ms} - ${steps[s]!.floor.ms}`,
          );
        });
      }),
    );
  });
});
