import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { AnalysisDocument } from '../../src/analysis/document.js';
import { AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// Nsight Systems SQLite exports. The fixtures in test/fixtures/analyze/nsys are built by
// scripts/analyze/make-nsys-fixtures.mjs from NVIDIA's documented schema (no real nsys export was tried: nsys cannot
// make reports on our GPU hosts). Four of them hold the programs of the Kineto fixtures beside them, times there in
// µs and here in ns; every figure below is worked out by hand from the rows the script writes.

const kineto = (name: string) => join(packageRoot(), 'test', 'fixtures', 'analyze', name);
const nsys = (name: string) => join(packageRoot(), 'test', 'fixtures', 'analyze', 'nsys', name);
const analyse = async (...files: string[]): Promise<AnalysisDocument> =>
  analyzeTraces(await Promise.all(files.map((file) => parseTraceFile(file))), { rates: null, toolVersion: 'test' });

/** Equal to within float rounding. */
function near(actual: number | null | undefined, expected: number, what: string): void {
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what}: ${actual} is not ${expected}`,
  );
}

/** A document with what names the source left out (file, format, rank): what must agree between the two readers. */
/**
 * The analysis without what names the file and its format: the file, the format, the rank, and the one sentence that
 * says how the format tells its default stream (Kineto by an assumption, nsys by the export's own null stream).
 */
function analysisOnly(document: AnalysisDocument) {
  return {
    devices: document.devices.map(({ file: _f, format: _m, rank: _r, ...rest }) => rest),
    findings: document.findings.map(({ file: _f, rank: _r, message, ...rest }) => ({
      ...rest,
      message: rest.code === 'default-stream' ? message.replace(/ \([^)]*\)/, ' (…)') : message,
    })),
  };
}

describe('analyze: the same program as a Kineto trace and as an nsys export gives the same analysis', async () => {
  for (const program of ['copy-overlapped', 'pageable-compute-stream', 'host-sync', 'ddp-nccl']) {
    it(`${program}: every step, overlap, exposed time, floor and finding agree`, { timeout: 30_000 }, async () => {
      const fromKineto = analysisOnly(await analyse(kineto(`${program}.json`)));
      const fromNsys = analysisOnly(await analyse(nsys(`${program}.sqlite`)));
      assert.ok(
        fromNsys.devices.length > 0 && fromNsys.devices[0]!.steps.length > 0,
        'the export has a device and a step',
      );
      assert.deepEqual(fromNsys, fromKineto);
    });
  }
});

describe('analyze reads an nsys export (copy-overlapped.sqlite)', async () => {
  // One NVTX range ProfilerStep#1, 1.0–2.12 ms on the host; its launches (correlation ids 1–6) made H2D 1.1–1.3 and
  // 1.3–1.5 on stream 14 (pinned, 4 MB each), kernels 1.3–1.7 and 1.7–2.0 on stream 13, D2H 1.7–1.8 and 2.0–2.1 on
  // stream 15 (pinned, 2 MB each). The step's GPU span is 1.1–2.1 = 1.0 ms.
  const trace = await parseTraceFile(nsys('copy-overlapped.sqlite'));
  const document = await analyse(nsys('copy-overlapped.sqlite'));

  it('takes kernels, copies and their fields from the documented columns, times from ns to ms', {
    timeout: 30_000,
  }, async () => {
    assert.equal(trace.format, 'nsys');
    assert.equal(trace.rank, null);
    const copies = trace.gpu.filter((e) => e.kind === 'memcpy');
    assert.deepEqual(
      copies.map((e) => [e.name, e.direction, e.hostMemory, e.bytes, e.stream]),
      [
        ['Memcpy HtoD (Pinned -> Device)', 'h2d', 'pinned', 4000000, '14'],
        ['Memcpy HtoD (Pinned -> Device)', 'h2d', 'pinned', 4000000, '14'],
        ['Memcpy DtoH (Device -> Pinned)', 'd2h', 'pinned', 2000000, '15'],
        ['Memcpy DtoH (Device -> Pinned)', 'd2h', 'pinned', 2000000, '15'],
      ],
    );
    const kernels = trace.gpu.filter((e) => e.kind === 'kernel');
    assert.deepEqual(
      kernels.map((e) => [e.name, e.start, e.end, e.device, e.communication, e.defaultStream]),
      [
        ['gemm_a', 1.3, 1.7, 0, false, false],
        ['gemm_b', 1.7, 2.0, 0, false, false],
      ],
    );
    // gemm_a was launched by cudaLaunchKernel 1.020–1.025 ms: issued when that call returned.
    near(kernels[0]!.issued, 1.025, 'gemm_a issued');
    assert.deepEqual(trace.steps, [{ name: 'ProfilerStep#1', clock: 'host', device: null, start: 1, end: 2.12 }]);
  });

  it('gives the step 1.0 ms with H2D 0.2 of 0.4 ms and D2H 0.1 of 0.2 ms under the kernels', {
    timeout: 30_000,
  }, async () => {
    const device = document.devices[0]!;
    assert.equal(device.format, 'nsys');
    near(device.stepMs, 1.0, 'step');
    near(device.overlap.h2dWithKernel, 0.5, 'h2d with kernels');
    near(device.overlap.d2hWithKernel, 0.5, 'd2h with kernels');
    near(device.overlap.copyWithKernel, 0.5, 'copies with kernels');
    assert.deepEqual(AnalysisDocumentSchema.parse(document), document);
  });
});

describe('analyze finds the patterns of an nsys export', async () => {
  it('pageable-compute-stream.sqlite: the context null stream (7) is the default stream; pageable H2D 0.5 ms', {
    timeout: 30_000,
  }, async () => {
    // Everything runs on stream 7, the context's nullStreamId: 0.5 (H2D) + 0.4 + 0.15 (kernels) + 0.1 (D2H) = 1.15 ms.
    const trace = await parseTraceFile(nsys('pageable-compute-stream.sqlite'));
    assert.ok(trace.gpu.every((e) => e.defaultStream));
    assert.deepEqual(
      trace.gpu.filter((e) => e.kind === 'memcpy').map((e) => e.hostMemory),
      ['pageable', 'pinned'],
    );
    // As from the JSON fixture it mirrors: nothing to save (no other stream, nothing around the copies to hold, the
    // pageable H2D as fast as the pinned D2H).
    assert.deepEqual((await analyse(nsys('pageable-compute-stream.sqlite'))).findings, []);
    assert.ok(trace.notes.some((n) => n.includes('TARGET_INFO_CUDA_CONTEXT_INFO.nullStreamId (stream 7)')));
  });

  it('host-sync.sqlite: a synchronize recorded both as a runtime call and by CUPTI counts once: 0.59 ms saved', {
    timeout: 30_000,
  }, async () => {
    // Five runtime calls; the two SYNCHRONIZATION rows carry correlation ids 2 and 5, the synchronizes' own. The step
    // spans the kernels its launches made, 0.2–2.72 ms; the stream synchronize 0.12–0.71 ms is followed by launches:
    // without it the host's work after it, and so the launches, come 0.59 ms sooner (as for host-sync.json).
    const trace = await parseTraceFile(nsys('host-sync.sqlite'));
    assert.deepEqual(
      trace.host.map((c) => c.kind),
      ['launch', 'sync', 'launch', 'launch', 'sync'],
    );
    const document = await analyse(nsys('host-sync.sqlite'));
    near(document.devices[0]!.stepMs, 2.52, 'step');
    assert.equal(document.findings[0]?.code, 'host-sync');
    assert.equal(Math.round(document.findings[0]!.ms * 1e6) / 1e6, 0.59, 'host-sync');
  });

  it('ddp-nccl.sqlite: NCCL kernels are communication, half hidden under compute, 0.3 ms exposed a step', {
    timeout: 30_000,
  }, async () => {
    // Step 0: all-reduce 1.4–2.2 ms beside compute 1.0–2.0: 0.6 of 0.8 hidden, 0.2 exposed; step 1: 3.5–3.9 alone,
    // 0.4 exposed. Pooled 0.6 / 1.2 = 0.5; exposed (0.2 + 0.4) / 2 = 0.3 ms a step. No finding: as from ddp-nccl.json,
    // each all-reduce already starts as early as its data allows.
    const document = await analyse(nsys('ddp-nccl.sqlite'));
    const device = document.devices[0]!;
    assert.equal(device.device, 1);
    near(device.overlap.commWithCompute, 0.5, 'comm with compute');
    near(device.exposedCommMs, 0.3, 'exposed communication');
    assert.deepEqual(document.findings, []);
  });
});

describe('analyze takes steps from NVTX ranges by a rule (nvtx-steps.sqlite)', async () => {
  // No ProfilerStep#N. Top level on thread 500: setup 0–0.1 ms once, train_step 0.1–0.4 and 0.4–0.7 ms (names through
  // textId), an "epoch" range never ended; "forward" four times, always nested, so it is not top level.
  const trace = await parseTraceFile(nsys('nvtx-steps.sqlite'));
  const document = await analyse(nsys('nvtx-steps.sqlite'));

  it('picks the most repeated top-level name, numbered in time order, and says so', { timeout: 30_000 }, async () => {
    assert.deepEqual(
      trace.steps.map((s) => [s.name, s.start, s.end, s.clock]),
      [
        ['train_step #1', 0.1, 0.4, 'host'],
        ['train_step #2', 0.4, 0.7, 'host'],
      ],
    );
    assert.ok(
      trace.notes.some((n) =>
        n.includes('the 2 NVTX ranges named "train_step", the most repeated top-level range name'),
      ),
    );
    assert.ok(trace.notes.some((n) => n.startsWith('1 NVTX range has no end')));
  });

  it("maps each step to the GPU through its launches: 0.2 ms and 0.1 ms, never another process's kernel", {
    timeout: 30_000,
  }, async () => {
    // Process 500's kernels 0.15–0.35 and 0.45–0.55 ms. Process 600 launched a kernel under the same correlation id 1
    // outside any step: device 1 gets no step of its own and is one whole-trace step, 0.06–0.66 ms.
    const [device0, device1] = document.devices;
    assert.deepEqual(
      device0!.steps.map((s) => s.name),
      ['train_step #1', 'train_step #2'],
    );
    near(device0!.steps[0]!.ms, 0.2, 'step 1');
    near(device0!.steps[1]!.ms, 0.1, 'step 2');
    assert.deepEqual(
      device1!.steps.map((s) => s.name),
      ['whole trace'],
    );
    near(device1!.steps[0]!.ms, 0.6, 'device 1');
  });
});

describe('analyze reads an export without CUDA activity (no-cuda.sqlite)', async () => {
  it('as nothing to analyse, saying why, not as an error', { timeout: 30_000 }, async () => {
    // Only NVTX_EVENTS (two "step" ranges) and StringIds: the exporter creates no GPU table for a run without CUDA.
    const document = await analyse(nsys('no-cuda.sqlite'));
    assert.deepEqual(document.devices, []);
    assert.ok(
      document.notes.some((n) =>
        n.includes('it has none of CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET'),
      ),
    );
    assert.ok(document.notes.some((n) => n.endsWith('no GPU events (kernels, copies, memsets): nothing to analyse')));
  });
});

describe('analyze tells an nsys export by its first bytes, not its name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-nsys-'));

  it('reads an export named .json as nsys, and a JSON trace named .sqlite as Kineto', { timeout: 30_000 }, async () => {
    const exportAsJson = join(dir, 'trace.json');
    copyFileSync(nsys('copy-overlapped.sqlite'), exportAsJson);
    assert.equal((await parseTraceFile(exportAsJson)).format, 'nsys');
    const jsonAsSqlite = join(dir, 'trace.sqlite');
    copyFileSync(kineto('copy-overlapped.json'), jsonAsSqlite);
    assert.equal((await parseTraceFile(jsonAsSqlite)).format, 'kineto');
  });
});

describe('analyze refuses a hostile SQLite file with exit 2, naming the file and the table', async () => {
  const cases: [string, string, RegExp][] = [
    [
      'a truncated export',
      'hostile-truncated.sqlite',
      /its SQLite data is corrupt or truncated \(database disk image is malformed\)/,
    ],
    [
      'a table without a column',
      'hostile-missing-column.sqlite',
      /table CUPTI_ACTIVITY_KIND_KERNEL has no column streamId/,
    ],
    [
      'a NULL start',
      'hostile-null-start.sqlite',
      /CUPTI_ACTIVITY_KIND_KERNEL row 2 has NULL start, where the export schema requires a value/,
    ],
    [
      'a copy that ends before it starts',
      'hostile-negative-duration.sqlite',
      /CUPTI_ACTIVITY_KIND_MEMCPY row 2 ends before it starts \(start 600000 ns, end 590000 ns\)/,
    ],
    [
      'SQLite that is not an export',
      'hostile-not-nsys.sqlite',
      /not an Nsight Systems export: it has no StringIds table, which every export has \(its tables: users\)/,
    ],
    [
      'an empty database',
      'hostile-empty.sqlite',
      /it has no StringIds table, which every export has \(it has no tables at all\)/,
    ],
  ];
  for (const [what, name, reason] of cases) {
    it(what, { timeout: 30_000 }, async () => {
      const file = nsys(name);
      await assert.rejects(
        () => parseTraceFile(file),
        (error: unknown) => {
          assert.ok(error instanceof UsageError, String(error));
          assert.equal(error.exitCode, 2);
          assert.ok(error.message.startsWith(`Cannot analyse trace ${file}: `), error.message);
          assert.match(error.message, reason);
          return true;
        },
      );
    });
  }

  it('on the command line: exit 2, one paragraph and no stack trace; a good export exits 0', {
    timeout: 120_000,
  }, async () => {
    const bad = runCli(['analyze', 'test/fixtures/analyze/nsys/hostile-null-start.sqlite']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(
      bad.stderr,
      /test\/fixtures\/analyze\/nsys\/hostile-null-start\.sqlite: CUPTI_ACTIVITY_KIND_KERNEL row 2 has NULL start/,
    );
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
    const good = runCli(['analyze', 'test/fixtures/analyze/nsys/pageable-compute-stream.sqlite']);
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /GPU 0 \(test\/fixtures\/analyze\/nsys\/pageable-compute-stream\.sqlite, nsys\), 1 step/);
    assert.match(good.stdout, /top finding: none/);
  });
});
