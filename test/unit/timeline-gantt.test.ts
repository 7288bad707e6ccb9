import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stripVTControlCharacters } from 'node:util';
import { Chalk } from 'chalk';
import { analyzeTracedRep } from '../../src/report/timeline-common.js';
import { lowerCaseCells, renderGantt, rowCells, scaleLines } from '../../src/report/gantt.js';
import { outputColumns } from '../../src/report/width.js';
import type { TimelineOp } from '../../src/result/timeline.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';
import { stage } from '../../src/kinds/index.js';
import { timelineFixtures } from '../helpers/timeline-fixtures.js';

const plain = new Chalk({ level: 0 });
const coloured = new Chalk({ level: 1 });

/** The chart rows of a rendered Gantt: label and cells. */
function chartRows(text: string): { label: string; cells: string }[] {
  return stripVTControlCharacters(text)
    .split('\n')
    .flatMap((line) => {
      const match = /^(\S+(?: s\d+)?)\s+\|([^|]*)\|$/.exec(line);
      return match ? [{ label: match[1]!, cells: match[2]! }] : [];
    });
}

for (const { name, result } of timelineFixtures()) {
  describe(`terminal Gantt of ${name}`, () => {
    const reps = result.timeline!.reps;

    it('draws one row per stream of every traced rep', () => {
      const rows = chartRows(renderGantt(result, { style: plain, columns: 100 }));
      assert.equal(
        rows.length,
        reps.reduce((n, rep) => n + rep.streams.length, 0),
      );
    });

    it('marks each row with the letters of exactly the stages its stream ran', () => {
      const rows = chartRows(renderGantt(result, { style: plain, columns: 120 }));
      // Charts come per mode in the order the Result first traces it, devices in index order within a chart.
      const modes = [...new Set(reps.map((r) => r.mode))];
      const ordered = modes.flatMap((m) => reps.filter((r) => r.mode === m).sort((a, b) => a.device - b.device));
      const expected = ordered.flatMap((rep) =>
        rep.streams.map((s) => ({
          stream: s.id,
          letters: [
            ...new Set(rep.ops.filter((op) => op.stream === s.id).map((op) => stage(op.kind).look.letter)),
          ].sort(),
        })),
      );
      assert.equal(rows.length, expected.length);
      rows.forEach((row, i) => {
        assert.ok(row.label.endsWith(expected[i]!.stream), row.label);
        assert.deepEqual(
          [...new Set(row.cells.replace(/\./g, '').toUpperCase())].sort(),
          expected[i]!.letters,
          row.label,
        );
      });
    });

    for (const columns of [60, 100, 160]) {
      it(`fits every line in ${columns} columns`, () => {
        const lines = stripVTControlCharacters(renderGantt(result, { style: coloured, columns })).split('\n');
        const widest = Math.max(...lines.map((l) => l.length));
        assert.ok(widest <= columns, `widest line ${widest}`);
        assert.ok(Math.max(...chartRows(lines.join('\n')).map((r) => r.label.length + r.cells.length + 3)) === columns);
      });
    }

    it('says the same in colour and without (NO_COLOR): the letters carry the stages', () => {
      const withColour = renderGantt(result, { style: coloured, columns: 100 });
      const without = renderGantt(result, { style: plain, columns: 100 });
      assert.match(withColour, /\x1b\[44m/); // the H2D background
      assert.doesNotMatch(without, /\x1b\[/);
      assert.equal(stripVTControlCharacters(withColour), without);
      assert.match(without, /legend: H H2D {2}K kernel {2}D D2H {2}C host \(CPU\) {2}\. idle/);
    });

    it('prints the analysis of every traced rep under its chart', () => {
      const text = renderGantt(result, { style: plain, columns: 100 });
      for (const rep of reps) {
        const a = analyzeTracedRep(result, rep);
        assert.ok(text.includes(`H2D engine busy   ${(a.busy.h2d * 100).toFixed(1)}%`));
        assert.ok(text.includes(`${a.issue.ops} ops in ${a.issue.issueMs.toFixed(3)} ms`));
      }
      assert.equal(text.match(/^ {2}all +\d/gm)?.length, reps.length);
    });
  });
}

describe('terminal Gantt', () => {
  it('shows the synthetic pipeline as a serial row and four overlapped rows, with its analysis', () => {
    const text = renderGantt(syntheticRunResult(), { style: plain, columns: 100 });
    assert.deepEqual(
      chartRows(text).map((r) => r.label),
      ['s0', 's0', 's1', 's2', 's3'],
    );
    assert.match(text, /^serial: traced rep$/m);
    assert.match(text, /^overlapped 16×4 depth-first: traced rep$/m);
    assert.match(text, /H2D with D2H {6}85\.5%/);
    assert.match(text, /verdict {11}not host-issue-bound/);
    assert.match(text, /1 column = 0\.071 ms/); // 6.730 ms over 100 - 2 - 3 columns
  });

  it('groups rows by device when several GPUs ran the mode', () => {
    const text = renderGantt(syntheticRunResult({ devices: 2 }), { style: plain, columns: 100, mode: 'serial' });
    assert.deepEqual(
      chartRows(text).map((r) => r.label),
      ['GPU0 s0', 'GPU1 s0'],
    );
    assert.deepEqual(text.match(/^NVIDIA H200 \(GPU \d\)$/gm), ['NVIDIA H200 (GPU 0)', 'NVIDIA H200 (GPU 1)']);
    assert.equal(text.match(/^analysis, NVIDIA H200 \(GPU \d\):$/gm)?.length, 2);
  });

  it('fits the default width when the output is not a terminal', () => {
    const lines = renderGantt(syntheticRunResult(), { style: plain }).split('\n');
    assert.ok(Math.max(...lines.map((l) => l.length)) <= outputColumns());
  });

  it('says so when the Result has no traced reps', () => {
    assert.match(renderGantt({ ...syntheticRunResult(), timeline: null }, { style: plain }), /No traced reps/);
  });
});

describe('Gantt cells', () => {
  const op = (kind: TimelineOp['kind'], startMs: number, endMs: number): TimelineOp => ({
    mode: 'm',
    device: 0,
    stream: 's0',
    kind,
    chunk: null,
    buffer: null,
    kernel: null,
    bytes: 0,
    startMs,
    endMs,
    issuedMs: 0,
  });

  it('gives a cell to the stage covering most of it, and idle when ops cover less than half', () => {
    // 10 cells of 1 ms: H2D [0, 3.4); kernel [3.4, 5.2), which wins cell 3 (0.6 ms to 0.4) but covers only
    // 0.2 ms of cell 5; D2H [6.5, 7.6), covering half of cell 6 and 0.6 ms of cell 7.
    const cells = rowCells([op('h2d', 0, 3.4), op('kernel', 3.4, 5.2), op('d2h', 6.5, 7.6)], 10, 10);
    assert.deepEqual(cells, ['h2d', 'h2d', 'h2d', 'kernel', 'kernel', null, 'd2h', 'd2h', null, null]);
  });

  it('keeps an op shorter than a cell visible in the cell of its midpoint', () => {
    const cells = rowCells([op('host', 4.1, 4.2)], 10, 10);
    assert.deepEqual(cells.map((c) => c ?? '.').join(','), '.,.,.,.,host,.,.,.,.,.');
  });

  it('flips the case at each chunk boundary, so back-to-back loads of a stage-per-stream row stay apart', () => {
    const chunkOp = (kind: TimelineOp['kind'], chunk: number, startMs: number, endMs: number) => ({
      ...op(kind, startMs, endMs),
      chunk,
    });
    // One load stream: three chunks' H2D back to back, 2 ms each over 6 cells of 1 ms.
    const loads = [chunkOp('h2d', 0, 0, 2), chunkOp('h2d', 1, 2, 4), chunkOp('h2d', 2, 4, 6)];
    const stages = rowCells(loads, 6, 6);
    assert.deepEqual(lowerCaseCells(loads, stages, 6), [false, false, true, true, false, false]);
    // Two kernels of one chunk keep its case; the next chunk's load flips it; an idle cell is never lower case.
    const mixed = [chunkOp('kernel', 3, 0, 1), chunkOp('kernel', 3, 1, 2), chunkOp('h2d', 4, 3, 4)];
    assert.deepEqual(lowerCaseCells(mixed, rowCells(mixed, 4, 4), 4), [false, false, false, true]);
  });

  it("prints a stage-per-stream rep's load stream with its chunks told apart", () => {
    const base = syntheticRunResult();
    const [rep] = base.timeline!.reps;
    const loads = [0, 1, 2, 3].map(
      (chunk): TimelineOp => ({
        ...rep!.ops[0]!,
        stream: rep!.streams[0]!.id,
        kind: 'h2d',
        chunk,
        startMs: chunk * 2,
        endMs: chunk * 2 + 2,
      }),
    );
    const text = renderGantt(
      { ...base, timeline: { reps: [{ ...rep!, streams: [rep!.streams[0]!], ops: loads, totalMs: 8 }] } },
      { style: plain, columns: 45 },
    );
    assert.deepEqual(
      chartRows(text).map((r) => r.cells),
      ['HHHHHHHHHHhhhhhhhhhhHHHHHHHHHHhhhhhhhhhh'],
    );
    assert.match(text, /^letters change case from one chunk to the next$/m);
  });

  it('puts a tick mark and label at every 1-2-5 step of the scale', () => {
    const [labels, ruler] = scaleLines(10, 50);
    // The last tick falls on the last cell, its label pulled left to stay inside the chart.
    assert.equal(ruler, '+---------+---------+---------+---------+--------+');
    assert.equal(labels, '0 ms      2         4         6         8       10');
  });
});

describe('terminal Gantt of host ops', () => {
  it('draws a host op with its own letter, on its stream only', () => {
    const base = syntheticRunResult();
    const [serial] = base.timeline!.reps;
    const host: TimelineOp = { ...serial!.ops[2]!, kind: 'host', buffer: null, bytes: 0, startMs: 12.0, endMs: 12.49 };
    const withHost = {
      ...base,
      timeline: {
        reps: [{ ...serial!, ops: [...serial!.ops.slice(0, 2), { ...serial!.ops[2]!, endMs: 12.0 }, host] }],
      },
    };
    const rows = chartRows(renderGantt(withHost, { style: plain, columns: 60 }));
    assert.equal(rows.length, 1);
    assert.match(rows[0]!.cells, /^H+K+D+C+$/);
  });
});
