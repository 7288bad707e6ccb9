import { renderTable } from './big-table.js';
import { visibleWidth } from './width.js';

// Terminal tables fit the output's width (issue 26): a renderer offers its table laid out from widest to narrowest,
// the first that fits is drawn, and where none does the rows fold into blocks of `heading: value` lines, which
// fitLines then wraps like prose.

export interface Column {
  readonly head: string;
  readonly align?: 'left' | 'right';
  /** One cell a row. */
  readonly cells: readonly string[];
}

/** One way to lay a table out: its columns, left to right. */
export type Layout = readonly Column[];

function draw(layout: Layout): string {
  const rows = Math.max(0, ...layout.map((c) => c.cells.length));
  return renderTable({
    head: layout.map((c) => c.head),
    colAligns: layout.map((c) => c.align ?? 'left'),
    rows: Array.from({ length: rows }, (_, row) => layout.map((c) => c.cells[row] ?? '')),
  });
}

const widest = (text: string) => Math.max(...text.split('\n').map(visibleWidth));

/** Each row as its first cell on a line, then `heading: value` for every other column that has a value. */
export function foldRows(layout: Layout): string {
  const [first, ...rest] = layout;
  const rows = Math.max(0, ...layout.map((c) => c.cells.length));
  const blocks: string[] = [];
  for (let row = 0; row < rows; row++) {
    const title = first?.head ? `${first.head} ${first.cells[row] ?? ''}` : (first?.cells[row] ?? '');
    const fields = rest.flatMap((c) => (c.cells[row] ? [`  ${c.head ? `${c.head}: ` : ''}${c.cells[row]}`] : []));
    blocks.push([title, ...fields].join('\n'));
  }
  return blocks.join('\n');
}

/** The first of `layouts` (widest first) whose table fits `columns`, else the first's rows folded. */
export function fitTable(layouts: readonly Layout[], columns: number): string {
  for (const layout of layouts) {
    const text = draw(layout);
    if (widest(text) <= columns) return text;
  }
  return foldRows(layouts[0] ?? []);
}

/** A layout without the columns whose heads are named: a narrower one to offer after it. */
export const without = (layout: Layout, ...heads: readonly string[]): Layout =>
  layout.filter((c) => !heads.includes(c.head));

/** Facts as a two-column table without a head where it fits `columns`, else as `name: value` lines. */
export function fitPairs(pairs: ReadonlyArray<readonly [string, string]>, columns: number): string {
  const text = renderTable({ head: [], colAligns: [], rows: pairs });
  return widest(text) <= columns ? text : pairs.map(([name, value]) => `${name}: ${value}`).join('\n');
}
