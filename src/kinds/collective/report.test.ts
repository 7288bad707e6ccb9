import assert from 'node:assert/strict';
import { quantile } from '../../quantile.js';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { reportContext } from '../../report/kind-sections.js';
import { commLines as linesWith } from './report.js';
import { renderRunTable } from '../../report/exporters/table.js';
import { markdownExporter } from '../../report/exporters/markdown.js';
import { renderHtml } from '../../report/html.js';
import { makeStyle } from '../../report/style.js';
import { loadResults } from '../../result/load.js';
import type { ModeResult } from '../../model/mode.js';
import type { RunResult } from '../../result/schema.js';
import type { TimelineOp } from '../../result/timeline.js';

// A recorded-like Result of a data-parallel step on two GPUs, made by hand on the recorded H200 one: 8 layers
// computing 8 ms, 1 GiB of gradients per rank in 4 buckets of 256 MiB, each all-reduce 2.5 ms alone. The op kind
// 'collective' joins the stage table on the nccl branch; here it is cast in.
/** The collective's lines with the context every report gives them. */
const commLines = (result: RunResult) => linesWith(result, reportContext(result));

const fixtures = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures');
const recorded = (name: string): RunResult => {
  const [result] = loadResults(join(fixtures, name));
  assert.ok(result, name);
  return result;
};
const base = recorded('h200-balanced-16-traced.json');
const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream, {});
const MiB = 1024 ** 2;
const GiB = 1024 * MiB;

const template = base.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'kernel')!;
const mode = (id: string, role: unknown, samplesMs: number[], extra: Partial<ModeResult> = {}): ModeResult => ({
  ...template,
  id,
  role: role as ModeResult['role'],
  device: 0,
  samplesMs,
  stats: {
    ...template.stats,
    n: samplesMs.length,
    min: Math.min(...samplesMs),
    max: Math.max(...samplesMs),
    median: samplesMs.reduce((a, b) => a + b) / samplesMs.length,
    q1: quantile(
      [...samplesMs].sort((a, b) => a - b),
      0.25,
    ),
    q3: quantile(
      [...samplesMs].sort((a, b) => a - b),
      0.75,
    ),
  },
  analysis: null,
  ...extra,
});
const HEADLINE = 'overlapped:4x2:depth-first:chunk-per-stream';
const op = (device: number, kind: string, startMs: number, endMs: number, bytes = 0): TimelineOp => ({
  mode: HEADLINE,
  device,
  stream: kind === 'collective' ? 'comm' : 's0',
  kind: kind as TimelineOp['kind'],
  chunk: null,
  buffer: null,
  kernel: kind === 'kernel' ? 'grad' : null,
  bytes,
  startMs,
  endMs,
  issuedMs: 0,
  ...(kind === 'collective' ? { collective: 'allreduce' as const } : {}),
});
const rep = (device: number, ops: TimelineOp[]) => ({
  mode: HEADLINE,
  device,
  totalMs: 12,
  issueMs: 0.1,
  streams: [],
  ops,
});
const headline = mode(
  HEADLINE,
  { kind: 'overlapped', layout: { chunks: 4, streams: 2, order: 'depth-first', topology: 'chunk-per-stream' } },
  [12.4, 12.6],
  {
    analysis: base.modes.find((m) => m.id === base.summary.mode)!.analysis,
  },
);
const alone = (calls: number, samplesMs: number[]) =>
  mode(`collective-alone-${calls}`, { kind: 'stage', stage: 'collective' }, samplesMs, {
    collective: { collective: 'allreduce', calls, bytes: GiB },
  });

function ddpResult(aloneModes: ModeResult[], traced = true): RunResult {
  return {
    ...base,
    devices: [base.devices[0]!, { ...base.devices[0]!, index: 1 }],
    pipeline: { ...base.pipeline, items: 8 },
    communicator: { library: 'nccl', version: '2.21.5', ranks: 2, localDevices: [0, 1], nvls: 'off' },
    summary: { ...base.summary, mode: HEADLINE },
    modes: [mode('kernel:grad', { kind: 'stage', stage: 'kernel', kernel: 'grad' }, [8, 8.2]), ...aloneModes, headline],
    timeline: traced
      ? {
          reps: [
            rep(0, [
              ...[0, 2, 4, 6].map((t) => op(0, 'kernel', t, t + 2)),
              ...[2, 4.5, 7, 9.5].map((t) => op(0, 'collective', t, t + 2.5, 256 * MiB)),
              op(0, 'd2h', 0, 12),
            ]),
            rep(1, [op(1, 'kernel', 0, 8), op(1, 'collective', 3, 11, GiB)]),
          ],
        }
      : null,
  };
}

