import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mergeResults } from '../../src/compare/merge.js';
import { renderMerge } from '../../src/report/merge.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import { runCli } from '../helpers/cli.js';

// Four ranks of one srun over two hosts, made from a real H200 result: each rank on the GPU of its local rank, and
// its GPU time scaled as a slower GPU would make it. nodeb's GPU 1 is 12% slower than the reference.
const h200 = loadResults(join('test', 'fixtures', 'h200-balanced-16-model.json'))[0] as RunResult;

function asRank(rank: number, host: string, device: number, factor: number): RunResult {
  const r = structuredClone(h200);
  r.run = { hostname: host, rank, localRank: device, size: 4, jobId: '77', launcher: 'Slurm' };
  r.devices = [{ ...(r.devices[0] as RunResult['devices'][number]), index: device }];
  for (const m of r.modes) {
    m.device = device;
    m.samplesMs = m.samplesMs.map((x) => x * factor);
    for (const k of ['median', 'mean', 'min', 'max', 'stdev', 'q1', 'q3', 'iqr'] as const) m.stats[k] *= factor;
    // The same bound, reached less closely: the GPU is slower, the workload is not.
    if (m.analysis)
      m.analysis = {
        ...m.analysis,
        serialMs: m.analysis.serialMs * factor,
        efficiency: m.analysis.efficiency / factor,
      };
  }
  r.summary = {
    ...r.summary,
    serialMs: r.summary.serialMs * factor,
    overlappedMs: r.summary.overlappedMs * factor,
    efficiency: r.summary.efficiency / factor,
  };
  return r;
}

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);

const ranks = [
  asRank(3, 'nodeb', 1, 1.12),
  asRank(0, 'nodea', 0, 1),
  asRank(2, 'nodeb', 0, 1),
  asRank(1, 'nodea', 1, 1.02),
];

