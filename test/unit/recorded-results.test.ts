import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compareResults } from '../../src/compare/verdict.js';
import { concludeResult } from '../../src/measure/conclusions.js';
import { loadResults } from '../../src/result/load.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { runResultV1Schema } from '../../src/result/v1.js';
import { markdownExporter } from '../../src/report/exporters/markdown.js';
import { tableExporter } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import { DEFAULT_COLUMNS, fitLines } from '../../src/report/width.js';
import { runCli } from '../helpers/cli.js';

// Results recorded on the H100 host from the bundle (version 1 files): two back-to-back runs of
// configs/balanced.yaml, and one with the FMA loop's iterations raised 10% (1060 → 1166).
const fixture = (name: string) => join('test', 'fixtures', name);
const [first] = loadResults(fixture('h100-balanced-1.json'));
const raw = (name: string) => JSON.parse(readFileSync(fixture(name), 'utf8')) as unknown;

describe('recorded H100 results (version 1)', () => {
  it('are version 1 files on disk', () => {
    assert.ok(runResultV1Schema().safeParse(raw('h100-balanced-1.json')).success);
  });

  it('load by migrating to the current version, keeping every figure', () => {
    assert.ok(first);
    assert.ok(RunResultSchema.safeParse(first).success);
    assert.equal(first.version, 2);
    const old = runResultV1Schema().parse(raw('h100-balanced-1.json'));
    assert.deepEqual(first.devices, [old.environment.device]);
    assert.equal(first.run.hostname, old.environment.hostname);
    assert.deepEqual(
      first.modes.map((m) => m.stats.median),
      old.modes.map((m) => m.stats.median),
    );
    assert.deepEqual(
      first.modes.map((m) => m.role),
      [
        { kind: 'serial' },
        { kind: 'overlapped', layout: { chunks: 16, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' } },
        { kind: 'stage', stage: 'h2d' },
        { kind: 'stage', stage: 'kernel', kernel: 'fma' },
        { kind: 'stage', stage: 'd2h' },
        { kind: 'link', copiesPerDirection: 16, streamsPerDirection: 2 },
      ],
    );
    const overlapped = first.modes[1];
    assert.equal(overlapped?.analysis?.speedup, old.summary.speedup);
    assert.equal(overlapped?.analysis?.efficiency, old.summary.efficiency);
    assert.equal(overlapped?.analysis?.bound.ms, old.bound.ms);
    assert.equal(first.summary.mode, overlapped?.id);
    assert.equal(first.summary.speedupError, old.summary.speedupError);
    assert.equal(first.timeline, null);
    assert.match(first.notes.at(-1) ?? '', /Migrated from a version 1 result/);
  });

  it('compare two back-to-back runs as the same where the interval shows it, else noisy, never slower or faster', () => {
    const comparison = compareResults(
      loadResults(fixture('h100-balanced-1.json')),
      loadResults(fixture('h100-balanced-2.json')),
    );
    // The overlapped mode's interval reaches -1.0% and H2D's -4.0%: past the ±1% band, so neither is shown the same.
    assert.deepEqual(
      comparison.pairs.map((p) => `${p.mode.split(':')[0]} ${p.verdict}`),
      ['serial same', 'overlapped noisy', 'h2d noisy', 'kernel same', 'd2h same', 'bidirectional same'],
    );
    assert.equal(comparison.verdict, 'noisy');
  });

  it('find the 10% heavier kernel slower, and exit 1', () => {
    const comparison = compareResults(
      loadResults(fixture('h100-balanced-1.json')),
      loadResults(fixture('h100-balanced-heavier.json')),
    );
    const kernel = comparison.pairs.find((p) => p.role.kind === 'stage' && p.role.stage === 'kernel');
    assert.equal(kernel?.verdict, 'slower');
    assert.ok(kernel && kernel.change > 0.08 && kernel.change < 0.12);
    assert.equal(runCli(['compare', fixture('h100-balanced-1.json'), fixture('h100-balanced-heavier.json')]).code, 1);
  });

  it('serve as the stored perf-regression baseline for the H100, every config migrating', () => {
    const baseline = loadResults(join('baselines', 'nvidia-h100-80gb-hbm3', 'results.json'));
    assert.deepEqual(
      baseline.map((r) => r.config.name),
      ['balanced', 'copy-bound', 'async-overlap', 'multi-kernel'],
    );
    const asyncOverlap = baseline[2];
    assert.deepEqual(
      asyncOverlap?.modes.flatMap((m) => (m.role.kind === 'overlapped' ? [m.role.layout.order] : [])),
      ['depth-first', 'breadth-first'],
    );
    assert.ok(asyncOverlap?.modes.every((m) => m.role.kind !== 'overlapped' || (m.analysis?.efficiency ?? 0) > 0));
    assert.equal(
      runCli(['compare', join('baselines', 'nvidia-h100-80gb-hbm3', 'results.json'), fixture('h100-balanced-2.json')])
        .code,
      0,
    );
  });
});

describe('renderers on recorded results (golden files)', () => {
  // To accept a deliberate change of the output: UPDATE_GOLDEN=1 npm test, then review the diff of test/golden/.
  const golden = (name: string, actual: string) => {
    const path = join('test', 'golden', name);
    if (process.env.UPDATE_GOLDEN) {
      writeFileSync(path, actual);
      return;
    }
    assert.equal(
      actual,
      readFileSync(path, 'utf8'),
      `${path} differs; if the change is intended, re-run with UPDATE_GOLDEN=1`,
    );
  };

  const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
  // As `report` renders them: the conclusions drawn again from the modes.
  const reported = (file: string) => loadResults(file).map(concludeResult);
  const table = (file: string) => tableExporter.render(reported(file), plain) + '\n';
  const markdown = (file: string) => markdownExporter.render(reported(file), plain) + '\n';

  for (const name of ['h100-balanced-1', 'h100-balanced-heavier', 'h200-balanced-16-traced']) {
    it(`prints ${name} as the table it printed then`, () =>
      golden(`${name}.table.txt`, table(fixture(`${name}.json`))));
    it(`prints ${name} as Markdown`, () => golden(`${name}.md`, markdown(fixture(`${name}.json`))));
  }

  it('prints every config of the H100 baseline, several orders included', () => {
    golden('h100-baseline.table.txt', table(join('baselines', 'nvidia-h100-80gb-hbm3', 'results.json')));
  });

  it('report prints exactly what the exporters render, from the saved file alone', () => {
    const { code, stdout, stderr } = runCli(['report', fixture('h200-balanced-16-traced.json')]);
    assert.equal(code, 0, stderr);
    // Not a terminal: the text fits DEFAULT_COLUMNS, as outputs.ts fits it.
    const printed = fitLines(
      tableExporter.render(reported(fixture('h200-balanced-16-traced.json')), plain, DEFAULT_COLUMNS),
      DEFAULT_COLUMNS,
    );
    assert.equal(stdout, printed + '\n');
  });
});
