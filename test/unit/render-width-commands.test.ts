import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { progressLine, raceLeftS, sweepStartLine } from '../../src/cli/sweep.js';
import { mergeResults } from '../../src/compare/merge.js';
import { compareResults } from '../../src/compare/verdict.js';
import { renderAbTable } from '../../src/report/ab.js';
import { renderCompareTable } from '../../src/report/compare.js';
import { fastestSetting, renderSweepTable } from '../../src/report/exporters/sweep.js';
import { fitPairs, fitTable } from '../../src/report/fold.js';
import { renderMerge } from '../../src/report/merge.js';
import { renderProbe } from '../../src/report/probe.js';
import { makeStyle } from '../../src/report/style.js';
import { fitLines } from '../../src/report/width.js';
import { concludeResult } from '../../src/measure/conclusions.js';
import { loadDocument, loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import { runCli } from '../helpers/cli.js';
import { overlong } from '../helpers/width.js';

// Issue 26: every command's terminal output leads with its answer, in at most 8 lines of 100 columns, and fits the
// width it is given, tables included. Each view here is rendered from documents recorded on H100s and H200s, and
// fitted as the CLI fits it.

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const MEASURED = 'docs/measurements';

function abDocument() {
  const document = loadDocument(`${MEASURED}/2026-11-23-h200-issues15-16/verdicts/ab-heavier1-7.json`);
  assert.equal(document.kind, 'ab');
  return document.ab;
}

function probeDocument(path: string) {
  const document = loadDocument(path);
  assert.equal(document.kind, 'probe');
  return document.probe;
}

// As `merge` and `report` read them: each Result's conclusions drawn again from its modes.
const ranks = ['ddp-rank0', 'ddp-rank1']
  .flatMap((name) => loadResults(`${MEASURED}/2026-11-26-h100x2-followup/${name}.json`))
  .map(concludeResult);
const [sweep] = loadResults('test/fixtures/h200-sweep-balanced.json').map(concludeResult) as [RunResult];

/** Each command's terminal text at `columns`, as its CLI writes it. */
const VIEWS: Record<string, (columns: number) => string> = {
  compare: (columns) =>
    renderCompareTable(
      compareResults(
        loadResults('test/fixtures/h100-balanced-1.json'),
        loadResults('test/fixtures/h100-balanced-heavier.json'),
      ),
      plain,
      columns,
    ),
  ab: (columns) => renderAbTable(abDocument(), plain, columns),
  'probe with bandwidth': (columns) =>
    renderProbe(probeDocument(`${MEASURED}/2026-11-23-h200x2/probe.json`), plain, columns),
  'probe with peer copies': (columns) => renderProbe(probeDocument('test/fixtures/h200x2-probe.json'), plain, columns),
  merge: (columns) => renderMerge(mergeResults(ranks), plain, columns),
  sweep: (columns) => renderSweepTable(sweep, plain, columns),
};

/** The answer: the lines before the first blank line. */
const answerOf = (text: string) => text.slice(0, text.indexOf('\n\n')).split('\n');

describe('command output fits the width', () => {
  for (const columns of [80, 100]) {
    for (const [name, view] of Object.entries(VIEWS)) {
      it(`${name} at ${columns} columns has no line wider than ${columns}`, () => {
        assert.deepEqual(overlong(fitLines(view(columns), columns), columns), []);
      });
    }
  }

  it('each answer comes first, in at most 8 lines of 100 columns', () => {
    for (const [name, view] of Object.entries(VIEWS)) {
      const answer = answerOf(fitLines(view(100), 100));
      assert.ok(answer.length >= 1 && answer.length <= 8, `${name}: ${answer.length} lines`);
    }
  });

  it('compare leads with its verdict and the modes that got slower or stayed noisy, by how much', () => {
    assert.deepEqual(answerOf(VIEWS.compare?.(100) ?? ''), [
      'slower (regression): 2 slower, 0 faster, 3 same, 1 noisy',
      'slower: kernel fma alone +9.9% (+9.9% to +10.0%), serial +2.3% (+2.2% to +2.4%)',
      'noisy: H2D alone -0.2% (-3.6% to -0.0%)',
    ]);
  });

  it('compare keeps the medians at 100 columns and drops them at 80, keeping every mode and its interval', () => {
    assert.match(
      VIEWS.compare?.(100) ?? '',
      /│ kernel fma alone +│ +2\.843 ms │ +3\.126 ms │ \+9\.9% \(\+9\.9% to \+10\.0%\) │ slower +│/,
    );
    const text = VIEWS.compare?.(80) ?? '';
    assert.match(text, /│ kernel fma alone +│ \+9\.9% \(\+9\.9% to \+10\.0%\) │ slower +│/);
    assert.doesNotMatch(text, /│ (config|baseline)/);
  });

  it('ab leads with its verdict and B against A with the interval, the overlapped mode first', () => {
    assert.deepEqual(answerOf(fitLines(VIEWS.ab?.(100) ?? '', 100)).slice(0, 4), [
      'slower (regression): 3 slower, 0 faster, 3 same, 0 noisy (B against A)',
      'overlapped 16×4 depth-first: B/A +0.95% (+0.74% to +1.04%), slower',
      'serial: B/A +0.80% (+0.42% to +1.09%), slower',
      'kernel fma alone: B/A +0.99% (+0.93% to +1.10%), slower',
    ]);
  });

  it('probe leads with what two alike H200s let overlap, their copy rates and the peer path between them', () => {
    const answer = answerOf(VIEWS['probe with bandwidth']?.(100) ?? '');
    assert.deepEqual(answer, [
      'Devices 0, 1: NVIDIA H200, sm_90: H2D and D2H can run at once, and both overlap kernels',
      'Device 0 copies: pinned H2D 55.4 GB/s, D2H 55.3 GB/s, both at once 99.6 GB/s; pageable H2D 7.5 GB/s, D2H 16.0 GB/s',
      'Device 1 copies: pinned H2D 55.4 GB/s, D2H 55.3 GB/s, both at once 99.7 GB/s; pageable H2D 9.2 GB/s, D2H 15.1 GB/s',
      'between devices: peer access every way, so chunks pass device to device without the host; fastest copy 0 ⇄ 1 at 766.0 GB/s',
    ]);
  });

  it('probe folds each device facts to name: value lines at 80 columns', () => {
    assert.match(
      VIEWS['probe with bandwidth']?.(80) ?? '',
      /^async engines: 3: H2D and D2H can run at once, and both overlap kernels$/m,
    );
  });

  it('merge leads two DDP ranks with the step, set by the slowest GPU, the scaling and the arrival skew, never a rate', () => {
    // It led with "total: 0.0 GB/s across 2 GPUs, 1.99× the fastest single GPU": a DDP step moves 128 bytes a rank.
    assert.deepEqual(answerOf(VIEWS.merge?.(100) ?? '').slice(1), [
      'step: 4.566 ms, set by the slowest GPU, vm GPU 1 (rank 1), 0.3% behind the median of 4.551 ms: every rank waits for it at each collective',
      "scaling: 2 GPUs, each computing 3.324 ms a step alone (its kernels alone): 1.46× one GPU's compute, 72.8% of linear",
      'skew: ranks reached collectives up to 0.046 ms apart; last most often: rank 0 (3 of 4)',
    ]);
    assert.doesNotMatch(VIEWS.merge?.(100) ?? '', /GB\/s/);
  });

  it('sweep leads with the best layout, the model, what to change and why it took 9.2 s', () => {
    assert.deepEqual(answerOf(VIEWS.sweep?.(100) ?? ''), [
      'sweep of balanced on NVIDIA H200',
      'best: 32 chunks × 8 streams, depth-first: 5.871 ms, 2.14× ± 0.00 over serial, efficiency 0.96',
      "model's best: this layout (32 chunks × 8 streams), 5.647 ms predicted; none predicted faster; measured best 4.0% above it",
      "change: chunks: 32, streams: 8 in balanced.yaml's pipeline (now 16 × 4: 5.983 ms, 1.9% slower)",
      '22 layouts in 9.2 s (budget 40 s): 20 dropped after 5 reps, 2 ran 142–158 reps of ≤ 5.893 ms',
    ]);
  });

  it('sweep names the order in the heat map corner when the width leaves no room for the axes', () => {
    assert.match(VIEWS.sweep?.(80) ?? '', /^│ depth-first │ 1 +│ 2 +│/m);
  });

  it('sweep over several settings first names the setting whose best was fastest', () => {
    const slower = structuredClone(sweep);
    if (slower.sweep) slower.sweep.settings = { hostMemory: 'pageable' };
    for (const mode of slower.modes) {
      mode.samplesMs = mode.samplesMs.map((ms) => ms * 1.5);
      for (const key of ['median', 'q1', 'q3'] as const) mode.stats[key] *= 1.5;
    }
    const faster = structuredClone(sweep);
    if (faster.sweep) faster.sweep.settings = { hostMemory: 'pinned' };
    assert.deepEqual(fastestSetting([slower, faster]), [
      'fastest of 2 settings: hostMemory = pinned, at 32 chunks × 8 streams, depth-first: 5.871 ms',
    ]);
    assert.deepEqual(fastestSetting([sweep]), []);
  });
});

describe('tables that fit or fold', () => {
  const layout = [
    { head: 'mode', cells: ['serial', 'overlapped 16×4 depth-first'] },
    { head: 'median', align: 'right' as const, cells: ['12.57 ms', '5.965 ms'] },
  ];

  it('draws the first layout that fits, else folds rows into heading: value lines', () => {
    assert.match(fitTable([layout], 60), /│ overlapped 16×4 depth-first │ 5\.965 ms │/);
    assert.equal(
      fitTable([layout], 30),
      'mode serial\n  median: 12.57 ms\nmode overlapped 16×4 depth-first\n  median: 5.965 ms',
    );
    assert.match(fitTable([layout, [layout[0] as (typeof layout)[number]]], 36), /^│ mode +│$/m);
  });

  it('draws facts as a table where they fit and as name: value lines where not', () => {
    assert.match(fitPairs([['memory', '139.8 GiB']], 40), /│ memory │ 139\.8 GiB │/);
    assert.equal(fitPairs([['memory', '139.8 GiB']], 10), 'memory: 139.8 GiB');
  });
});

describe('sweep progress', () => {
  it('says before it starts what the time goes to and the most the races take', () => {
    assert.equal(
      sweepStartLine(2, 22, 40),
      "sweep: each of 2 settings measures serial and the model's parts, races its 22 layouts for at most 40 s (--max-time), then traces the best; the races take at most 80 s",
    );
  });

  it('gives a log the layouts settled and the most the race can still take, never below zero', () => {
    assert.equal(
      progressLine({ setting: 0, settings: 2, done: 14, total: 22, elapsedMs: 3100 }, 40_000),
      'sweep setting 1/2: 14/22 layouts settled after 3.1 s; at most 37 s left (--max-time)',
    );
    assert.equal(raceLeftS(41_000, 40_000), 0);
  });
});

describe('compare on the command line', () => {
  it('writes no line wider than 100 columns to a pipe (it printed a 219-column rule line)', () => {
    const { stdout } = runCli([
      'compare',
      'test/fixtures/h100-balanced-1.json',
      'test/fixtures/h100-balanced-heavier.json',
    ]);
    assert.deepEqual(overlong(stdout, 100), []);
    assert.match(stdout, /^slower \(regression\): 2 slower/);
  });
});
