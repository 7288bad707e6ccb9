import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import { parseTraceDocument, parseTraceFile } from '../../src/traces/parse.js';
import { TRACE_LIMITS } from '../../src/traces/read.js';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// analyze streams a trace (src/traces/chrome/stream.ts): what it keeps must be what parsing the whole document keeps, a
// hostile file must fail with exit 2 naming the file and the event, and the limits must hold while streaming.

const fixtures = join(packageRoot(), 'test', 'fixtures', 'analyze');
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-analyze-stream-'));
const write = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
/** A Kineto kernel event: `ts` and `dur` in µs, on device 0, stream 13. */
const kernel = (ts: number, dur: number, extra: Record<string, unknown> = {}) => ({
  ph: 'X',
  cat: 'kernel',
  name: 'k',
  pid: 0,
  tid: 13,
  ts,
  dur,
  args: { device: 0, stream: 13 },
  ...extra,
});
const kineto = (events: readonly unknown[]) => JSON.stringify({ schemaVersion: 1, traceEvents: events });

/** The UsageError a streamed parse of `path` fails with, and its message. */
async function failure(path: string, limits = TRACE_LIMITS): Promise<string> {
  const error = await parseTraceFile(path, limits).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
  assert.match(
    error.message,
    new RegExp(`^Cannot (analyse|read) trace ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
  );
  return error.message;
}

describe('a streamed trace parses to what the whole document parses to', () => {
  const files = [
    ...readdirSync(fixtures).filter((n) => n.endsWith('.json')),
    ...['torch-h100', 'torch-h100x2-ddp'].flatMap((folder) =>
      readdirSync(join(fixtures, folder)).map((n) => join(folder, n)),
    ),
  ];
  it('covers the four hand-written fixtures, the six one-H100 traces and the two DDP ranks', () => {
    assert.equal(files.length, 12);
  });
  for (const name of files) {
    it(name, { timeout: 30_000 }, async () => {
      const path = join(fixtures, name);
      const raw = readFileSync(path);
      const whole = parseTraceDocument(
        path,
        JSON.parse((name.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')),
      );
      const streamed = await parseTraceFile(path);
      assert.ok(streamed.gpu.length > 0, 'the fixture has GPU work');
      assert.deepEqual(streamed, whole);
    });
  }

  it('reads the format and rank whether the top-level fields come before or after traceEvents', {
    timeout: 30_000,
  }, async () => {
    const events = [kernel(10, 5, { args: { device: 0, stream: 13, correlation: 1 } })];
    const before = write(
      'rank-first.json',
      `{"distributedInfo": {"rank": 3}, "traceEvents": ${JSON.stringify(events)}}`,
    );
    const after = write(
      'rank-last.json',
      `{"traceEvents": ${JSON.stringify(events)}, "distributedInfo": {"world_size": 4, "rank": 3}}`,
    );
    for (const path of [before, after]) {
      const trace = await parseTraceFile(path);
      assert.equal(trace.format, 'kineto');
      assert.equal(trace.rank, 3);
    }
    // A cuda-pipe trace names itself in otherData, which run --trace writes last: events before it are kept either way.
    const own = (otherFirst: boolean) => {
      const other = '"otherData": {"tool": "cuda-pipe 0.1.0"}';
      const evs = JSON.stringify([
        { ph: 'X', cat: 'kernel', name: 'k', pid: 1, tid: 10, ts: 0, dur: 4 },
        { ph: 'M', name: 'thread_name', pid: 1, tid: 10, ts: 0, args: { name: 'stream s0' } },
      ]);
      return otherFirst ? `{${other}, "traceEvents": ${evs}}` : `{"traceEvents": ${evs}, ${other}}`;
    };
    for (const [name, text] of [
      ['own-first.json', own(true)],
      ['own-last.json', own(false)],
    ] as const) {
      const trace = await parseTraceFile(write(name, text));
      assert.equal(trace.format, 'cuda-pipe');
      // The kernel on pid 1's "stream s0" track (named after it) is device 0's, 0 to 4 µs = 0.004 ms.
      assert.deepEqual(
        trace.gpu.map((e) => [e.device, e.stream, e.start, e.end]),
        [[0, 's0', 0, 0.004]],
      );
    }
  });

  it('keeps a string that reads like a container as the string, and a container where a string belongs as its kind', {
    timeout: 10_000,
  }, async () => {
    const path = write('shapes.json', kineto([kernel(10, 5, { name: 'object' }), kernel(20, 5, { name: ['array'] })]));
    const trace = await parseTraceFile(path);
    // The second kernel's name is an array: the Kineto parser reads a name only where it is a string, else "".
    assert.deepEqual(
      trace.gpu.map((e) => e.name),
      ['object', ''],
    );
  });

  it('gives the same analysis with the events in reverse order', { timeout: 30_000 }, async () => {
    const text = readFileSync(join(fixtures, 'copy-overlapped.json'), 'utf8');
    const document = JSON.parse(text) as { traceEvents: unknown[] };
    const reversed = write(
      'reversed.json',
      JSON.stringify({ ...document, traceEvents: [...document.traceEvents].reverse() }),
    );
    const options = { rates: null, toolVersion: 'test' };
    const inOrder = analyzeTraces([await parseTraceFile(join(fixtures, 'copy-overlapped.json'))], options);
    const backwards = analyzeTraces([await parseTraceFile(reversed)], options);
    assert.deepEqual(backwards.devices[0]!.steps, inOrder.devices[0]!.steps);
    assert.deepEqual(backwards.findings, inOrder.findings);
  });
});

describe('a hostile trace is refused while it streams, naming the file and what was wrong', () => {
  const good = Buffer.from(kineto([kernel(10, 5), kernel(20, 5)]));

  it('a truncated gzip', { timeout: 10_000 }, async () => {
    const zipped = gzipSync(good);
    const path = write('cut.json.gz', zipped.subarray(0, zipped.length - 12));
    assert.match(await failure(path), /its gzip data is truncated \(the file ends before the compressed stream does\)/);
  });

  it('a corrupt gzip', { timeout: 10_000 }, async () => {
    const zipped = Buffer.from(gzipSync(good));
    zipped.fill(0xff, 10, 30);
    assert.match(await failure(write('corrupt.json.gz', zipped)), /its gzip data is corrupt/);
  });

  it('JSON cut short in the middle of an event, and a syntax error that is not at the end', {
    timeout: 10_000,
  }, async () => {
    const text = good.toString('utf8');
    // Cut inside the second kernel's "dur" key.
    const cut = write('cut.json', text.slice(0, text.indexOf('"dur"', text.indexOf('"ts":20')) + 3));
    assert.match(
      await failure(cut),
      /it is not valid JSON: the text ends inside its top-level object, as a file cut short does/,
    );
    const garbage = write('garbage.json', `${text.slice(0, -1)} x}`);
    const message = await failure(garbage);
    assert.match(message, /it is not valid JSON \(at byte \d+: expected "," or "}" after a value, found "x"\)/);
    assert.doesNotMatch(message, /cut short/);
  });

  it("Python's NaN and Infinity, named", { timeout: 10_000 }, async () => {
    assert.match(
      await failure(
        write('nan.json', '{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "ts": NaN, "dur": 1}]}'),
      ),
      /NaN is not a JSON number/,
    );
    assert.match(
      await failure(write('inf.json', '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": -Infinity}]}')),
      /-Infinity is not a JSON number/,
    );
  });

  it('a missing dur, a ts that is an object, an event that is not an object: each named by its place', {
    timeout: 10_000,
  }, async () => {
    assert.match(
      await failure(write('no-dur.json', kineto([kernel(10, 5), kernel(20, 5, { dur: undefined })]))),
      /traceEvents\[1\] \(kernel "k"\) has no dur/,
    );
    assert.match(
      await failure(write('object-ts.json', kineto([kernel(10, 5), kernel(20, 5, { ts: { us: 20 } })]))),
      /traceEvents\[1\] \(kernel "k"\) has ts an object, not a finite number of µs/,
    );
    assert.match(
      await failure(write('null-event.json', kineto([kernel(10, 5), null]))),
      /traceEvents\[1\] is not an object/,
    );
    assert.match(await failure(write('array.json', '[{"ph": "X"}]')), /it is not a Chrome trace object/);
    assert.match(await failure(write('empty.json', '')), /it is empty/);
    assert.match(await failure(write('no-events.json', '{"traceEvents": {"ph": "X"}}')), /it has no traceEvents array/);
  });

  it('exits 2 from the command line, with one paragraph and no stack', { timeout: 30_000 }, () => {
    const text = good.toString('utf8');
    const path = write('cli-cut.json', text.slice(0, text.length / 2));
    const { code, stdout, stderr } = runCli(['analyze', path]);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(
      stderr,
      /Cannot analyse trace .*cli-cut\.json: it is not valid JSON: the text ends inside its top-level object/,
    );
    assert.doesNotMatch(stderr, /\n\s+at /);
  });
});

describe('a million events stream within the limits', () => {
  // 999,000 empty events (dropped as they stream: no format reads them) and 1,000 kernels, every 1,000th event:
  // about 3 MB of JSON, small enough to stream in a second or two.
  const events: string[] = [];
  for (let i = 0; i < 1_000_000; i++) events.push(i % 1000 === 999 ? JSON.stringify(kernel(i, 0.5)) : '{}');
  const text = `{"schemaVersion": 1, "traceEvents": [${events.join(',')}]}`;

  it('keeps only the 1,000 kernels, each at its own time', { timeout: 60_000 }, async () => {
    const trace = await parseTraceFile(write('million.json', text));
    assert.equal(trace.gpu.length, 1000);
    // The kernel at index 999 starts at ts 999 µs = 0.999 ms; the last, at index 999,999, at 999.999 ms.
    assert.equal(trace.gpu[0]!.start, 0.999);
    assert.equal(trace.gpu[999]!.start, 999.999);
  });

  it('names the millionth event by its index when it is the bad one', { timeout: 60_000 }, async () => {
    const bad = `${text.slice(0, text.lastIndexOf('{"ph":"X"'))}${JSON.stringify(kernel(999_999, -1))}]}`;
    assert.match(
      await failure(write('million-bad.json', bad)),
      /traceEvents\[999999\] \(kernel "k"\) has dur -1, not a duration of 0 µs or more/,
    );
  });

  it('refuses more kept events than the limit, and text past the byte limit', { timeout: 60_000 }, async () => {
    const path = write('million-capped.json', text);
    assert.match(
      await failure(path, { ...TRACE_LIMITS, maxEvents: 500 }),
      /it has more than 500 events of the kinds analyze reads \(kernels, copies, memsets, CUDA calls, profiler steps\), the most one trace may keep/,
    );
    assert.match(
      await failure(path, { ...TRACE_LIMITS, maxBytes: 1024 * 1024 }),
      /it is \d+ bytes, more than the 1 MiB a trace may be/,
    );
    const zipped = write('million.json.gz', gzipSync(text));
    assert.match(
      await failure(zipped, { ...TRACE_LIMITS, maxBytes: 1024 * 1024 }),
      /it inflates to more than the 1 MiB a trace may be/,
    );
  });
});
