import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { PAIRED_BAND, pairedBandFor } from '../../src/compare/rule.js';
import { compareResults, runsKernels } from '../../src/compare/verdict.js';
import { renderBmf } from '../../src/report/exporters/bmf.js';
import { renderRunCsv } from '../../src/report/exporters/csv.js';
import { gabEntries } from '../../src/report/exporters/gab.js';
import {
  renderJUnit,
  renderVerdictBmf,
  renderVerdictCsv,
  renderVerdictGab,
} from '../../src/report/exporters/verdicts.js';
import { abSuite, compareSuite } from '../../src/report/verdict-rows.js';
import { loadDocument, loadResults } from '../../src/result/load.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { runCli } from '../helpers/cli.js';

// Issue 39: the gating verdict of `ab`, `compare` and the perf gate reaches CI in the formats it reads: CSV, Bencher
// Metric Format, github-action-benchmark's array and JUnit XML, each from the documents the commands write.

const AB = 'docs/measurements/2026-11-23-h200-issues15-16/verdicts/ab-heavier1-7.json';
const BASE = 'test/fixtures/h100-balanced-1.json';
const HEAVIER = 'test/fixtures/h100-balanced-heavier.json';

function abDocument() {
  const document = loadDocument(AB);
  assert.equal(document.kind, 'ab');
  return document.ab;
}

/** The test cases of a JUnit document: each one's name and what it holds (failure, skipped or passed). */
const testCases = (xml: string) =>
  [...xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*>\n {6}<(failure|skipped|system-out)/g)].map(
    ([, config, name, kind]) => ({ config, name, kind }),
  );

describe('report of an A/B document writes its verdicts for CI (it exited 2: cannot render an A/B document)', () => {
  const ab = abDocument();

  it('--junit: a test case per gated mode, failed with the change and its interval where slower', () => {
    const { code, stdout } = runCli(['report', AB, '--junit', '-']);
    assert.equal(code, 0);
    assert.match(
      stdout,
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="cuda-pipe" tests="6" failures="3" skipped="0">/,
    );
    assert.deepEqual(
      testCases(stdout).map((c) => `${c.name}: ${c.kind}`),
      [
        'serial: failure',
        'overlapped 16×4 depth-first: failure',
        'H2D alone: system-out',
        'kernel fma alone: failure',
        'D2H alone: system-out',
        'H2D + D2H at once: system-out',
      ],
    );
    assert.equal(ab.modes.filter((m) => m.gating && m.verdict === 'slower').length, 3);
    assert.match(
      stdout,
      /<failure type="slower" message="slower: B\/A \+0\.95% \(95% interval \+0\.74% to \+1\.04%\)">A 3\.720 ms \(10 reps\), B 3\.754 ms \(10 reps\)\./,
    );
    assert.match(stdout, /<property name="verdict" value="slower"\/>/);
  });

  it('--csv, --bmf and --gab: B against A for every mode, under the names run --bmf and --gab give them', () => {
    const csv = runCli(['report', AB, '--csv', '-']);
    assert.equal(csv.code, 0);
    const rows = csv.stdout.trimEnd().split('\n');
    assert.equal(
      rows[0],
      'command,config,device,mode,label,gating,a_median_ms,b_median_ms,a_n,b_n,change,change_low,change_high,band,verdict,reason',
    );
    assert.equal(rows.length, ab.modes.length + 1);
    assert.match(
      rows[2] ?? '',
      /^ab,compute-bound,0,overlapped:16x4:depth-first:chunk-per-stream,overlapped 16×4 depth-first,yes,3\.72\d*,3\.75\d*,10,10,0\.0094\d*,0\.0074\d*,0\.0104\d*,,slower,/,
    );
    const bmf = JSON.parse(runCli(['report', AB, '--bmf', '-']).stdout) as Record<
      string,
      Record<string, { value: number; lower_value?: number; upper_value?: number }>
    >;
    const overlapped = ab.modes.find((m) => m.role.kind === 'overlapped');
    assert.ok(overlapped);
    const entry = bmf[`compute-bound/${overlapped.id}`];
    assert.equal(entry?.latency?.value, overlapped.b.median * 1e6);
    assert.equal(entry?.['b-over-a']?.value, 1 + overlapped.change);
    assert.equal(entry?.['b-over-a']?.lower_value, overlapped.time.low ?? Number.NaN);
    const gab = JSON.parse(runCli(['report', AB, '--gab', '-']).stdout) as Array<{
      name: string;
      value: number;
      extra: string;
    }>;
    assert.deepEqual(gab[1], {
      name: `compute-bound/${overlapped.id}`,
      unit: 'ms',
      value: overlapped.b.median,
      range: `±${((overlapped.b.q3 - overlapped.b.q1) / 2).toPrecision(3)}`,
      extra: 'overlapped 16×4 depth-first: slower, B/A +0.95% (95% interval +0.74% to +1.04%) against A 3.720 ms',
    });
  });

  it("--csv gives each mode the band it was judged by: ab's ±1% for a mode that only copies, else ±0.5%", () => {
    // A version 2 document as ab writes it since pairedBandFor: each mode's `needed` is its own band.
    const stopping = { minPairs: 10, maxPairs: 2000, maxTimeMs: 10_000, warmup: 3 };
    const rule = { band: PAIRED_BAND, confidence: 0.9, interval: 'sign-test' as const, ...stopping };
    const needed = (m: (typeof ab.modes)[number]) => pairedBandFor(rule, runsKernels(m.role));
    const modes = ab.modes.map((m) => ({ ...m, needed: needed(m), reason: 'as judged' }));
    const rows = renderVerdictCsv([abSuite({ ...ab, version: 2, rule, verdict: 'slower', modes })]).split('\n');
    const band = (rows[0] ?? '').split(',').indexOf('band');
    assert.deepEqual(
      rows.slice(1).map((row) => `${row.split(',')[3]} ${row.split(',')[band]}`),
      ['serial 0.005', 'overlapped:16x4:depth-first:chunk-per-stream 0.005', 'h2d 0.01'].concat([
        'kernel:fma 0.005',
        'd2h 0.01',
        'bidirectional 0.01',
      ]),
    );
  });

  it('refuses --junit for a file of Results, which judge nothing by themselves, saying how to get verdicts', () => {
    const { code, stderr } = runCli(['report', BASE, '--junit', '-']);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /--junit writes verdicts, and \S+ holds Results, which judge nothing by themselves\.\nCompare them with a baseline: cuda-pipe compare/,
    );
  });
});

