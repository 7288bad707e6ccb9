import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsOfRep } from '../../src/analysis/rep-events.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';

// A traced rep read as the analysis core's GPU events (analysis/rep-events.ts): one rep with a copy in and out, a
// kernel, a GEMM reading a named buffer, a collective, and a host op, on a created stream and the legacy default
// stream; the copies from pinned, pageable and write-combined host memory.

const op = (fields: Partial<TimelineOp> & Pick<TimelineOp, 'kind' | 'stream'>): TimelineOp => ({
  mode: 'overlapped:2x2:depth-first:chunk-per-stream',
  device: 0,
  chunk: 0,
  buffer: null,
  kernel: null,
  bytes: 1_048_576,
  startMs: 0.1,
  endMs: 0.3,
  issuedMs: 0.02,
  ...fields,
});

const rep: TracedRep = {
  mode: 'overlapped:2x2:depth-first:chunk-per-stream',
  device: 0,
  totalMs: 2,
  issueMs: 0.2,
  streams: [
    { id: 's0', flags: 'non-blocking', priority: null },
    { id: 'legacy', flags: 'legacy-default', priority: null },
  ],
  ops: [
    op({ kind: 'h2d', stream: 's0', buffer: 'input', engineStartMs: 0.12, engineEndMs: 0.28 }),
    op({ kind: 'kernel', stream: 'legacy', kernel: 'fma', bytes: 2_097_152, startMs: 0.3, endMs: 0.7 }),
    op({ kind: 'd2h', stream: 's0', buffer: 'output', startMs: 0.7, endMs: 0.9, issuedMs: 0.05 }),
    op({ kind: 'h2d', stream: 's0', buffer: 'staging', startMs: 0.9, endMs: 1.1 }),
    op({ kind: 'gemm', stream: 's0', buffer: 'input', bytes: 4_194_304, startMs: 1.1, endMs: 1.5 }),
    op({ kind: 'collective', stream: 'legacy', bytes: 8_388_608, startMs: 1.5, endMs: 1.9 }),
    op({ kind: 'host', stream: 's0', bytes: 0, startMs: 1.9, endMs: 2 }),
  ],
};

const memory: Record<string, string> = { input: 'pinned', output: 'pageable', staging: 'write-combined' };

describe("a traced rep's ops as GPU events (analysis/rep-events.ts)", { timeout: 10_000 }, () => {
  const asked: string[] = [];
  const events = eventsOfRep(rep, (buffer) => {
    asked.push(buffer);
    return memory[buffer];
  });

  it('gives every GPU op one event and a host op none', () => {
    assert.deepEqual(
      events.map((e) => [e.kind, e.direction, e.communication]),
      [
        ['memcpy', 'h2d', false],
        ['kernel', null, false],
        ['memcpy', 'd2h', false],
        ['memcpy', 'h2d', false],
        ['kernel', null, false],
        ['kernel', null, true],
      ],
    );
  });

  it("takes CUPTI's engine interval where it was recorded, else the op's events, and keeps the issue time", () => {
    assert.deepEqual(
      events.map((e) => [e.start, e.end, e.issued]),
      [
        [0.12, 0.28, 0.02],
        [0.3, 0.7, 0.02],
        [0.7, 0.9, 0.05],
        [0.9, 1.1, 0.02],
        [1.1, 1.5, 0.02],
        [1.5, 1.9, 0.02],
      ],
    );
  });

  it("counts bytes for copies only: a kernel's element range is no transfer", () => {
    assert.deepEqual(
      events.map((e) => e.bytes),
      [1_048_576, null, 1_048_576, 1_048_576, null, null],
    );
  });

  it('marks the host memory of copies from pinned or pageable buffers, and of no kernel reading a pinned one', () => {
    assert.deepEqual(
      events.map((e) => e.hostMemory),
      ['pinned', null, 'pageable', null, null, null],
    );
  });

  it('asks for the host memory of the buffers the ops name, never of an op without one', () => {
    assert.deepEqual(asked, ['input', 'output', 'staging', 'input']);
  });

  it('names each event by its kernel, else its buffer, else its kind; labels it by kernel or buffer only', () => {
    assert.deepEqual(
      events.map((e) => [e.name, e.label]),
      [
        ['input', 'buffer input'],
        ['fma', 'fma'],
        ['output', 'buffer output'],
        ['staging', 'buffer staging'],
        ['input', 'buffer input'],
        ['collective', null],
      ],
    );
  });

  it('puts on the default stream only the ops of the stream recorded as the legacy default', () => {
    assert.deepEqual(
      events.map((e) => [e.stream, e.defaultStream]),
      [
        ['s0', false],
        ['legacy', true],
        ['s0', false],
        ['s0', false],
        ['s0', false],
        ['legacy', true],
      ],
    );
  });
});
