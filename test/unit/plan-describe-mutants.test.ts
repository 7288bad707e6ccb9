import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitRanges } from '../../src/chunking.js';
import { describeOp, modeName } from '../../src/plan/describe.js';

// The words error messages and the printed plan use for each op and mode.

const schedule = { ranges: splitRanges(4096, 4) };
const kernels = [
  { label: 'fma', entry: 'fma_loop' },
  { label: 'scale', entry: 'scale' },
];

describe('an op in words', () => {
  it('names a kernel by its label, with its entry only where they differ, and the elements it covers', () => {
    assert.equal(
      describeOp(
        { kind: 'kernel', stream: 's0', kernel: 'fma', chunk: 2, first: 2048, count: 1024, deviceFirst: 0 },
        schedule,
        kernels,
      ),
      'kernel fma (fma_loop), chunk 2 of 4 (elements 2048 to 3071)',
    );
    assert.equal(
      describeOp(
        { kind: 'kernel', stream: 's0', kernel: 'scale', chunk: null, first: 0, count: 4096, deviceFirst: 0 },
        schedule,
        kernels,
      ),
      'kernel scale, whole buffers (elements 0 to 4095)',
    );
    assert.equal(
      describeOp(
        { kind: 'kernel', stream: 's0', kernel: 'other', chunk: 0, first: 0, count: 1, deviceFirst: 0 },
        schedule,
        kernels,
      ),
      'kernel other, chunk 0 of 4 (elements 0 to 0)',
    );
  });

  it('names a copy by its direction, buffer, chunk and size', () => {
    assert.equal(
      describeOp(
        {
          kind: 'copy',
          stream: 's1',
          direction: 'h2d',
          buffer: 'input',
          hostOffset: 0,
          deviceOffset: 0,
          bytes: 4096,
          chunk: 1,
        },
        schedule,
        kernels,
      ),
      'H2D of "input", chunk 1 of 4 (4 KiB)',
    );
    assert.equal(
      describeOp(
        {
          kind: 'copy',
          stream: 's1',
          direction: 'd2h',
          buffer: 'out',
          hostOffset: 0,
          deviceOffset: 0,
          bytes: 16,
          chunk: null,
        },
        schedule,
        kernels,
      ),
      'D2H of "out", whole buffers (16 B)',
    );
  });

  it('names a peer copy by its buffer and both devices', () => {
    assert.equal(
      describeOp(
        { kind: 'peer', stream: 'd0:s0', buffer: 'scaled', from: 0, to: 1, deviceOffset: 0, bytes: 2048, chunk: 3 },
        schedule,
        kernels,
      ),
      'peer copy of "scaled" from GPU 0 to GPU 1, chunk 3 of 4 (2 KiB)',
    );
  });

  it('names every ordering op and host function apart', () => {
    assert.deepEqual(
      [
        describeOp({ kind: 'record', stream: 's0', event: 'start' }, schedule, kernels),
        describeOp({ kind: 'wait', stream: 's1', event: 'start' }, schedule, kernels),
        describeOp({ kind: 'host', stream: 's0', name: 'checksum', chunk: 1 }, schedule, kernels),
        describeOp({ kind: 'host', stream: 's0', name: 'checksum', chunk: null }, schedule, kernels),
        describeOp({ kind: 'gate', stream: 's0' }, schedule, kernels),
        describeOp({ kind: 'empty', stream: 's0' }, schedule, kernels),
      ],
      [
        'the record of event start',
        'the wait on event start',
        'host function checksum, chunk 1 of 4',
        'host function checksum',
        'the gate kernel',
        'an empty kernel',
      ],
    );
  });
});

describe('a mode in words', () => {
  it('names the serial mode plainly and any other by its kind and description', () => {
    assert.equal(modeName({ role: { kind: 'serial' }, description: 'whole buffers on one stream' }), 'the serial mode');
    assert.equal(
      modeName({
        role: { kind: 'link', copiesPerDirection: 2, streamsPerDirection: 2 },
        description: 'H2D and D2H at once',
      }),
      'the link mode (H2D and D2H at once)',
    );
  });
});
