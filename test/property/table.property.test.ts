import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Table from 'cli-table3';
import fc from 'fast-check';
import { renderMarkdownTable, renderTable, type TableSpec } from '../../src/report/big-table.js';

// The reports' box tables were drawn by cli-table3, and their golden files pin its bytes: the table writer that
// replaced it must draw every table the reports can give it as cli-table3 does, colours, wide characters, line breaks,
// wrapping and cutting included.

const bold = (text: string) => `\u001b[1m${text}\u001b[22m`;
const red = (text: string) => `\u001b[31m${text}\u001b[39m`;

// Characters one column wide and two, where string-width 4 (cli-table3's) and 7 (the reports') agree.
const word = fc.stringMatching(/^[a-z0-9.×·→µé漢字]{0,9}$/);
const colour = (text: string, how: string) => (how === 'bold' ? bold(text) : how === 'red' ? red(text) : text);
// A colour may span a line break or a wrap, which cli-table3 closes at the line's end and opens again on the next.
const cell = fc
  .tuple(
    fc.array(fc.tuple(word, fc.constantFrom('', 'bold', 'red'), fc.constantFrom(' ', '  ', '\n', ' | ')), {
      maxLength: 4,
    }),
    fc.constantFrom('', 'bold', 'red'),
  )
  .map(([parts, whole]) =>
    colour(
      parts
        .map(([w, how, gap]) => colour(w, how) + gap)
        .join('')
        .trimEnd(),
      whole,
    ),
  );

const spec: fc.Arbitrary<TableSpec> = fc.integer({ min: 1, max: 5 }).chain((columns) =>
  fc.record({
    head: fc.oneof(fc.constant([]), fc.array(cell, { minLength: columns, maxLength: columns })),
    colAligns: fc.array(fc.constantFrom('left' as const, 'right' as const, 'center' as const), {
      minLength: columns,
      maxLength: columns,
    }),
    rows: fc.array(fc.array(cell, { minLength: columns, maxLength: columns }), { maxLength: 8 }),
  }),
);

function cliTable3(table: TableSpec, colWidths?: number[]): string {
  const drawn = new Table({
    head: [...table.head],
    style: { head: [], border: [] },
    colAligns: [...table.colAligns],
    ...(colWidths ? { colWidths, wordWrap: true } : {}),
  });
  for (const row of table.rows) drawn.push([...row]);
  return drawn.toString();
}

describe('the table writer', () => {
  it('draws every table as cli-table3 draws it, colour codes, wide characters and line breaks included', () => {
    fc.assert(
      fc.property(spec, (table) => assert.equal(renderTable(table), cliTable3(table))),
      { numRuns: 100 },
    );
  });

  it('wraps and cuts cells to given column widths as cli-table3 does', () => {
    const withWidths = spec.chain((table) =>
      fc.tuple(
        fc.constant(table),
        fc.array(fc.integer({ min: 4, max: 16 }), {
          minLength: table.colAligns.length,
          maxLength: table.colAligns.length,
        }),
      ),
    );
    fc.assert(
      fc.property(withWidths, ([table, widths]) => assert.equal(renderTable(table, widths), cliTable3(table, widths))),
      { numRuns: 100 },
    );
  });

  it('writes the same column model as a Markdown table, escaping each | in a cell', () => {
    const table: TableSpec = { head: ['mode', 'median'], colAligns: ['left', 'right'], rows: [['a | b', '1.00 ms']] };
    assert.equal(renderMarkdownTable(table), '| mode | median |\n| --- | ---: |\n| a \\| b | 1.00 ms |');
  });
});
