import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResolvedKernel } from '../../src/kernels/resolve.js';
import { isWorkOp, type Op, planKernel, scheduleDevices, scheduleOps, streamDevices } from '../../src/plan/types.js';

// The small readers of a schedule every layer shares.

const spanning = {
  device: 1,
  streams: [
    { id: 'd1:s0', kind: 'non-blocking' as const, device: 1 },
    { id: 'd0:s0', kind: 'non-blocking' as const, device: 0 },
    { id: 'd2:s0', kind: 'non-blocking' as const, device: 2 },
  ],
};

describe('the readers of a schedule', () => {
  it("finds each stream's device, and the schedule's own device for a stream it does not list", () => {
    const deviceOf = streamDevices(spanning);
    assert.deepEqual(['d1:s0', 'd0:s0', 'd2:s0', 'legacy'].map(deviceOf), [1, 0, 2, 1]);
  });

  it("lists the devices once each, the schedule's own first", () => {
    assert.deepEqual(scheduleDevices(spanning), [1, 0, 2]);
    assert.deepEqual(scheduleDevices({ device: 3, streams: [] }), [3]);
  });

  it("gives a rep's ops in issue order: prologue, body, epilogue", () => {
    const op = (event: string): Op => ({ kind: 'record', stream: 's0', event });
    assert.deepEqual(
      scheduleOps({ prologue: [op('a')], body: [op('b'), op('c')], epilogue: [op('d')] }).map(
        (o) => o.kind === 'record' && o.event,
      ),
      ['a', 'b', 'c', 'd'],
    );
  });

  it('counts copies, kernels, host functions and peer copies as work, and nothing that only orders or times', () => {
    const ops: Op[] = [
      { kind: 'copy', stream: 's0', direction: 'h2d', buffer: 'x', hostOffset: 0, deviceOffset: 0, bytes: 4, chunk: 0 },
      { kind: 'kernel', stream: 's0', kernel: 'k', chunk: 0, first: 0, count: 1, deviceFirst: 0 },
      { kind: 'host', stream: 's0', name: 'checksum', chunk: 0 },
      { kind: 'peer', stream: 's0', buffer: 'x', from: 0, to: 1, deviceOffset: 0, bytes: 4, chunk: 0 },
      { kind: 'record', stream: 's0', event: 'e' },
      { kind: 'wait', stream: 's0', event: 'e' },
      { kind: 'gate', stream: 's0' },
      { kind: 'empty', stream: 's0' },
    ];
    assert.deepEqual(ops.map(isWorkOp), [true, true, true, true, false, false, false, false]);
  });

  it('keeps of a resolved kernel only what a launch needs, never its source text', () => {
    const kernel: ResolvedKernel = {
      label: 'k',
      entry: 'scale',
      sourcePath: '/k/scale.cu',
      sourceText: '__global__ void scale() {}',
      signature: { entry: 'scale', params: [] } as unknown as ResolvedKernel['signature'],
      options: ['-O3'],
      block: 256,
      grid: 'auto',
      args: [],
    };
    assert.deepEqual(planKernel(kernel), {
      label: 'k',
      entry: 'scale',
      sourcePath: '/k/scale.cu',
      block: 256,
      grid: 'auto',
      args: [],
    });
  });
});
