import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { programNote, programShape } from '../../src/analysis/launch.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// Several traces are the ranks of one launch; two runs are --ab's, a side each, and a side may be a launch's ranks.
// Recorded PyTorch traces (two H100s, docs/measurements/2026-11-26-h100x2-analyze/) and traces built to be wrong.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-launch-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const root = packageRoot();
const torch = (name: string) => join(root, 'test', 'fixtures', 'analyze', 'torch-h100', `${name}.pt.trace.json.gz`);
const ddp = (overlap: 'overlap' | 'no-overlap', rank: number) =>
  join(
    root,
    'docs',
    'measurements',
    '2026-11-26-h100x2-analyze',
    'host',
    'ddp',
    overlap,
    `rank${rank}.pt.trace.json.gz`,
  );
const escaped = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A Kineto trace of `steps` 1 ms GPU steps from `startUs` on, each one kernel, on GPU `device`, of rank `rank`. */
function kineto(
  name: string,
  options: { rank: number | null; device: number; startUs: number; steps?: number; kernel?: string; baseNs?: number },
): string {
  const events = Array.from({ length: options.steps ?? 6 }, (_, i) => {
    const ts = options.startUs + i * 1100;
    return [
      {
        ph: 'X',
        cat: 'gpu_user_annotation',
        name: `ProfilerStep#${i}`,
        pid: options.device,
        tid: 7,
        ts,
        dur: 1000,
        args: { device: options.device },
      },
      {
        ph: 'X',
        cat: 'kernel',
        name: options.kernel ?? 'gemm',
        pid: options.device,
        tid: 13,
        ts,
        dur: 1000,
        args: { device: options.device, stream: 13 },
      },
    ];
  }).flat();
  const path = join(dir, name);
  const rank = options.rank === null ? {} : { distributedInfo: { backend: 'nccl', rank: options.rank, world_size: 2 } };
  const base = options.baseNs === undefined ? {} : { baseTimeNanoseconds: options.baseNs };
  writeFileSync(path, JSON.stringify({ schemaVersion: 1, ...base, ...rank, traceEvents: events }));
  return path;
}

describe('analyze reads several traces as the ranks of one launch, and refuses what cannot be one', () => {
  it('two one-GPU traces that name no rank are two runs: refused (exit 2), pointing at --ab', () => {
    const { code, stdout, stderr } = runCli(['analyze', torch('serial'), torch('sync')]);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(
      stderr,
      new RegExp(
        `^cuda-pipe: ${escaped(torch('serial'))} and ${escaped(torch('sync'))} both ran on GPU 0, and neither names its rank: `,
      ),
    );
    assert.match(
      stderr,
      /these look like two runs of a program\.\nTo compare two runs of a program, before and after a change: cuda-pipe analyze --ab A\.json B\.json/,
    );
  });

  it('the same rank twice, from two files, is refused naming both', () => {
    const copy = join(dir, 'rank0-copy.pt.trace.json.gz');
    copyFileSync(ddp('overlap', 0), copy);
    const { code, stderr } = runCli(['analyze', ddp('overlap', 0), copy]);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      new RegExp(
        `^cuda-pipe: ${escaped(ddp('overlap', 0))} and ${escaped(copy)} are both rank 0 \\(their distributedInfo\\.rank\\)`,
      ),
    );
  });

  it('one file twice, under one name or through a link, is refused before it is read (analyze X X)', () => {
    const link = join(dir, 'link.pt.trace.json.gz');
    symlinkSync(ddp('overlap', 1), link);
    const twice = runCli(['analyze', ddp('overlap', 1), ddp('overlap', 1)]);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /rank1\.pt\.trace\.json\.gz is given twice: each trace is read once/);
    const linked = runCli(['analyze', ddp('overlap', 1), link]);
    assert.match(linked.stderr, new RegExp(`${escaped(ddp('overlap', 1))} and ${escaped(link)} are one file:`));
    // As A and B of --ab, where one device had two verdicts.
    const ab = runCli(['analyze', '--ab', ddp('overlap', 1), ddp('overlap', 1)]);
    assert.equal(ab.code, 2);
    assert.match(ab.stderr, /is given twice \(in A\) and \(in B\): /);
  });

  it('ranks 6.6 s apart do not overlap in time: refused with the gap', () => {
    const zero = kineto('apart0.json', { rank: 0, device: 0, startUs: 1_000_000 });
    const one = kineto('apart1.json', { rank: 1, device: 1, startUs: 1_000_000 + 6_600_000 + 6 * 1100 });
    const { code, stderr } = runCli(['analyze', one, zero]);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      new RegExp(
        `^cuda-pipe: ${escaped(zero)} ends 6\\.6 s before ${escaped(one)} starts: the traces are read as the ranks of one launch, which run at the same time`,
      ),
    );
    // Overlapping ranks of one launch on two GPUs read as before.
    const overlapping = kineto('with0.json', { rank: 1, device: 1, startUs: 1_000_500 });
    assert.equal(runCli(['analyze', zero, overlapping]).code, 0);
  });

  it("counts each Kineto trace's times from its baseTimeNanoseconds: equal times on bases 10 s apart do not overlap", () => {
    const zero = kineto('base0.json', { rank: 0, device: 0, startUs: 1_000_000, baseNs: 1_790_857_026_000_000_000 });
    const later = kineto('base1.json', { rank: 1, device: 1, startUs: 1_000_000, baseNs: 1_790_857_036_000_000_000 });
    const { code, stderr } = runCli(['analyze', zero, later]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /ends [\d.]+ s before .*base1\.json starts/);
    const same = kineto('base1-same.json', {
      rank: 1,
      device: 1,
      startUs: 1_000_000,
      baseNs: 1_790_857_026_000_000_000,
    });
    assert.equal(runCli(['analyze', zero, same]).code, 0);
  });

  it('the two recorded DDP ranks read together, as before', () => {
    const { code, stdout, stderr } = runCli(['analyze', ddp('overlap', 1), ddp('overlap', 0), '--json', '-']);
    assert.equal(code, 0, stderr);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    assert.deepEqual(
      document.devices.map((d) => [d.rank, d.device]),
      [
        [0, 0],
        [1, 1],
      ],
    );
    assert.equal(document.collectives?.kind, 'measured');
  });
});

