import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { separateRunsRule } from '../../src/compare/rule.js';
import { clockConfirmedVerdict, compareResults, runsKernels, verdict } from '../../src/compare/verdict.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/cli.js';
import { H100, makeResult, samplesAround } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-compare-'));
function save(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe('verdicts between two runs', () => {
  const samples = (median: number, noise: number, n = 30) => samplesAround(median, noise, n);

  it('calls two runs of identical distributions the same: the interval of the shift lies inside ±1%', () => {
    const judged = verdict(samples(6, 0.01), samples(6, 0.01));
    assert.equal(judged.verdict, 'same');
    assert.equal(judged.measured.interval?.estimate, 0);
  });

  it('calls a 10% shift with 1% noise slower, and the reverse faster', () => {
    const slower = verdict(samples(6, 0.01), samples(6.6, 0.01));
    assert.equal(slower.verdict, 'slower');
    assert.ok(
      Math.abs(Math.expm1(slower.measured.interval?.estimate ?? 0) - 0.1) < 1e-9,
      JSON.stringify(slower.measured),
    );
    assert.equal(verdict(samples(6.6, 0.01), samples(6, 0.01)).verdict, 'faster');
  });

  it('calls a real 0.5% shift of clean runs the same: shown to be inside the 1% band', () => {
    const judged = verdict(samples(6, 0.001), samples(6.03, 0.001));
    assert.equal(judged.verdict, 'same');
    assert.ok(
      (judged.measured.interval?.low ?? 0) > 0,
      'the interval excludes no change, and still lies inside the band',
    );
  });

  it("calls the H200's 3% heavier compute-bound kernel (29.46 → 30.37 ms, noise 0.1%) slower, and the same with a 5% band", () => {
    const [base, heavier] = [samples(29.46, 0.001), samples(30.37, 0.001)];
    assert.equal(verdict(base, heavier).verdict, 'slower');
    assert.equal(verdict(base, heavier, separateRunsRule(0.05)).verdict, 'same');
  });

  it('calls +7.1% over 30 samples with 3.4% and 2.4% noise slower: noise widens the interval, it never raises the bar', () => {
    const [base, drifted] = [samplesAround(0.07, 0.034 / 1.05), samplesAround(0.07 * 1.071, 0.024 / 1.05)];
    const judged = verdict(base, drifted);
    assert.equal(judged.verdict, 'slower');
    assert.equal(
      judged.reason,
      'B/A +7.0% (90% interval +6.0% to +8.1%): clear of no change, the estimate past the ±1.0% band',
    );
  });

  it('lets --threshold set the band: a 0.5% shift of clean runs is slower past a 0.4% band', () => {
    assert.equal(verdict(samples(6, 0.001), samples(6.03, 0.001), separateRunsRule(0.004)).verdict, 'slower');
  });

  it('calls a 10% shift of 8 samples with 20% spreads noisy, never same, and says the interval', () => {
    const judged = verdict(samples(6, 0.2, 8), samples(6.6, 0.2, 8), separateRunsRule(0.05));
    assert.deepEqual(
      [judged.verdict, judged.reason],
      ['noisy', 'B/A +10.0% (90% interval -5.2% to +27.6%): neither inside the ±5.0% band nor a change past it'],
    );
  });

  it('calls too few samples for a 90% interval noisy, and says why', () => {
    const judged = verdict([1, 1.1], [2, 2.1]);
    assert.deepEqual(
      [judged.verdict, judged.measured.interval, judged.reason],
      ['noisy', null, '2 and 2 samples: too few for a 90% interval'],
    );
  });
});

describe('verdicts confirmed in clock-normalised time', () => {
  const samples = (median: number, noise: number) => samplesAround(median, noise);

  it('calls a 5% slowdown that a 5% lower SM clock explains the same, and says the clocks explain it', () => {
    const judged = clockConfirmedVerdict(samples(10, 0.001), samples(10.5, 0.001), {
      baseline: 1980,
      candidate: 1980 / 1.05,
    });
    assert.equal(judged.verdict, 'same');
    assert.ok(Math.abs((judged.interval?.estimate ?? 0) - 0.05) < 1e-9);
    assert.equal(judged.clocks?.explains, true);
    assert.ok(Math.abs(judged.clocks?.change ?? 1) < 1e-9, JSON.stringify(judged.clocks));
    assert.match(judged.reason, /in time, same in clock-normalised time \(SM clock 1980 → 1886 MHz\)$/);
  });

  it('keeps a slowdown at an unchanged clock, and one that a higher clock hid grows in cycles', () => {
    const steady = clockConfirmedVerdict(samples(10, 0.001), samples(10.5, 0.001), { baseline: 1980, candidate: 1980 });
    assert.deepEqual([steady.verdict, steady.clocks?.explains], ['slower', false]);
    const hidden = clockConfirmedVerdict(samples(10, 0.001), samples(10.5, 0.001), { baseline: 1755, candidate: 1980 });
    assert.equal(hidden.verdict, 'slower');
    assert.ok((hidden.clocks?.change ?? 0) > 0.18, JSON.stringify(hidden.clocks));
  });

  it('calls noisy a slowdown that the clocks turn into a speed-up', () => {
    const judged = clockConfirmedVerdict(samples(10, 0.001), samples(10.5, 0.001), { baseline: 1980, candidate: 1700 });
    assert.deepEqual([judged.verdict, judged.clocks?.explains], ['noisy', false]);
  });

  it('judges in time alone without clocks, and normalises only modes that run kernels', () => {
    assert.deepEqual(clockConfirmedVerdict(samples(10, 0.001), samples(10.5, 0.001), null).clocks, null);
    assert.equal(runsKernels({ kind: 'serial' }), true);
    assert.equal(runsKernels({ kind: 'stage', stage: 'kernel', kernel: 'fma' }), true);
    assert.equal(runsKernels({ kind: 'stage', stage: 'h2d' }), false);
    assert.equal(runsKernels({ kind: 'link', copiesPerDirection: 16, streamsPerDirection: 2 }), false);
  });

  it("compareResults reads each mode's SM clock range and leaves copies in time", () => {
    const base = makeResult();
    const slowClock = makeResult({ scale: 1.1 });
    const lowered = {
      ...slowClock,
      modes: slowClock.modes.map((m) => ({ ...m, smClockMHz: { min: 1800, max: 1800 } })),
    };
    const comparison = compareResults([base], [lowered]);
    const byKind = (kind: string, stage?: string) =>
      comparison.pairs.find(
        (p) => p.role.kind === kind && (stage === undefined || (p.role.kind === 'stage' && p.role.stage === stage)),
      );
    assert.deepEqual([byKind('serial')?.verdict, byKind('serial')?.clocks?.explains], ['same', true]);
    assert.deepEqual([byKind('stage', 'h2d')?.verdict, byKind('stage', 'h2d')?.clocks], ['slower', null]);
    assert.deepEqual(comparison.rule, { band: 0.01, confidence: 0.9, interval: 'hodges-lehmann' });
    assert.equal(comparison.verdict, 'slower');
  });
});

describe('comparing result files', () => {
  it('pairs by config hash and mode and finds a uniform 10% slowdown in every mode', () => {
    const comparison = compareResults([makeResult()], [makeResult({ scale: 1.1 })]);
    assert.deepEqual(
      comparison.pairs.map((p) => `${p.role.kind}:${p.verdict}`),
      [
        'serial:slower',
        'overlapped:slower',
        'stage:slower',
        'stage:slower',
        'stage:slower',
        'kernels-chunked:slower',
        'link:slower',
        'op-cost:slower',
        'op-cost:slower',
        'op-cost:slower',
      ],
    );
    assert.deepEqual(comparison.notes, []);
    assert.deepEqual(comparison.deviceDifferences, []);
  });

  it('pairs a changed config with its baseline by name, and says the config changed', () => {
    const comparison = compareResults([makeResult()], [makeResult({ iterations: 1166 })]);
    assert.equal(comparison.pairs.length, 10);
    assert.match(comparison.notes.join('\n'), /balanced: the config changed since the baseline \(hash \w+ → \w+\)/);
  });

  it('leaves host issue-cost modes out of the pairing, so a baseline recorded without them pairs fully', () => {
    const full = makeResult();
    const older = { ...full, modes: full.modes.filter((m) => m.role.kind !== 'issue-cost') };
    const comparison = compareResults([older], [makeResult()]);
    assert.equal(comparison.pairs.length, 10);
    assert.deepEqual(comparison.unpaired, []);
  });

  it('names the device fields that differ', () => {
    const other = { ...H100, name: 'NVIDIA H200', memoryBytes: 150_000_000_000 };
    assert.deepEqual(compareResults([makeResult()], [makeResult({ device: other })]).deviceDifferences, [
      'name: NVIDIA H100 80GB HBM3 → NVIDIA H200',
      'memory: 85021163520 → 150000000000',
    ]);
  });

  it('produces results that validate against the Result schema', () => {
    assert.ok(RunResultSchema.safeParse(JSON.parse(JSON.stringify(makeResult()))).success);
  });

  it('gives no speedup uncertainty for one sample a mode, and the result still saves and reloads', () => {
    const single = makeResult({ samples: 1 });
    assert.equal(single.summary.speedupError, null);
    assert.ok(RunResultSchema.safeParse(JSON.parse(JSON.stringify(single))).success);
    const path = save('single.json', single);
    const { code, stdout } = runCli(['report', path]);
    assert.equal(code, 0);
    assert.match(stdout, /speedup over serial: 2\.12× \(one sample a mode: no uncertainty; /);
  });
});

describe('cuda-pipe compare and report', () => {
  const baseline = save('baseline.json', makeResult());
  const same = save('same.json', makeResult());
  const slower = save('slower.json', makeResult({ scale: 1.1 }));

  it('exits 0 when nothing got slower', () => {
    const { code, stdout } = runCli(['compare', baseline, same]);
    assert.equal(code, 0, stdout);
    assert.match(
      stdout,
      /0 slower, 0 faster, 6 same, 0 noisy\nmodel parts \(small ops, bare kernels\), for information only: 0 slower, 0 faster, 4 same, 0 noisy/,
    );
  });

  it('exits 1 on a slowdown and shows it in the table and the Markdown', () => {
    const md = join(dir, 'compare.md');
    const { code, stdout } = runCli(['compare', baseline, slower, '--md', md]);
    assert.equal(code, 1);
    assert.match(stdout, /│ overlapped 32×4 depth-first +│ +\+10\.0% \(\+9\.7% to \+10\.3%\) │ slower +│/);
    const json = JSON.parse(runCli(['compare', baseline, slower, '--json', '-']).stdout);
    assert.equal(json.pairs[1].verdict, 'slower');
    const mdOut = runCli(['compare', baseline, slower, '--md', '-']).stdout;
    assert.match(mdOut, /^### cuda-pipe compare: \*\*6 slower\*\*/);
    assert.match(mdOut, /\| balanced \| small launches back to back \| .* \| 🔴 slower \(info\) \|/);
    assert.match(
      mdOut,
      /\| balanced \| overlapped 32×4 depth-first \| 5\.9\d\d ms ± 1\.0% \| 6\.5\d\d ms ± 1\.0% \| \+10\.0% \(\+9\.7% to \+10\.3%\) \| 🔴 slower \|/,
    );
  });

  it("does not fail the gate on the model's parts alone", () => {
    const base = makeResult();
    const drifted = {
      ...base,
      modes: base.modes.map((m) =>
        m.role.kind === 'op-cost'
          ? {
              ...m,
              samplesMs: m.samplesMs.map((s) => s * 1.2),
              stats: {
                ...m.stats,
                median: m.stats.median * 1.2,
                mean: m.stats.mean * 1.2,
                min: m.stats.min * 1.2,
                max: m.stats.max * 1.2,
                q1: m.stats.q1 * 1.2,
                q3: m.stats.q3 * 1.2,
              },
            }
          : m,
      ),
    };
    const { code, stdout } = runCli(['compare', save('base-parts.json', base), save('drifted-parts.json', drifted)]);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /for information only: 3 slower/);
  });

  it('improvements do not fail the gate', () => {
    assert.equal(runCli(['compare', slower, baseline]).code, 0);
  });

  it('exits 2 for files that are not results, naming what is wrong', () => {
    const bogus = save('bogus.json', { schema: 'something-else' });
    const { code, stderr } = runCli(['compare', baseline, bogus]);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /bogus\.json is not a cuda-pipe result \(its "schema" is "something-else", not "cuda-pipe\/result"\)/,
    );
    assert.equal(runCli(['compare', baseline, join(dir, 'missing.json')]).code, 2);
  });

  it('exits 2 when the devices differ, unless --allow-device-change', () => {
    const h200 = save('h200.json', makeResult({ device: { ...H100, name: 'NVIDIA H200' } }));
    const refused = runCli(['compare', baseline, h200]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /different devices: name: NVIDIA H100 80GB HBM3 → NVIDIA H200/);
    const allowed = runCli(['compare', baseline, h200, '--allow-device-change']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /devices differ \(allowed\): name/);
  });

  it('report re-renders a saved result as the table or as Markdown', () => {
    const table = runCli(['report', baseline]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /speedup over serial: 2\.12× ± 0\.0\d/);
    assert.match(table.stdout, /│ overlapped +│ 5\.9\d\d ms │/);
    const md = runCli(['report', baseline, '--md', '-']);
    assert.match(md.stdout, /^### cuda-pipe · balanced on NVIDIA H100 80GB HBM3/);
    assert.match(md.stdout, /\| overlapped \| 5\.9\d\d ms \|/);
  });
});
