import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunResultSchema } from '../../src/result/schema.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';
import { CHUNK_MS, syntheticRunResult } from '../helpers/synthetic-timeline.js';

// The fixture stands in for a recorded GPU result, so its simulation must behave like the hardware it models.

const result = syntheticRunResult();
const [serial, overlapped] = result.timeline!.reps as [TracedRep, TracedRep];
const duration = (op: TimelineOp) => op.endMs - op.startMs;
const close = (a: number, b: number, eps = 1e-6) => Math.abs(a - b) < eps;

describe('synthetic timeline fixture', () => {
  it('is a valid version 2 Result with a serial and an overlapped traced rep', () => {
    assert.deepEqual(RunResultSchema.parse(result), result);
    assert.deepEqual(
      result.timeline!.reps.map((r) => [r.mode, r.streams.length, r.ops.length]),
      [
        ['serial', 1, 3],
        ['overlapped:16x4:depth-first:chunk-per-stream', 4, 48],
      ],
    );
  });

  it('issues the overlapped ops depth-first, chunk c on stream c mod 4', () => {
    const byIssue = [...overlapped.ops].sort((a, b) => a.issuedMs - b.issuedMs);
    assert.deepEqual(
      byIssue.slice(0, 6).map((op) => `${op.kind}${op.chunk}@${op.stream}`),
      ['h2d0@s0', 'kernel0@s0', 'd2h0@s0', 'h2d1@s1', 'kernel1@s1', 'd2h1@s1'],
    );
    assert.ok(overlapped.ops.every((op) => op.stream === `s${op.chunk! % 4}`));
  });

  it('runs whole buffers serially at the stage times of 16 chunks', () => {
    assert.deepEqual(
      serial.ops.map((op) => Number(duration(op).toFixed(6))),
      [16 * CHUNK_MS.h2d, 16 * CHUNK_MS.kernel, 16 * CHUNK_MS.d2h],
    );
  });

  it('keeps stream order and never runs two ops of one engine at once', () => {
    for (const group of [['s0'], ['s1'], ['s2'], ['s3']].map(([s]) => overlapped.ops.filter((op) => op.stream === s))) {
      group.slice(1).forEach((op, i) => assert.ok(op.startMs >= group[i]!.endMs, `${op.stream} ${op.kind}${op.chunk}`));
    }
    for (const kind of ['h2d', 'kernel', 'd2h'] as const) {
      const ops = overlapped.ops.filter((op) => op.kind === kind).sort((a, b) => a.startMs - b.startMs);
      ops.slice(1).forEach((op, i) => assert.ok(op.startMs >= ops[i]!.endMs - 1e-9, `${kind}${op.chunk}`));
    }
  });

  it('stretches copies while both directions share the link, and only then', () => {
    const first = overlapped.ops.find((op) => op.kind === 'h2d' && op.chunk === 0)!;
    assert.ok(close(duration(first), CHUNK_MS.h2d), 'the first H2D runs alone');
    const copies = overlapped.ops.filter((op) => op.kind !== 'kernel');
    assert.ok(copies.every((op) => duration(op) >= CHUNK_MS.h2d - 1e-9));
    // At 0.75 of full speed while shared, a copy that shares all of its time takes 0.4 ms.
    assert.ok(copies.some((op) => close(duration(op), CHUNK_MS.d2h / 0.75)));
    assert.ok(overlapped.ops.filter((op) => op.kind === 'kernel').every((op) => close(duration(op), CHUNK_MS.kernel)));
  });

  it('ends each rep just after its last op and finishes issue long before the GPU', () => {
    for (const rep of [serial, overlapped]) {
      const last = Math.max(...rep.ops.map((op) => op.endMs));
      assert.ok(rep.totalMs > last && rep.totalMs - last < 0.01);
      assert.ok(rep.issueMs < rep.totalMs / 10);
    }
  });

  it('runs the second GPU of a pair with a 10% slower link', () => {
    const pair = syntheticRunResult({ devices: 2 });
    const h2d = (device: number) =>
      pair.timeline!.reps.find((r) => r.device === device && r.mode === 'serial')!.ops[0]!;
    assert.ok(close(duration(h2d(1)), 1.1 * duration(h2d(0))));
    assert.deepEqual(
      pair.devices.map((d) => d.index),
      [0, 1],
    );
  });
});
