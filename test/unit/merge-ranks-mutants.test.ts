import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mergeResults, rankFigures } from '../../src/compare/merge.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';

// The ranks of one launch side by side (src/compare/merge.ts), from a recorded H200 Result: each rank's headline
// figures, the slowest rank, the step of ranks that meet at collectives, and the notes on the ranks given, at the
// edges mutation testing found unpinned.

const h200 = loadResults(join('test', 'fixtures', 'h200-balanced-16-model.json'))[0] as RunResult;
const HEADLINE = h200.summary.mode;
type Mode = RunResult['modes'][number];

function rank(
  rank: number | null,
  host: string,
  device: number,
  run: Partial<RunResult['run']> = {},
  edit: (r: RunResult) => void = () => {},
): RunResult {
  const r = structuredClone(h200);
  r.run = { hostname: host, rank, localRank: device, size: null, jobId: null, launcher: null, ...run };
  r.devices = [{ ...(r.devices[0] as RunResult['devices'][number]), index: device }];
  for (const m of r.modes) m.device = device;
  edit(r);
  return r;
}

const headline = (r: RunResult) => r.modes.find((m) => m.id === HEADLINE) as Mode;
/** The headline's time (and its statistics) scaled by `factor`. */
const slower = (factor: number) => (r: RunResult) => {
  const m = headline(r);
  m.stats = { ...m.stats, median: m.stats.median * factor };
};
/** Every mode's collective bytes: the headline moves them, so the ranks meet at collectives each step. */
const inStep = (kernelMs: number[] | null) => (r: RunResult) => {
  headline(r).bytes = { ...headline(r).bytes, collective: 1e8 };
  const kernel = r.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'kernel') as Mode;
  if (kernelMs === null) r.modes = r.modes.filter((m) => m !== kernel);
  else kernel.samplesMs = kernelMs;
};

describe("one rank's headline figures", { timeout: 10_000 }, () => {
  it("names the headline's own GPU among the Result's devices, or the first where it is not among them", () => {
    const two = rank(0, 'a', 1, {}, (r) => {
      r.devices = [
        { ...(r.devices[0] as RunResult['devices'][number]), index: 0, name: 'GPU zero' },
        { ...(r.devices[0] as RunResult['devices'][number]), index: 1, name: 'GPU one' },
      ];
    });
    assert.deepEqual(rankFigures(two).device, { index: 1, name: 'GPU one' });
    const gone = rank(0, 'a', 3, {}, (r) => {
      r.devices = [{ ...(r.devices[0] as RunResult['devices'][number]), index: 2, name: 'GPU two' }];
    });
    assert.deepEqual(rankFigures(gone).device, { index: 3, name: 'GPU two' });
    const noHeadline = rank(0, 'a', 2, {}, (r) => {
      r.summary = { ...r.summary, mode: 'gone' };
    });
    assert.equal(rankFigures(noHeadline).device.index, 2);
  });

  it("takes speedup and efficiency from the headline's analysis, or the summary where it has none", () => {
    const r = rank(0, 'a', 0);
    const figures = rankFigures(r);
    assert.equal(figures.speedup, headline(r).analysis?.speedup);
    assert.equal(figures.efficiency, headline(r).analysis?.efficiency);
    const bare = rank(0, 'a', 0, {}, (x) => {
      headline(x).analysis = null;
      x.summary = { ...x.summary, speedup: 1.75, efficiency: 0.5 };
    });
    assert.deepEqual([rankFigures(bare).speedup, rankFigures(bare).efficiency], [1.75, 0.5]);
  });
});

