import { stripVTControlCharacters } from 'node:util';
import Table from 'cli-table3';

// cli-table3 lays a table out by checking every cell against every cell above it for spans: quadratic in rows, so a
// Result of 30,000 modes took minutes to print. Tables of more than BLOCK_ROWS rows are drawn in blocks of rows that
// share fixed column widths and are joined at their borders, which is the same table, drawn in linear time.

const BLOCK_ROWS = 256;

export interface TableSpec {
  readonly head: readonly string[];
  readonly colAligns: ReadonlyArray<'left' | 'right' | 'center'>;
  readonly rows: ReadonlyArray<readonly string[]>;
}

const make = (spec: TableSpec, colWidths?: number[], head = true) =>
  new Table({
    head: head ? [...spec.head] : [],
    style: { head: [], border: [] },
    colAligns: [...spec.colAligns],
    ...(colWidths ? { colWidths } : {}),
  });

/** What a cell occupies in the terminal: its widest line without escape sequences, and one space either side. */
const cellWidth = (text: string) =>
  Math.max(
    ...stripVTControlCharacters(text)
      .split('\n')
      .map((line) => [...line].length),
  ) + 2;

/** The table as cli-table3 draws it with plain borders, in time linear in its rows. */
export function renderTable(spec: TableSpec): string {
  if (spec.rows.length <= BLOCK_ROWS) {
    const table = make(spec);
    for (const row of spec.rows) table.push([...row]);
    return table.toString();
  }
  const widths = spec.head.map((head, c) => spec.rows.reduce((widest, row) => Math.max(widest, cellWidth(row[c] ?? '')), cellWidth(head)));
  const blocks: string[][] = [];
  for (let first = 0; first < spec.rows.length; first += BLOCK_ROWS) {
    const table = make(spec, widths, first === 0);
    for (const row of spec.rows.slice(first, first + BLOCK_ROWS)) table.push([...row]);
    blocks.push(table.toString().split('\n'));
  }
  // Each block but the last loses its bottom border and each but the first its top, which a row separator replaces.
  const separator = `├${widths.map((w) => '─'.repeat(w)).join('┼')}┤`;
  return blocks.map((lines, i) => lines.slice(i === 0 ? 0 : 1, i === blocks.length - 1 ? lines.length : -1).join('\n')).join(`\n${separator}\n`);
}
