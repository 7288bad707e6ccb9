import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { overlapWith } from '../../src/analysis/communication.js';
import { UsageError } from '../../src/errors.js';
import { parseTraceDocument, parseTraceFile } from '../../src/traces/parse.js';
import { TRACE_LIMITS } from '../../src/traces/read.js';

// analyze's reader (src/traces/chrome/scan.ts, event.ts) reads only what the formats declare, and must read it as
// JSON.parse does; its limits count the events the rules read, not the ranges around them.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-analyze-parser-'));
let written = 0;
const write = (text: string) => {
  const path = join(dir, `t${written++}.json`);
  writeFileSync(path, text);
  return path;
};

/** A launch, its kernel, and the PyTorch op around the launch, at `ts` µs; `ops` more ops that enclose nothing. */
function step(i: number, ops: number): unknown[] {
  const ts = 1000 + i * 100;
  return [
    {
      ph: 'X',
      cat: 'cpu_op',
      name: 'aten::mm',
      pid: 1,
      tid: 7,
      ts,
      dur: 20,
      args: {
        'Input Dims': [
          [4, 4],
          [4, 4],
        ],
        'External id': i,
      },
    },
    {
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaLaunchKernel',
      pid: 1,
      tid: 7,
      ts: ts + 5,
      dur: 5,
      args: { correlation: i + 1 },
    },
    {
      ph: 'X',
      cat: 'kernel',
      name: 'gemm',
      pid: 0,
      tid: 13,
      ts: ts + 12,
      dur: 30,
      args: { device: 0, stream: 13, correlation: i + 1 },
    },
    ...Array.from({ length: ops }, (_, k) => ({
      ph: 'X',
      cat: 'cpu_op',
      name: 'aten::view',
      pid: 1,
      tid: 7,
      ts: ts + 50 + k * 0.01,
      dur: 0.005,
      args: {},
    })),
  ];
}

describe('the kept-event limit counts the events the rules read', () => {
  const text = JSON.stringify({
    schemaVersion: 1,
    traceEvents: Array.from({ length: 50 }, (_, i) => step(i, 40)).flat(),
  });

  it('reads a trace whose PyTorch ops alone pass the event limit, its launches still named by them', {
    timeout: 30_000,
  }, async () => {
    const trace = await parseTraceFile(write(text), { ...TRACE_LIMITS, maxEvents: 200 });
    assert.equal(trace.gpu.length, 50);
    assert.equal(trace.host.length, 50);
    assert.ok(trace.gpu.every((e) => e.label === 'aten::mm'));
  });

  it('refuses more ranges than their own limit, with a hint that says the limit bounds memory', {
    timeout: 30_000,
  }, async () => {
    const path = write(text);
    const error = await parseTraceFile(path, { ...TRACE_LIMITS, maxContext: 100 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof UsageError);
    assert.match(
      error.message,
      /it has more than 100 ranges that name the launches inside them \(PyTorch ops, record_function and NVTX ranges\)/,
    );
    assert.doesNotMatch(error.hint ?? '', /Pass a PyTorch profiler trace/);
    assert.match(error.hint ?? '', /bounds the memory analyze holds/);
  });

  it('refuses more events than the event limit, with the same hint, not one asking for another file', {
    timeout: 30_000,
  }, async () => {
    const error = await parseTraceFile(write(text), { ...TRACE_LIMITS, maxEvents: 20 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /it has more than 20 events of the kinds analyze reads/);
    assert.match(error.hint ?? '', /Profile fewer steps/);
  });
});

describe('the reader reads what JSON.parse reads', () => {
  const decimal = fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 0, max: 20 }))
    .map(([negative, digits, point]) => {
      const text = digits.toString();
      const at = Math.max(1, text.length - point);
      return `${negative ? '-' : ''}${point > 0 && at < text.length ? `${text.slice(0, at)}.${text.slice(at)}` : text}`;
    });
  const name = fc.string({ unit: 'binary', maxLength: 12 });
  const junk = fc.jsonValue({ maxDepth: 3 });

  it('gives the same events as parsing the whole document, for any times, names and args it does not read', {
    timeout: 60_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(decimal, decimal, name, junk), { minLength: 1, maxLength: 8 }),
        async (events) => {
          const body = events.map(
            ([ts, dur, kernel, extra]) =>
              `{"ph": "X", "cat": "kernel", "name": ${JSON.stringify(kernel)}, "pid": 0, "ts": ${ts}, "dur": ${dur.replace('-', '')},` +
              ` "extra": ${JSON.stringify(extra)}, "args": {"junk": ${JSON.stringify(extra)}, "device": 0, "stream": 7, "grid": [2, 3, 4]}}`,
          );
          const text = `{"schemaVersion": 1, "traceEvents": [${body.join(',\n')}]}`;
          const whole = parseTraceDocument('t.json', JSON.parse(text));
          const streamed = await parseTraceFile(write(text));
          assert.deepEqual({ ...streamed, file: 't.json' }, whole);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("a kernel's time beside the collectives", () => {
  it('is the sum over every piece, in order, bit for bit', { timeout: 30_000 }, () => {
    const interval = fc
      .tuple(fc.double({ min: 0, max: 1000, noNaN: true }), fc.double({ min: 0, max: 50, noNaN: true }))
      .map(([s, d]) => ({ start: s, end: s + d }));
    fc.assert(
      fc.property(
        fc.array(interval, { maxLength: 40 }),
        fc.array(interval, { minLength: 1, maxLength: 20 }),
        (comm, kernels) => {
          const pieces = [...comm].sort((a, b) => a.start - b.start);
          const besides = overlapWith(pieces);
          for (const { start, end } of kernels) {
            const every = pieces.reduce(
              (sum, p) => sum + Math.max(0, Math.min(end, p.end) - Math.max(start, p.start)),
              0,
            );
            assert.equal(besides(start, end), every);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
