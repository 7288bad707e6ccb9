import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitRanges } from '../../src/chunking.js';
import type { PipelineShape } from '../../src/plan/schedules.js';
import { stagePerStreamSchedule } from '../../src/plan/stage-per-stream.js';
import { configBuffer } from '../helpers/config-buffer.js';
import { showOps as show } from '../helpers/show-ops.js';

// The stage-per-stream layout on small hand-made shapes: which event hands each chunk from stage to stage, in what
// issue order, and what the layout is called.

const shape = (over: Partial<PipelineShape> = {}): PipelineShape => ({
  device: 0,
  buffers: [configBuffer('x', 'in'), configBuffer('y', 'out')],
  kernels: ['k'],
  elements: 64,
  streamKind: 'blocking',
  gated: false,
  ...over,
});
const ranges = splitRanges(64, 2);

describe('one stream per stage', () => {
  it('hands each chunk from load to compute to store through its own untimed events, chunk by chunk depth-first', () => {
    const s = stagePerStreamSchedule(shape(), ranges, 'depth-first');
    assert.deepEqual(show(s.body), [
      'h2d0@load',
      'record loaded:0@load',
      'wait loaded:0@compute',
      'k0@compute',
      'record computed:0@compute',
      'wait computed:0@store',
      'd2h0@store',
      'h2d1@load',
      'record loaded:1@load',
      'wait loaded:1@compute',
      'k1@compute',
      'record computed:1@compute',
      'wait computed:1@store',
      'd2h1@store',
    ]);
    assert.deepEqual(s.events, [
      { id: 'start', timing: true },
      { id: 'end', timing: true },
      ...['loaded:0', 'computed:0', 'loaded:1', 'computed:1', 'join:compute', 'join:store'].map((id) => ({
        id,
        timing: false,
      })),
    ]);
    assert.equal(s.verify, true);
    assert.deepEqual(
      s.streams,
      ['load', 'compute', 'store'].map((id) => ({ id, kind: 'blocking', device: 0 })),
    );
    assert.equal(s.description, '2 chunks, one stream per stage (load, compute, store), depth-first');
  });

  it('issues every load, then every kernel, then every store breadth-first', () => {
    const s = stagePerStreamSchedule(shape(), ranges, 'breadth-first');
    assert.deepEqual(show(s.body), [
      'h2d0@load',
      'record loaded:0@load',
      'h2d1@load',
      'record loaded:1@load',
      'wait loaded:0@compute',
      'k0@compute',
      'record computed:0@compute',
      'wait loaded:1@compute',
      'k1@compute',
      'record computed:1@compute',
      'wait computed:0@store',
      'd2h0@store',
      'wait computed:1@store',
      'd2h1@store',
    ]);
  });

  it('hands the loads of a chunk without kernels straight to its stores', () => {
    const s = stagePerStreamSchedule(shape({ kernels: [] }), ranges, 'breadth-first');
    assert.deepEqual(show(s.body), [
      'h2d0@load',
      'record loaded:0@load',
      'h2d1@load',
      'record loaded:1@load',
      'wait loaded:0@store',
      'd2h0@store',
      'wait loaded:1@store',
      'd2h1@store',
    ]);
  });

  it('waits on nothing before the kernels of a chunk with no loads, and stores what they computed', () => {
    const s = stagePerStreamSchedule(shape({ buffers: [configBuffer('y', 'out')] }), ranges.slice(0, 1), 'depth-first');
    assert.deepEqual(show(s.body), ['k0@compute', 'record computed:0@compute', 'wait computed:0@store', 'd2h0@store']);
  });

  it("runs the host stage on the store stream after the D2H, and says so with the ring's slots", () => {
    const s = stagePerStreamSchedule(
      shape({ host: 'checksum', ring: { ring: { slots: 1, slotElements: 32 }, ranges } }),
      ranges,
      'depth-first',
    );
    assert.equal(
      s.description,
      '2 chunks, one stream per stage (load, compute, store), depth-first, through 1 device slots, host checksum after each D2H',
    );
    assert.deepEqual(s.role, {
      kind: 'overlapped',
      layout: { chunks: 2, streams: 3, order: 'depth-first', topology: 'stage-per-stream', host: 'checksum', slots: 1 },
    });
    assert.deepEqual(show(s.body).slice(5, 10), [
      'wait computed:0@store',
      'd2h0@store',
      'record slot-free:0@store',
      'host0@store',
      'wait slot-free:0@load',
    ]);
    assert.deepEqual(
      s.events.map((e) => e.id).filter((id) => id.startsWith('slot-free')),
      ['slot-free:0'],
    );
  });
});
