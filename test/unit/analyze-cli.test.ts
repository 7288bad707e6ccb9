import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { TRACE_LIMITS } from '../../src/traces/read.js';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';
import { overlong } from '../helpers/width.js';

// `cuda-pipe analyze` end to end: hostile traces exit 2 with one paragraph naming the file and what was wrong, the
// document on --json, its schema on `schema --analysis`, and text that fits 100 columns.

const fixture = (name: string) => join(packageRoot(), 'test', 'fixtures', 'analyze', name);
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-analyze-'));
const write = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const kernelAt = (extra: Record<string, unknown>) =>
  JSON.stringify({
    schemaVersion: 1,
    traceEvents: [
      { ph: 'X', cat: 'kernel', name: 'k', pid: 0, ts: 10, dur: 5, args: { device: 0, stream: 13 }, ...extra },
    ],
  });

describe('analyze refuses a hostile trace with exit 2, naming the file and what was wrong', () => {
  const whole = gzipSync(readFileSync(fixture('copy-overlapped.json')));
  const cases: [string, string, RegExp][] = [
    [
      'truncated gzip',
      write('cut.pt.trace.json.gz', whole.subarray(0, Math.floor(whole.length / 2))),
      /gzip data is truncated/,
    ],
    ['invalid JSON', write('bad.json', '{"traceEvents": [ {"ph": "X", '), /it is not valid JSON/],
    [
      'a NaN time',
      write('nan.json', '{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "ts": NaN, "dur": 1}]}'),
      /NaN is not a JSON number/,
    ],
    [
      'a negative duration',
      write('negative.json', kernelAt({ dur: -5 })),
      /traceEvents\[0\] \(kernel "k"\) has dur -5, not a duration of 0 µs or more/,
    ],
    ['a missing ts', write('no-ts.json', kernelAt({ ts: undefined })), /traceEvents\[0\] \(kernel "k"\) has no ts/],
    ['a string time', write('string-ts.json', kernelAt({ ts: '10' })), /has ts "10", not a finite number of µs/],
    ['a kernel without a stream', write('no-stream.json', kernelAt({ args: { device: 0 } })), /has no args\.stream/],
    ['no traceEvents', write('empty.json', '{}'), /it has no traceEvents array/],
    [
      'some other JSON',
      write('other.json', '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}]}'),
      /neither a PyTorch profiler \(Kineto\) trace nor a cuda-pipe trace/,
    ],
    ['a folder', dir, /is a folder, not a file/],
  ];
  for (const [what, path, reason] of cases) {
    it(what, () => {
      const { code, stdout, stderr } = runCli(['analyze', path]);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, new RegExp(`Cannot (analyse|read) trace ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
      assert.match(stderr, reason);
    });
  }

  it('a gzip that inflates past the limit, before it takes the memory', async () => {
    const path = write('bomb.json.gz', gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20)));
    await assert.rejects(
      parseTraceFile(path, { ...TRACE_LIMITS, maxBytes: 1024 * 1024 }),
      (error: unknown) =>
        error instanceof UsageError && /inflates to more than the 1 MiB a trace may be/.test(error.message),
    );
  });
});

describe('analyze on a gzip trace', () => {
  it('reads a .pt.trace.json.gz as the plain file, writes the document with --json - and the text on stderr', () => {
    const path = write('rank0.pt.trace.json.gz', gzipSync(readFileSync(fixture('copy-overlapped.json'))));
    const { code, stdout, stderr } = runCli(['analyze', path, '--json', '-']);
    assert.equal(code, 0, stderr);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    assert.equal(document.devices[0]!.overlap.copyWithKernel, 0.5);
    assert.match(stderr, /^rank 0 · GPU 0 \(.*rank0\.pt\.trace\.json\.gz, kineto\), 1 step$/m);
  });

  it('prints the answer first and fits 100 columns with every fixture at once, and writes --md, --html and --trace', () => {
    // Read as the ranks of one launch, so each names a rank of its own (two of them name none, on GPU 0 as another).
    const ranked = (name: string, rank: number) => {
      const trace = JSON.parse(readFileSync(fixture(name), 'utf8')) as Record<string, unknown>;
      return write(
        `rank${rank}-${name}`,
        JSON.stringify({ ...trace, distributedInfo: { backend: 'nccl', rank, world_size: 4 } }),
      );
    };
    const paths = [
      fixture('copy-overlapped.json'),
      ranked('pageable-compute-stream.json', 2),
      fixture('ddp-nccl.json'),
      ranked('host-sync.json', 3),
    ];
    const out = (name: string) => join(dir, name);
    const { code, stdout, stderr } = runCli([
      'analyze',
      ...paths,
      '--md',
      out('a.md'),
      '--html',
      out('a.html'),
      '--trace',
      out('a.trace.json'),
    ]);
    assert.equal(code, 0, stderr);
    assert.match(readFileSync(out('a.md'), 'utf8'), /^### cuda-pipe analyze: 4 traces, 4 devices$/m);
    assert.match(readFileSync(out('a.html'), 'utf8'), /^<!doctype html>/);
    // Four devices' processes, each with a steps track, and ddp-nccl's two NCCL kernels.
    const trace = JSON.parse(readFileSync(out('a.trace.json'), 'utf8')) as {
      traceEvents: { ph: string; cat?: string; name: string }[];
    };
    assert.equal(
      trace.traceEvents.filter(
        (e) => e.ph === 'M' && e.name === 'thread_name' && (e as { args?: { name?: string } }).args?.name === 'steps',
      ).length,
      4,
    );
    assert.equal(trace.traceEvents.filter((e) => e.cat === 'communication').length, 2);
    assert.deepEqual(overlong(stdout, 100), []);
    assert.match(stdout.split('\n')[2] ?? '', /^rank 0 · GPU 0 /);
    // ddp-nccl's all-reduces already start as early as their data allows, so its exposed communication is no finding.
    assert.match(stdout, /exposed: copies 0\.00 µs · communication 0\.300 ms/);
    assert.match(stdout, /step 1\.000 ms median · floor 0\.700 ms \(kernels\) · efficiency 70\.0%/);
  });
});

describe('schema --analysis', () => {
  it("prints the analysis document's JSON Schema", () => {
    const { code, stdout } = runCli(['schema', '--analysis']);
    assert.equal(code, 0);
    const schema = JSON.parse(stdout) as { title: string; required: string[] };
    assert.equal(schema.title, 'cuda-pipe analysis, version 2');
    assert.deepEqual(schema.required, ['schema', 'version', 'tool', 'devices', 'findings', 'notes']);
  });
});

describe('analyze --help', () => {
  it('says how far it was validated', () => {
    const { code, stdout } = runCli(['analyze', '--help']);
    assert.equal(code, 0);
    assert.match(stdout, /Validated on one host's traces \(two H100s\); no real nsys export was tried/);
  });
});

describe('analyze A B --ab', () => {
  /** A trace of GPU steps of the given lengths (ms), each one kernel filling it, one after the other. */
  function stepsTrace(name: string, lengthsMs: readonly number[]): string {
    let ts = 0;
    const events = lengthsMs.flatMap((ms, i) => {
      const dur = ms * 1000;
      const step = {
        ph: 'X',
        cat: 'gpu_user_annotation',
        name: `ProfilerStep#${i}`,
        pid: 0,
        tid: 7,
        ts,
        dur,
        args: { device: 0 },
      };
      const kernel = { ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: 13, ts, dur, args: { device: 0, stream: 13 } };
      ts += dur + 100;
      return [step, kernel];
    });
    return write(name, JSON.stringify({ schemaVersion: 1, traceEvents: events }));
  }
  const before = stepsTrace('before.json', [10, 10.1, 9.9, 10, 10.05, 9.95, 10, 10]);

  it('B 20% slower in every step is slower, and exits 1 as compare does', () => {
    const after = stepsTrace('after-slower.json', [12, 12.12, 11.88, 12, 12.06, 11.94, 12, 12]);
    const { code, stdout } = runCli(['analyze', before, after, '--ab', '--json', '-']);
    assert.equal(code, 1);
    const [v] = AnalysisDocumentSchema.parse(JSON.parse(stdout)).verdicts!;
    assert.equal(v!.verdict, 'slower');
    assert.ok(Math.abs(v!.change - 0.2) < 1e-9, `${v!.change}`);
    assert.deepEqual(v!.steps, [8, 8]);
  });

  it('B with the same steps in another order is the same, exit 0, the verdict first in the text', () => {
    const after = stepsTrace('after-same.json', [10, 10, 10.05, 9.95, 10.1, 9.9, 10, 10]);
    const { code, stdout } = runCli(['analyze', before, after, '--ab']);
    assert.equal(code, 0);
    assert.match(
      stdout.split('\n')[3] ?? '',
      /^ {2}GPU 0: 10\.0+ ms → 10\.0+ ms median step, \+0\.0%: same \(8 and 8 steps\)$/,
    );
  });

  it('--ab with one trace is a usage error', () => {
    const { code, stderr } = runCli(['analyze', before, '--ab']);
    assert.equal(code, 2);
    assert.match(stderr, /--ab judges two sides, A and B: 1 trace without -- between A's and B's\./);
  });
});