describe('analyze --ab takes a launch a side, rank with rank', () => {
  it('A0 A1 -- B0 B1: each rank of B judged against the same rank of A, whatever order they are given in', () => {
    // Every argument after -- is a trace: options come before it.
    const { code, stdout, stderr } = runCli([
      'analyze',
      '--json',
      '-',
      '--ab',
      ddp('no-overlap', 1),
      ddp('no-overlap', 0),
      '--',
      ddp('overlap', 0),
      ddp('overlap', 1),
    ]);
    assert.ok(code === 0 || code === 1, stderr);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    assert.deepEqual(
      document.verdicts?.map((v) => [v.rank, v.baselineFile, v.candidateFile]),
      [
        [0, ddp('no-overlap', 0), ddp('overlap', 0)],
        [1, ddp('no-overlap', 1), ddp('overlap', 1)],
      ],
    );
    // Each side's collective skew among its own ranks, never A's against B's.
    assert.equal(document.collectives, undefined);
    assert.equal(document.notes.filter((n) => /^[AB]'s collectives: arrival skew [\d.]+ ms median/.test(n)).length, 2);
    assert.ok(
      !document.notes.some((n) => n.startsWith('A and B do not look like one program')),
      'one program with and without overlap',
    );
    assert.doesNotMatch(stderr, /warning/);
  });

  it('refuses sides of different rank counts, a side with one trace only, and no -- among more than two', () => {
    const uneven = runCli(['analyze', '--ab', ddp('no-overlap', 0), ddp('no-overlap', 1), '--', ddp('overlap', 0)]);
    assert.equal(uneven.code, 2);
    assert.match(uneven.stderr, /--ab pairs rank with rank: A has 2 traces \(.*\) and B 1 \(.*\)\./);
    const none = runCli([
      'analyze',
      '--ab',
      ddp('no-overlap', 0),
      ddp('no-overlap', 1),
      ddp('overlap', 0),
      ddp('overlap', 1),
    ]);
    assert.match(none.stderr, /--ab judges two sides, A and B: 4 traces without -- between A's and B's\./);
    const empty = runCli(['analyze', '--ab', ddp('no-overlap', 0), '--']);
    assert.equal(empty.code, 2);
  });

  it('warns, in the terminal and in the JSON notes, when A and B are not one program (DDP against a one-GPU program)', () => {
    const { stdout, stderr } = runCli(['analyze', '--ab', ddp('overlap', 0), torch('serial'), '--json', '-']);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    const note = document.notes[0] ?? '';
    assert.match(
      note,
      /^A and B do not look like one program: they share \d+% of their kernel names \(\d+ of \d+; a change to one program keeps most\)/,
    );
    assert.ok(stderr.includes(`cuda-pipe: warning: ${note}`), stderr);
  });

  it("takes the kernel names' share and the ops a step holds as the program's shape", () => {
    const shape = (kernels: string[], ops: number, steps: number) => ({
      kernels: new Set(kernels),
      opsPerStep: ops / steps,
    });
    assert.equal(programNote(shape(['a', 'b', 'c'], 300, 10), shape(['a', 'b', 'd'], 320, 10)), null);
    assert.match(
      programNote(shape(['a', 'b'], 300, 10), shape(['c', 'd'], 300, 10)) ?? '',
      /share 0% of their kernel names \(0 of 4/,
    );
    assert.match(
      programNote(shape(['a'], 300, 10), shape(['a'], 900, 10)) ?? '',
      /a step of A holds 30 GPU ops and one of B 90 \(3\.0 times as many\)/,
    );
  });

  it('reads the shape of recorded traces: the same kernels in the DDP ranks with and without overlap', async () => {
    const [a, b] = await Promise.all([parseTraceFile(ddp('overlap', 0)), parseTraceFile(ddp('no-overlap', 0))]);
    const [sa, sb] = [programShape([a!], 10), programShape([b!], 10)];
    assert.ok(sa.kernels.size > 3);
    assert.equal(programNote(sa, sb), null);
  });
});