describe('compare writes its verdicts for CI', () => {
  it('--junit fails the two slower gated modes and skips the noisy one; --csv, --bmf and --gab hold every pair', () => {
    const junit = runCli(['compare', BASE, HEAVIER, '--junit', '-']);
    assert.equal(junit.code, 1, 'slower: exit 1 as without --junit');
    assert.match(junit.stdout, /<testsuites name="cuda-pipe" tests="6" failures="2" skipped="1">/);
    assert.deepEqual(
      testCases(junit.stdout).filter((c) => c.kind !== 'system-out'),
      [
        { config: 'balanced', name: 'serial', kind: 'failure' },
        { config: 'balanced', name: 'H2D alone', kind: 'skipped' },
        { config: 'balanced', name: 'kernel fma alone', kind: 'failure' },
      ],
    );
    const comparison = compareResults(loadResults(BASE), loadResults(HEAVIER));
    const suite = compareSuite(comparison);
    assert.equal(runCli(['compare', BASE, HEAVIER, '--csv', '-']).stdout, `${renderVerdictCsv([suite])}\n`);
    assert.equal(runCli(['compare', BASE, HEAVIER, '--bmf', '-']).stdout, `${renderVerdictBmf([suite])}\n`);
    assert.equal(runCli(['compare', BASE, HEAVIER, '--gab', '-']).stdout, `${renderVerdictGab([suite])}\n`);
    assert.equal(renderVerdictCsv([suite]).split('\n').length, comparison.pairs.length + 1);
  });

  it('escapes what a name holds in the XML: markup and control characters never reach a parser raw', () => {
    const suite = compareSuite(compareResults(loadResults(BASE), loadResults(HEAVIER)));
    const hostile = {
      ...suite,
      rows: suite.rows.map((r) => ({ ...r, config: 'a<b>&"c"\u0007', label: "it's <mode>" })),
    };
    const xml = renderJUnit([hostile]);
    assert.match(xml, /classname="a&lt;b&gt;&amp;&quot;c&quot;\\u0007" name="it&#39;s &lt;mode&gt;"/);
    assert.doesNotMatch(xml, /\u0007/);
  });
});