describe('the communication section of a report', () => {
  it('states the CTAs the collectives were pinned to, where the config gave collective.ctas', () => {
    const pinned = ddpResult([alone(4, [10, 10.4])]);
    const communicator = { ...(pinned.communicator as NonNullable<RunResult['communicator']>), ctas: 8 };
    assert.equal(
      commLines({ ...pinned, communicator })[0],
      'communication: NCCL 2.21.5, 2 ranks, this process drives GPUs 0, 1, NVLink multicast off, 8 CTAs a collective (collective.ctas):',
    );
    assert.match(commLines({ ...pinned, communicator: { ...communicator, ctas: 1 } })[0] ?? '', /, 1 CTA a collective/);
  });

  it('gives the collective alone with its bandwidths, each device exposed communication and overlap, and the bucket model', () => {
    assert.deepEqual(commLines(ddpResult([alone(4, [10, 10.4])])), [
      'communication: NCCL 2.21.5, 2 ranks, this process drives GPUs 0, 1, NVLink multicast off:',
      // 256 MiB a call in 10.2 / 4 ms: 105.3 GB/s, and on two ranks the bus factor 2(n−1)/n is 1.
      '  all-reduce alone: 4 calls of 256 MiB per rank, 2.550 ms each (median rep 10.20 ms): algbw 105.3 GB/s, busbw 105.3 GB/s',
      // GPU 0 communicates 2..12 and computes 0..8 (its D2H is no computation); GPU 1 communicates 3..11, computes
      // 0..8.
      '  overlapped on GPU 0, traced rep: GPU 0 10.00 ms communicating, 4.000 ms exposed, 60.0% overlapped; ' +
        'GPU 1 8.000 ms communicating, 3.000 ms exposed, 62.5% overlapped; all 7.000 ms exposed, 61.1% overlapped',
      // The fastest rep of each: compute 8 ms, 4 all-reduces of 2.5 ms; max(8 + 2.5, 2 + 4 × 2.5) = 12 ms.
      "  bucket model: 8 layers computing 8.000 ms (kernels alone), 4 buckets of 256 MiB, all-reduces 10.00 ms at the collective alone's rate: " +
        'bound 12.00 ms (limited by the all-reduces back to back after the first bucket) against 12.50 ms measured, efficiency 0.96',
      // The step's 12.4 and 12.6 ms timed against the 8 ms of compute alone (its fastest rep, 8 and 8.2 ms).
      "  beyond the compute alone: 4.500 ms a step (36.0%), the median of 2 timed reps (middle half 4.450 ms to 4.550 ms): the communication the compute did not hide, and the compute's slowdown beside it",
      '  best bucket size: the all-reduce alone at one message size cannot tell its per-call cost from its bandwidth; sweep the bucket size to find it',
    ]);
  });

  it('fits the per-call cost where the collective alone ran at two message sizes, and leaves the best to the best-layout line', () => {
    // 0.5 ms a call and 256 MiB in 2 ms more: 64 MiB calls take 1 ms, so 16 of them 16 ms.
    const lines = commLines(ddpResult([alone(4, [10, 10.4]), alone(16, [16, 16.5])]));
    assert.equal(
      lines.at(-1),
      '  all-reduce α 500.0 µs a call, 134.2 GB/s bus bandwidth, fitted over 2 message sizes: the best layout above predicts the bucket counts not measured with it',
    );
  });

  it('counts elements, not layers, where the config gave no items', () => {
    const lines = commLines({ ...ddpResult([alone(4, [10, 10.4])]), pipeline: { ...base.pipeline, elements: 8 } });
    assert.match(lines[3] ?? '', /^ {2}bucket model: 8 elements computing 8\.000 ms/);
  });

  it('says what is missing: no collective alone, no traced rep', () => {
    assert.deepEqual(commLines(ddpResult([], false)).slice(1), [
      '  the collective alone: not measured',
      '  exposed communication: no traced rep with collectives (run without --no-tracing to see it)',
    ]);
  });

  it('appears in the table, the Markdown and the HTML after the mode table', () => {
    const result = ddpResult([alone(4, [10, 10.4])]);
    const table = renderRunTable(result, plain);
    assert.ok(table.indexOf('communication: NCCL 2.21.5') > table.indexOf('speedup over serial'));
    assert.match(table, /\n {2}all-reduce alone: 4 calls/);
    assert.match(
      markdownExporter.render([result], plain),
      /\n- communication: NCCL 2\.21\.5[^\n]*\n {2}- all-reduce alone/,
    );
    // The pictures draw collective ops once the stage table has the kind (the nccl branch); here the timeline stays
    // out.
    assert.match(renderHtml({ ...result, timeline: null }), /<section id="communication">[\s\S]*all-reduce alone/);
  });

  it('stays out of every recorded Result: none has a communicator', () => {
    const files = readdirSync(fixtures).filter(
      (f) =>
        f.endsWith('.json') &&
        (JSON.parse(readFileSync(join(fixtures, f), 'utf8')) as { schema?: string }).schema !== 'cuda-pipe/probe',
    );
    assert.ok(files.length >= 10);
    for (const file of files)
      for (const result of loadResults(join(fixtures, file))) assert.deepEqual(commLines(result), [], file);
  });
});