describe('merge', () => {
  it('flags the slowest GPU, nodeb GPU 1, 10.9% behind the median, and sums throughput per host and in all', () => {
    const [merged] = mergeResults(ranks).configs;
    assert.ok(merged);
    assert.deepEqual(
      merged.ranks.map((r) => `${r.host}:${r.device.index}:${r.rank}`),
      ['nodea:0:0', 'nodea:1:1', 'nodeb:0:2', 'nodeb:1:3'],
    );
    // The H200's headline mode moves 512 MiB in 6.099 ms: 88.0 GB/s.
    assert.equal(merged.fastest.gbps.toFixed(2), '88.02');
    assert.equal(merged.hosts.map((h) => h.gbps.toFixed(1)).join(' '), '174.3 166.6');
    assert.equal(merged.totalGbps.toFixed(1), '340.9');
    assert.equal(merged.scaling.toFixed(3), '3.873');
    assert.equal(merged.medianMs.toFixed(3), '6.160');
    assert.equal(merged.slowest?.figures.rank, 3);
    assert.equal(merged.slowest?.trails.toFixed(4), '0.1089');
    assert.equal(merged.notes.length, 1);
    assert.match(
      merged.notes[0] ?? '',
      /^Ranks that share a host \(nodea, nodeb\) measured in their own processes, not in step: .* `cuda-pipe run --devices all` times its GPUs together/,
    );
  });

  it('says when a GPU appears twice and when ranks of the launch are missing', () => {
    const [merged] = mergeResults([ranks[1] as RunResult, ranks[1] as RunResult]).configs;
    assert.deepEqual(merged?.notes, [
      'nodea device 0 appears in 2 results: ranks that shared a GPU, or files of different runs; their sum overstates one GPU.',
      'rank 0 is in 2 results: one file given twice, or files of different runs; give each rank once.',
      "1 of the launch's 4 ranks is here; missing: ranks 1, 2, 3.",
    ]);
    // Rank 0 twice where rank 1 of 2 is missing (two distinct files, as issue 38 tried): both said.
    const zero = { ...(ranks[1] as RunResult), run: { ...(ranks[1] as RunResult).run, size: 2 } };
    const [twice] = mergeResults([zero, zero]).configs;
    assert.deepEqual(twice?.notes.slice(1), [
      'rank 0 is in 2 results: one file given twice, or files of different runs; give each rank once.',
      "1 of the launch's 2 ranks is here; missing: rank 1.",
    ]);
    const [apart] = mergeResults(ranks.filter((r) => r.run.localRank === 0)).configs;
    assert.ok(
      apart?.notes.every((n) => !n.startsWith('Ranks that share a host')),
      'one rank a host: nothing to say',
    );
  });

  it('gives no total or scaling for two runs on one GPU, which would sum that GPU twice', () => {
    const merged = mergeResults([ranks[1] as RunResult, ranks[1] as RunResult]);
    assert.deepEqual(merged.configs[0]?.sharedGpus, ['nodea device 0']);
    const text = renderMerge(merged, plain);
    assert.match(text, /^balanced: 2 results on 1 GPU on 1 host$/m);
    assert.match(
      text,
      /^total: not summed, since nodea device 0 appears in more than one result; the fastest single GPU: nodea GPU 0 \(rank 0\), 88\.0 GB\/s$/m,
    );
    assert.doesNotMatch(text, /2\.00×|176\.0 GB\/s moved/);
  });

  it('notes an efficiency above the bound as a defect of the model, as run does, and only above 1.01', () => {
    // nodea GPU 1 made 7% faster than the reference, whose efficiency was 1.00: the bound is now above its time.
    const fast = asRank(1, 'nodea', 1, 0.935);
    const merged = mergeResults([ranks[1] as RunResult, fast]).configs[0];
    const efficiency = merged?.ranks.find((r) => r.rank === 1)?.efficiency ?? 0;
    assert.ok(efficiency > 1.01, `efficiency ${efficiency}`);
    const defect = merged?.notes.filter((n) => /defect in cuda-pipe's model/.test(n)) ?? [];
    assert.equal(defect.length, 1);
    // The clocks matched (NVML read 1980 MHz for every part and layout): so `run`'s warning says, and blames the model.
    assert.match(
      defect[0] ?? '',
      /^nodea device 1 \(rank 1\): the overlapped mode \(16 chunks over 4 streams, depth-first\) measured faster than the model's bound \(bound \d\.\d{3} ms, limited by link; efficiency 1\.0\d\): the bound is built to be a floor/,
    );
    assert.match(
      renderMerge(mergeResults([ranks[1] as RunResult, fast]), plain),
      /^note: nodea device 1 \(rank 1\): the overlapped mode .* measured faster than the model's bound/m,
    );
    assert.deepEqual(
      mergeResults(ranks).configs[0]?.notes.filter((n) => /defect/.test(n)),
      [],
    );
  });

  it('prints a table per host, and writes one array of Results that report, compare and timeline --html read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-merge-'));
    const files = ranks.map((r) => {
      const path = join(dir, `${r.run.rank}.json`);
      writeFileSync(path, JSON.stringify(r));
      return path;
    });
    const merged = join(dir, 'all.json');
    const out = runCli(['merge', ...files, '--json', merged]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^balanced: 4 GPUs on 2 hosts$/m);
    assert.match(out.stdout, /^host nodea: 174\.3 GB\/s over 2 GPUs$/m);
    assert.match(
      out.stdout,
      /^total: 340\.9 GB\/s across 4 GPUs, 3\.87× the fastest single GPU \(nodea GPU 0 \(rank 0\), 88\.0 GB\/s\)$/m,
    );
    assert.match(out.stdout, /^slowest: nodeb GPU 1 \(rank 3\), 6\.831 ms, 10\.9% behind the median of 6\.160 ms$/m);
    const saved = JSON.parse(readFileSync(merged, 'utf8')) as RunResult[];
    assert.deepEqual(
      saved.map((r) => r.run.rank),
      [0, 1, 2, 3],
    );

    const report = runCli(['report', merged]);
    assert.equal(report.code, 0, report.stderr);
    assert.equal(report.stdout.match(/cuda-pipe \S+ · balanced/g)?.length, 4);
    const compare = runCli(['compare', merged, merged]);
    assert.equal(compare.code, 0, compare.stderr);
    for (const rank of [0, 1, 2, 3]) assert.match(compare.stdout, new RegExp(`balanced rank ${rank}`));
    const html = join(dir, 'all.html');
    const timeline = runCli(['timeline', merged, '--html', html]);
    assert.equal(timeline.code, 0, timeline.stderr);
    assert.ok(existsSync(html));
  });
});