describe("the perf gate's verdict files", () => {
  it("joins each config's JUnit, CSV, BMF and GAB into one file of each, the counts summed", async () => {
    const { joinVerdictFiles } = (await import(
      pathToFileURL(join(process.cwd(), 'scripts', 'verdict-files.mjs')).href
    )) as {
      joinVerdictFiles: (format: string, texts: readonly string[]) => string;
    };
    const suites = [abSuite(abDocument()), compareSuite(compareResults(loadResults(BASE), loadResults(HEAVIER)))];
    const junit = joinVerdictFiles(
      'junit',
      suites.map((s) => renderJUnit([s])),
    );
    assert.equal(
      junit,
      `${renderJUnit(suites).replace('<testsuites name="cuda-pipe"', '<testsuites name="cuda-pipe perf gate"')}\n`,
    );
    assert.equal(
      joinVerdictFiles(
        'csv',
        suites.map((s) => renderVerdictCsv([s])),
      ),
      `${renderVerdictCsv(suites)}\n`,
    );
    assert.deepEqual(
      JSON.parse(
        joinVerdictFiles(
          'bmf',
          suites.map((s) => renderVerdictBmf([s])),
        ),
      ),
      JSON.parse(renderVerdictBmf(suites)),
    );
    assert.deepEqual(
      JSON.parse(
        joinVerdictFiles(
          'gab',
          suites.map((s) => renderVerdictGab([s])),
        ),
      ),
      JSON.parse(renderVerdictGab(suites)),
    );
  });

  it('--ab without a GPU prints the driver paragraph once and says the other configs were not run', {
    skip: gpuSkipReason() === null ? 'a GPU is here' : false,
  }, () => {
    const base = mkdtempSync(join(tmpdir(), 'cuda-pipe-base-'));
    const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-gate-'));
    mkdirSync(join(base, 'configs'));
    for (const name of ['balanced', 'copy-bound', 'multi-kernel', 'async-overlap']) {
      writeFileSync(join(base, 'configs', `${name}.yaml`), readFileSync(join('configs', `${name}.yaml`), 'utf8'));
    }
    const run = spawnSync(
      'bash',
      ['scripts/perf-regression', '--ab', base, '--out', out, '--junit', join(out, 'all.xml')],
      { encoding: 'utf8' },
    );
    assert.equal(run.status, 3, run.stderr);
    assert.equal(run.stderr.match(/No CUDA driver/g)?.length, 1, run.stderr);
    assert.match(run.stderr, /perf-regression: 3 more configs not run: cuda-pipe cannot run here \(above\)/);
  });
});

describe('report of a file of several Results', () => {
  it('prints a line per Result first, then the full reports (4 reports and no summary before)', () => {
    const { code, stdout } = runCli(['report', 'baselines/nvidia-h200/results.json']);
    assert.equal(code, 0);
    assert.deepEqual(stdout.split('\n').slice(0, 6), [
      "4 Results on NVIDIA H200; each one's full report follows:",
      '  balanced: 2.09× ± 0.01 over serial (12.58 ms → 6.025 ms), limited by link',
      '  copy-bound: 1.62× ± 0.01 over serial (9.927 ms → 6.146 ms), limited by link',
      '  async-overlap: 1.53× ± 0.01 over serial (0.693 ms → 0.454 ms), limited by link',
      '  multi-kernel: 1.70× ± 0.01 over serial (5.123 ms → 3.010 ms), limited by link',
      '',
    ]);
    assert.match(stdout, /\n\ncuda-pipe 0\.1\.0 · balanced · NVIDIA H200\n/);
    assert.match(runCli(['report', BASE]).stdout, /^cuda-pipe 0\.1\.0 · balanced/);
  });
});

describe("a sweep's exports for dashboards", () => {
  it('leave out the layouts dropped after a few reps, which the CSV keeps and marks clearly-slower', () => {
    const results = loadResults('test/fixtures/h200-sweep-balanced.json');
    const dropped = results.flatMap((r) => r.modes.filter((m) => m.stoppedBy === 'clearly-slower'));
    assert.equal(dropped.length, 20);
    const bmf = Object.keys(JSON.parse(renderBmf(results)) as object);
    const gab = gabEntries(results).map((e) => e.name);
    for (const mode of dropped) {
      assert.ok(!bmf.some((name) => name.endsWith(`/${mode.id}`)), mode.id);
      assert.ok(!gab.some((name) => name.endsWith(`/${mode.id}`)), mode.id);
    }
    assert.ok(bmf.some((name) => name.endsWith('/serial')));
    assert.deepEqual(bmf, gab);
    const csv = renderRunCsv(results).split('\n');
    const stoppedBy = (csv[0] ?? '').split(',').indexOf('stopped_by');
    assert.equal(csv.filter((row) => row.split(',')[stoppedBy] === 'clearly-slower').length, 20);
  });
});
