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
    ...(colWidths ? { colWidths, wordWrap: true } : {}),
  });

/** What a cell occupies in the terminal: its widest line without escape sequences, and one space either side. */
const cellWidth = (text: string) =>
  Math.max(
    ...stripVTControlCharacters(text)
      .split('\n')
      .map((line) => [...line].length),
  ) + 2;

const columnWidths = (spec: TableSpec) => spec.head.map((head, c) => spec.rows.reduce((widest, row) => Math.max(widest, cellWidth(row[c] ?? '')), cellWidth(head)));

/** The columns a table takes with its widths: each column's, and one border left of each and one at the right. */
const drawnWidth = (widths: readonly number[]) => widths.reduce((sum, w) => sum + w, 0) + widths.length + 1;

/** The table as cli-table3 draws it with plain borders, in time linear in its rows. */
export function renderTable(spec: TableSpec, colWidths?: number[]): string {
  if (spec.rows.length <= BLOCK_ROWS) {
    const table = make(spec, colWidths);
    for (const row of spec.rows) table.push([...row]);
    return table.toString();
  }
  const widths = colWidths ?? columnWidths(spec);
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

const withoutColumn = (spec: TableSpec, c: number): TableSpec => ({
  head: spec.head.filter((_, i) => i !== c),
  colAligns: spec.colAligns.filter((_, i) => i !== c),
  rows: spec.rows.map((row) => row.filter((_, i) => i !== c)),
});

/** The narrowest the first column is wrapped to: narrower, a mode's name would take a line a word. */
const MIN_FIRST_COLUMN = 12;

/**
 * The table within `columns`: while it is wider, the columns headed by `droppable` go, in that order; a table still
 * too wide wraps its first column (the names) at words. Names wider than that leave the table wide, for fitLines.
 */
export function renderFittedTable(spec: TableSpec, columns: number, droppable: readonly string[]): string {
  let fitted = spec;
  for (const head of droppable) {
    if (drawnWidth(columnWidths(fitted)) <= columns) break;
    const c = fitted.head.indexOf(head);
    if (c >= 0) fitted = withoutColumn(fitted, c);
  }
  const widths = columnWidths(fitted);
  const excess = drawnWidth(widths) - columns;
  const first = widths[0];
  if (excess <= 0 || first === undefined) return renderTable(fitted);
  return renderTable(fitted, [Math.max(MIN_FIRST_COLUMN, first - excess), ...widths.slice(1)]);
}