describe('the ranks of one config', { timeout: 10_000 }, () => {
  it('puts a rank without a number before rank 0 on the same GPU, whichever came first', () => {
    for (const given of [
      [rank(0, 'a', 0), rank(null, 'a', 0)],
      [rank(null, 'a', 0), rank(0, 'a', 0)],
    ]) {
      const merged = mergeResults(given);
      assert.deepEqual(
        merged.configs[0]?.ranks.map((r) => r.rank),
        [null, 0],
      );
      // What `merge --json` writes: every Result in the tables' order.
      assert.deepEqual(
        merged.results.map((r) => r.run.rank),
        [null, 0],
      );
    }
  });

  it('keeps a Result whose resolved config is not an object apart from one whose config is empty', () => {
    const as = (resolved: unknown) => (r: RunResult) => {
      r.config = { ...r.config, resolved };
    };
    const merged = mergeResults([rank(0, 'a', 0, {}, as(null)), rank(1, 'a', 1, {}, as({}))]);
    assert.equal(merged.configs.length, 2);
    assert.equal(mergeResults([rank(0, 'a', 0, {}, as(7)), rank(1, 'a', 1, {}, as({}))]).configs.length, 2);
    assert.equal(mergeResults([rank(0, 'a', 0, {}, as(null)), rank(1, 'a', 1, {}, as(null))]).configs.length, 1);
  });

  it("sums each host's ranks and every rank, and scales by the fastest GPU", () => {
    const [merged] = mergeResults([rank(1, 'b', 0), rank(2, 'a', 1), rank(0, 'a', 0)]).configs;
    assert.ok(merged);
    const one = merged.fastest.gbps;
    assert.deepEqual(
      merged.hosts.map((h) => [h.host, h.ranks.map((r) => r.rank), h.gbps]),
      [
        ['a', [0, 2], one + one],
        ['b', [1], one],
      ],
    );
    assert.equal(merged.totalGbps, one + one + one);
    assert.equal(merged.scaling, 3);
    assert.deepEqual(merged.sharedGpus, []);
  });

  it('names a GPU found in more than one Result', () => {
    const [merged] = mergeResults([rank(0, 'a', 0), rank(1, 'a', 0)]).configs;
    assert.deepEqual(merged?.sharedGpus, ['a device 0']);
    assert.deepEqual(merged?.notes, [
      'a device 0 appears in 2 results: ranks that shared a GPU, or files of different runs; their sum overstates one GPU.',
    ]);
  });

  it('names the first of equally slow ranks the slowest, trailing the median by nothing, and the fastest', () => {
    const [merged] = mergeResults([rank(1, 'a', 1), rank(0, 'a', 0)]).configs;
    assert.equal(merged?.slowest?.figures.rank, 0);
    assert.equal(merged?.fastest.rank, 0);
    const [later] = mergeResults([rank(0, 'a', 0, {}, slower(2)), rank(1, 'a', 1)]).configs;
    assert.equal(later?.fastest.rank, 1);
    assert.equal(merged?.slowest?.trails, 0);
    const [apart] = mergeResults([rank(0, 'a', 0), rank(1, 'a', 1, {}, slower(1.5))]).configs;
    assert.equal(apart?.slowest?.figures.rank, 1);
    assert.ok(Math.abs((apart?.slowest?.trails ?? 0) - (1.5 / 1.25 - 1)) < 1e-12);
  });

  it('scales by nothing where no rank moved a byte', () => {
    const none = (r: RunResult) => {
      headline(r).bytes = { h2d: 0, d2h: 0 };
    };
    const [merged] = mergeResults([rank(0, 'a', 0, {}, none), rank(1, 'a', 1, {}, none)]).configs;
    assert.deepEqual([merged?.totalGbps, merged?.scaling], [0, 0]);
  });
});

describe('the step of ranks that meet at collectives', { timeout: 10_000 }, () => {
  it("takes the slowest rank's time and the median over the ranks of one GPU's kernels alone", () => {
    const ranks = [
      rank(0, 'a', 0, {}, inStep([3, 2])),
      rank(1, 'a', 1, {}, (r) => {
        inStep([4, 5])(r);
        slower(2)(r);
      }),
      rank(2, 'a', 2, {}, inStep([6])),
    ];
    const [merged] = mergeResults(ranks).configs;
    const slowestMs = headline(ranks[1] as RunResult).stats.median;
    // Each rank's kernels at their fastest rep: 2, 4 and 6 ms; their median 4 ms.
    assert.deepEqual(merged?.step, { slowestMs, computeMs: 4, scaling: (3 * 4) / slowestMs });
  });

  it("adds every kernel stage of the headline's device, and no other mode", () => {
    const extra = (r: RunResult) => {
      inStep([3])(r);
      const kernel = r.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'kernel') as Mode;
      r.modes.push(
        { ...kernel, id: 'kernel:second', samplesMs: [1.5, 1] },
        { ...kernel, id: 'kernel:elsewhere', device: 9, samplesMs: [100] },
        { ...kernel, id: 'kernel:untimed', samplesMs: [] },
      );
    };
    const [merged] = mergeResults([rank(0, 'a', 0, {}, extra), rank(1, 'a', 1, {}, extra)]).configs;
    assert.equal(merged?.step?.computeMs, 4);
  });

  it("is no step where a rank's headline mode is not among its modes", () => {
    const gone = (r: RunResult) => {
      r.summary = { ...r.summary, mode: 'gone' };
    };
    const [merged] = mergeResults([rank(0, 'a', 0, {}, inStep([3])), rank(1, 'a', 1, {}, gone)]).configs;
    assert.equal(merged?.step, null);
  });

  it('has no compute and no scaling where a rank measured no kernel alone', () => {
    const [merged] = mergeResults([rank(0, 'a', 0, {}, inStep([3])), rank(1, 'a', 1, {}, inStep(null))]).configs;
    assert.deepEqual([merged?.step?.computeMs, merged?.step?.scaling], [null, null]);
  });

  it('is no step where a rank moved no collective bytes, and then notes ranks sharing a host', () => {
    const [merged] = mergeResults([rank(0, 'a', 0, {}, inStep([3])), rank(1, 'a', 1)]).configs;
    assert.equal(merged?.step, null);
    assert.ok(merged?.notes.some((n) => n.startsWith('Ranks that share a host (a) measured in their own processes')));
    const [step] = mergeResults([rank(0, 'a', 0, {}, inStep([3])), rank(1, 'a', 1, {}, inStep([3]))]).configs;
    assert.deepEqual(step?.notes, []);
  });
});

