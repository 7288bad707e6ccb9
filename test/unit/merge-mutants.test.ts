import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mergeResults, rankFigures } from '../../src/compare/merge.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';

// Edges of merge (the ranks of one launch side by side) that mutation testing (npm run mutation) found unpinned.

describe('merging ranks at their edges', () => {
  const h200 = loadResults(join('test', 'fixtures', 'h200-balanced-16-model.json'))[0] as RunResult;
  const rank = (rank: number | null, host: string, device: number, run: Partial<RunResult['run']> = {}): RunResult => {
    const r = structuredClone(h200);
    r.run = { hostname: host, rank, localRank: device, size: null, jobId: null, launcher: null, ...run };
    r.devices = [{ ...(r.devices[0] as RunResult['devices'][number]), index: device }];
    for (const m of r.modes) m.device = device;
    r.config = { ...r.config, resolved: { ...(r.config.resolved as object), device } };
    return r;
  };

  it('groups ranks by workload whatever their device, and apart when the workload differs', () => {
    assert.equal(mergeResults([rank(0, 'a', 0), rank(1, 'a', 1)]).configs.length, 1);
    const other = rank(1, 'a', 1);
    other.config = { ...other.config, resolved: { ...(other.config.resolved as object), pipeline: { chunks: 3 } } };
    assert.equal(mergeResults([rank(0, 'a', 0), other]).configs.length, 2);
  });

  it('has no slowest rank and nothing to note for one rank alone, which scales as 1', () => {
    const [one] = mergeResults([rank(null, 'a', 0)]).configs;
    assert.ok(one);
    assert.deepEqual([one.slowest, one.scaling, one.notes], [null, 1, []]);
    assert.equal(one.totalGbps, one.fastest.gbps);
  });

  it('orders ranks of one GPU by rank, one without a rank first', () => {
    const [merged] = mergeResults([rank(1, 'a', 0), rank(null, 'a', 0), rank(0, 'b', 0)]).configs;
    assert.deepEqual(
      merged?.ranks.map((r) => `${r.host}:${r.rank}`),
      ['a:null', 'a:1', 'b:0'],
    );
  });

  it("notes ranks of several jobs, and missing ranks only when fewer than the launch's size are here", () => {
    const [jobs] = mergeResults([rank(0, 'a', 0, { jobId: '7' }), rank(1, 'b', 0)]).configs;
    assert.deepEqual(jobs?.notes, ['The results come from 2 jobs (7, none), not one launch.']);
    const [all] = mergeResults([rank(0, 'a', 0, { size: 2 }), rank(1, 'b', 0, { size: 2 })]).configs;
    assert.deepEqual(all?.notes, []);
  });

  it('falls back on the summary when the headline mode is missing, and rates nothing in no time', () => {
    const r = rank(0, 'a', 0);
    const missing = { ...r, summary: { ...r.summary, mode: 'gone', overlappedMs: 2, speedup: 1.5, efficiency: 0.9 } };
    const figures = rankFigures(missing);
    assert.deepEqual(
      [figures.overlappedMs, figures.bytes, figures.gbps, figures.speedup, figures.efficiency, figures.device],
      [2, 0, 0, 1.5, 0.9, { index: 0, name: r.devices[0]?.name }],
    );
    assert.equal(rankFigures({ ...missing, summary: { ...missing.summary, overlappedMs: 0 } }).gbps, 0);
    const headline = r.modes.find((m) => m.id === r.summary.mode);
    assert.ok(headline);
    const rated = rankFigures(r);
    assert.equal(rated.bytes, headline.bytes.h2d + headline.bytes.d2h);
    assert.equal(rated.gbps, rated.bytes / headline.stats.median / 1e6);
    assert.equal(rankFigures({ ...missing, devices: [] }).device.name, 'unknown');
  });
});
