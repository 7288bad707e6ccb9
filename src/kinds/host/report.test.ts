import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostOpLatencies } from './report.js';

// The host stage's report line reads its host functions' times in the traced rep (moved here from
// test/unit/toolbox-results.test.ts with the line itself, ./report.ts).

describe("the host stage's report", () => {
  it('times host calls from their stream reaching them to the function starting', () => {
    const op = (startMs: number, hostStartedMs: number, hostEndedMs: number) => ({
      mode: 'm',
      device: 0,
      stream: 's0',
      kind: 'host' as const,
      chunk: 0,
      buffer: null,
      kernel: null,
      bytes: 0,
      startMs,
      endMs: hostEndedMs,
      issuedMs: 0,
      hostStartedMs,
      hostEndedMs,
    });
    const { latencyMs, runMs } = hostOpLatencies([op(1, 1.05, 1.5), op(2, 2.5, 2.6)]);
    assert.deepEqual(
      latencyMs.map((x) => +x.toFixed(3)),
      [0.05, 0.5],
    );
    assert.deepEqual(
      runMs.map((x) => +x.toFixed(3)),
      [0.45, 0.1],
    );
  });
});