describe('the notes on the ranks given', { timeout: 10_000 }, () => {
  const above = (r: RunResult) => {
    const m = headline(r);
    if (m.analysis) m.analysis = { ...m.analysis, efficiency: 1.05 };
  };

  it('gives a rank above its bound in words that follow its place, with the remedy', () => {
    const [merged] = mergeResults([rank(3, 'a', 0, {}, above), rank(null, 'b', 1, {}, above)]).configs;
    const notes = merged?.notes ?? [];
    assert.equal(notes.length, 2);
    assert.match(notes[0] ?? '', /^a device 0 \(rank 3\): the overlapped mode \(16 chunks over 4 streams/);
    assert.match(notes[1] ?? '', /^b device 1: the overlapped mode \(16 chunks over 4 streams/);
    assert.match(notes[0] ?? '', /defect in cuda-pipe's model, not a property of this config\. Compare layouts/);
    // The warning's own words once, only its first letter lowered.
    assert.equal((notes[0] ?? '').split("measured faster than the model's bound").length, 2);
  });

  it('names each rank given twice, by rank', () => {
    const twice = [rank(3, 'a', 0), rank(1, 'a', 1), rank(3, 'b', 0), rank(1, 'b', 1)];
    const [merged] = mergeResults(twice).configs;
    assert.deepEqual(
      merged?.notes.filter((n) => n.startsWith('rank ')),
      [
        'rank 1 is in 2 results: one file given twice, or files of different runs; give each rank once.',
        'rank 3 is in 2 results: one file given twice, or files of different runs; give each rank once.',
      ],
    );
  });

  it("names the launch's missing ranks, the first 8 and an ellipsis beyond", () => {
    const [many] = mergeResults([rank(0, 'a', 0, { size: 12 })]).configs;
    assert.deepEqual(many?.notes, ["1 of the launch's 12 ranks is here; missing: ranks 1, 2, 3, 4, 5, 6, 7, 8, …."]);
    const [nine] = mergeResults([rank(0, 'a', 0, { size: 9 })]).configs;
    assert.deepEqual(nine?.notes, ["1 of the launch's 9 ranks is here; missing: ranks 1, 2, 3, 4, 5, 6, 7, 8."]);
    const [one] = mergeResults([rank(0, 'a', 0, { size: 3 }), rank(2, 'b', 0, { size: 3 })]).configs;
    assert.deepEqual(one?.notes, ["2 of the launch's 3 ranks are here; missing: rank 1."]);
  });

  it('counts only numbered ranks as given, and the size of the ranks that know it', () => {
    const [unnumbered] = mergeResults([rank(null, 'a', 0, { size: 2 }), rank(0, 'b', 0, { size: 2 })]).configs;
    assert.deepEqual(unnumbered?.notes, ["1 of the launch's 2 ranks is here; missing: rank 1."]);
    const [unsized] = mergeResults([rank(0, 'a', 0), rank(1, 'b', 0, { size: 3 })]).configs;
    assert.deepEqual(unsized?.notes, ["2 of the launch's 3 ranks are here; missing: rank 2."]);
  });

  it('names no missing rank where the ranks disagree on the launch size', () => {
    const [merged] = mergeResults([rank(0, 'a', 0, { size: 4 }), rank(1, 'b', 0, { size: 8 })]).configs;
    assert.deepEqual(merged?.notes, []);
  });
});
