import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderFittedTable } from '../../src/report/big-table.js';
import { renderRunTable, tableExporter, verboseTableExporter } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import { concludeResult } from '../../src/measure/conclusions.js';
import { loadDocument } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import { overlong } from '../helpers/width.js';

// Every recorded run Result the repository holds, rendered as `run` and `report` print it. Sweeps are drawn by the
// sweep exporter and probes by their own view, so only plain runs are read here.
const files = [
  ...readdirSync(join('test', 'fixtures')).map((f) => join('test', 'fixtures', f)),
  ...readdirSync('baselines')
    .filter((d) => !d.endsWith('.md'))
    .map((d) => join('baselines', d, 'results.json')),
].filter((f) => f.endsWith('.json'));

// `report` draws each Result's conclusions again from its modes (measure/conclusions.ts) before it prints them.
const recorded: Array<{ file: string; result: RunResult }> = files.flatMap((file) => {
  const document = loadDocument(file);
  return document.kind === 'results'
    ? document.results.filter((r) => r.sweep === null).map((result) => ({ file, result: concludeResult(result) }))
    : [];
});

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const coloured = makeStyle({ isTTY: true, hasColors: () => true } as unknown as NodeJS.WriteStream);

/** The answer: the lines before the first blank one, which the modes' table follows. */
const answer = (text: string) => text.split('\n').slice(0, text.split('\n').indexOf(''));

describe('the run table fits the terminal and leads with the answer', () => {
  it('reads recorded runs of one GPU and of two, with and without the model', () => {
    assert.ok(recorded.length >= 12, `${recorded.length} recorded runs`);
    assert.ok(recorded.some(({ result }) => result.devices.length === 2));
    assert.ok(recorded.some(({ result }) => result.modes.some((m) => m.analysis?.model)));
    assert.ok(recorded.some(({ result }) => result.modes.every((m) => !m.analysis?.model)));
  });

  for (const columns of [80, 100]) {
    for (const { file, result } of recorded) {
      const name = `${file} (${result.config.name})`;
      it(`prints ${name} within ${columns} columns, --verbose too, colour codes taking none`, () => {
        for (const style of [plain, coloured]) {
          for (const verbose of [false, true]) {
            assert.deepEqual(
              overlong(renderRunTable(result, style, { columns, verbose }), columns),
              [],
              `${verbose ? '--verbose' : 'default'}`,
            );
          }
        }
      });

      it(`answers first for ${name} at ${columns} columns: the speedup with its interval, efficiency, limit and change`, () => {
        const first = renderRunTable(result, plain, { columns, verbose: false }).split('\n').slice(0, 8).join('\n');
        assert.match(first, /^cuda-pipe \d+\.\d+\.\d+ · /);
        assert.match(first, /\nspeedup over serial: (\d+\.\d\d× ± \d+\.\d\d \(95%; |none: )/);
        assert.match(first, /\nefficiency: \d+\.\d\d = this layout's floor [\d.]+ [mµ]s \/ [\d.]+ [mµ]s measured/);
        assert.match(first, /\nlimited by: \S/);
        assert.match(first, /\nbest layout: \S/);
        assert.match(first, /\nchange: \S/);
      });
    }
  }

  it('keeps the answer within 8 lines at 100 columns for every recorded run', () => {
    for (const { file, result } of recorded) {
      const lines = answer(renderRunTable(result, plain, { columns: 100, verbose: false }));
      assert.ok(lines.length <= 8, `${file}: ${lines.length} lines\n${lines.join('\n')}`);
      assert.match(lines.at(-1) ?? '', /^(change: |  )/, file);
    }
  });

  it("gives balanced's answer in six lines, naming the model's best layout and its change", () => {
    const model = recorded.find(({ file }) => file.endsWith('h200-balanced-16-model.json'));
    assert.ok(model);
    assert.deepEqual(answer(renderRunTable(model.result, plain, { columns: 100, verbose: false })), [
      'cuda-pipe 0.1.0 · balanced · NVIDIA H200',
      'speedup over serial: 2.06× ± 0.01 (95%; 12.57 ms → 6.099 ms)',
      "efficiency: 0.95 = this layout's floor 5.788 ms / 6.099 ms measured",
      'limited by: the link with both copy directions at once (100.1 GB/s at its fastest rep)',
      'best layout: about 64 chunks × 3 streams, 5.596 ms predicted (limited by link)',
      'change: use 64 chunks × 3 streams (now 16 × 4): saves 0.193 ms; lost to fill and drain: 0.941 ms',
    ]);
  });

  it("puts the measured modes before the model's parts, which have a heading of their own", () => {
    const model = recorded.find(({ file }) => file.endsWith('h200-balanced-16-model.json'));
    assert.ok(model);
    const text = renderRunTable(model.result, plain, { columns: 100, verbose: false });
    const heading = text.indexOf("the model's parts, each measured alone");
    assert.ok(heading > 0);
    for (const measured of ['│ serial ', '│ overlapped '])
      assert.ok(text.indexOf(measured) > 0 && text.indexOf(measured) < heading, measured);
    for (const part of [
      '│ small launches back to back',
      '│ H2D alone',
      '│ kernel fma alone',
      '│ kernels chunked 16×4, no copies',
      '│ H2D + D2H at once',
    ])
      assert.ok(text.indexOf(part) > heading, part);
  });

  it("leaves the model's working, the device's facts and the kernels' compiles to --verbose", () => {
    const model = recorded.find(({ file }) => file.endsWith('h200-balanced-16-model.json'));
    assert.ok(model);
    const terse = tableExporter.render([model.result], plain, 100);
    const verbose = verboseTableExporter.render([model.result], plain, 100);
    for (const detail of [
      /^bound: 5\.788 ms, limited by the link/m,
      /^floor: this layout 6\.099 ms/m,
      /^lost against the ideal at 16 chunks × 4 streams/m,
      /^device: NVIDIA H200 \(sm_90/m,
      /^kernels: fma/m,
    ]) {
      assert.doesNotMatch(terse, detail);
      assert.match(verbose, detail);
    }
    for (const kept of [
      /^timing: CUDA events/m,
      /^verification: passed/m,
      /^clocks: SM 1980/m,
      /^layout: 16 chunks/m,
      /^Warnings:/m,
    ]) {
      assert.match(terse, kept);
      assert.match(verbose, kept);
    }
  });
});

describe('a table fitted to the terminal', () => {
  const spec = {
    head: ['mode', 'median', 'min', 'max', 'noise'],
    colAligns: ['left', 'right', 'right', 'right', 'right'] as const,
    rows: [['kernels chunked 16×4, no copies, graph replay', '2.640 ms', '2.636 ms', '2.650 ms', '0.18%']],
  };
  const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));

  it('is drawn whole where it fits', () => {
    const text = renderFittedTable(spec, 100, ['min', 'max']);
    assert.equal(widest(text), 90);
    assert.match(text, /│ +min │/);
  });

  it('loses the droppable columns in order while too wide', () => {
    const text = renderFittedTable(spec, 80, ['min', 'max']);
    assert.equal(widest(text), 79);
    assert.doesNotMatch(text, /│ +min │/);
    assert.match(text, /│ +max │/);
  });

  it('then wraps the names at words', () => {
    const text = renderFittedTable(spec, 50, ['min', 'max']);
    assert.deepEqual(overlong(text, 50), []);
    assert.match(text, /│ kernels chunked 16×4, no +│ 2\.640 ms │/);
    assert.match(text, /│ copies, graph replay +│ +│/);
  });
});
