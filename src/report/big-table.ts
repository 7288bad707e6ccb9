import { visibleWidth } from './width.js';

// The one table writer of the reports (issue 28): a table is a column model (heads, alignments, rows of cells), drawn
// either as the terminal's box table or as a Markdown table. The box table is drawn exactly as cli-table3 0.6 draws it
// with plain borders (`style: { head: [], border: [] }`), which the reports used before and their golden files pin,
// in time linear in the cells: cli-table3 checks every cell against every cell above it for spans (a 12,000-mode
// Result took minutes), builds an object a cell, and runs ansi-regex's freshly compiled pattern over each cell
// several times (a third of the time left after drawing in blocks). Here each cell is measured once, and a cell of
// plain ASCII is measured by its length.

export interface TableSpec {
  readonly head: readonly string[];
  readonly colAligns: ReadonlyArray<'left' | 'right' | 'center'>;
  readonly rows: ReadonlyArray<readonly string[]>;
}

const PLAIN = /^[\u0020-\u007e]*$/;
// The escapes cli-table3 strips to measure a cell and carries across its lines: SGR codes of up to six parameters.
const SGR = /\u001b\[(?:\d*;){0,5}\d*m/g;
const SGR_CAPTURED = /\u001b\[((?:\d*;){0,5}\d*)m/g;

/** The columns a cell's widest line takes: colour codes none, wide characters two. */
function textWidth(text: string): number {
  if (PLAIN.test(text)) return text.length;
  const plain = text.includes('\u001b') ? text.replace(SGR, '') : text;
  let widest = 0;
  for (const line of plain.split('\n')) widest = Math.max(widest, PLAIN.test(line) ? line.length : visibleWidth(line));
  return widest;
}

// The attributes whose on and off codes cli-table3 tracks across a cell's lines; colours are tracked by the last set.
const ATTRIBUTES: Readonly<Record<string, { readonly on: string; readonly off: string }>> = {
  bold: { on: '\u001b[1m', off: '\u001b[22m' },
  italics: { on: '\u001b[3m', off: '\u001b[23m' },
  underline: { on: '\u001b[4m', off: '\u001b[24m' },
  inverse: { on: '\u001b[7m', off: '\u001b[27m' },
  strikethrough: { on: '\u001b[9m', off: '\u001b[29m' },
};
const BY_CODE = new Map<string, { readonly name: string; readonly to: boolean }>(
  Object.entries(ATTRIBUTES).flatMap(([name, { on, off }]) => [
    [on, { name, to: true }],
    [off, { name, to: false }],
  ]),
);

interface SgrState {
  attributes: Map<string, boolean>;
  foreground?: string;
  background?: string;
}

const freshState = (): SgrState => ({ attributes: new Map() });

function update(state: SgrState, code: string, parameters: string | undefined): void {
  const first = parameters ? Number.parseInt(parameters.split(';')[0] ?? '', 10) : 0;
  if ((first >= 30 && first <= 39) || (first >= 90 && first <= 97)) {
    state.foreground = code;
    return;
  }
  if ((first >= 40 && first <= 49) || (first >= 100 && first <= 107)) {
    state.background = code;
    return;
  }
  if (first === 0) {
    state.attributes.clear();
    delete state.foreground;
    delete state.background;
    return;
  }
  const attribute = BY_CODE.get(code);
  if (attribute) {
    // cli-table3 keeps its state in an object, so an attribute set again keeps its first place.
    state.attributes.set(attribute.name, attribute.to);
  }
}

function stateAfter(line: string): SgrState {
  const state = freshState();
  for (const match of line.matchAll(SGR_CAPTURED)) update(state, match[0], match[1]);
  return state;
}

function closed(state: SgrState, line: string): string {
  let text = line;
  for (const [name, on] of state.attributes) if (on) text += ATTRIBUTES[name]?.off ?? '';
  if (state.background && state.background !== '\u001b[49m') text += '\u001b[49m';
  if (state.foreground && state.foreground !== '\u001b[39m') text += '\u001b[39m';
  return text;
}

function reopened(state: SgrState, line: string): string {
  let text = line;
  for (const [name, on] of state.attributes) if (on) text = (ATTRIBUTES[name]?.on ?? '') + text;
  if (state.background && state.background !== '\u001b[49m') text = state.background + text;
  if (state.foreground && state.foreground !== '\u001b[39m') text = state.foreground + text;
  return text;
}

/** Each line with the codes still open from the lines above it reopened at its start and closed at its end. */
function colourLines(lines: readonly string[]): string[] {
  if (!lines.some((line) => line.includes('\u001b'))) return [...lines];
  let state = freshState();
  return lines.map((line) => {
    const text = reopened(state, line);
    state = stateAfter(text);
    return closed(state, text);
  });
}

/**
 * The lines of `text` broken at whitespace to `width` columns, as cli-table3 wraps words: a longer word keeps a line.
 */
function wrapWords(width: number, text: string): string[] {
  const wrapped: string[] = [];
  for (const paragraph of text.split('\n')) {
    const parts = paragraph.split(/(\s+)/g);
    let line: string[] = [];
    let used = 0;
    let space: string | undefined;
    for (let i = 0; i < parts.length; i += 2) {
      const word = parts[i] ?? '';
      let wanted = used + textWidth(word);
      if (used > 0 && space) wanted += space.length;
      if (wanted > width) {
        if (used !== 0) wrapped.push(line.join(''));
        line = [word];
        used = textWidth(word);
      } else {
        line.push(space ?? '', word);
        used = wanted;
      }
      space = parts[i + 1];
    }
    if (used) wrapped.push(line.join(''));
  }
  return wrapped;
}

/** `text` cut to `width` columns, colour codes kept and those left open closed. */
function cut(text: string, width: number): string {
  if (!text.includes('\u001b')) return cutPlain(text, width);
  const pieces = text.split(SGR);
  const codes = [...text.matchAll(SGR_CAPTURED)];
  const state = freshState();
  let kept = '';
  let used = 0;
  for (let i = 0; used < width; i++) {
    let piece = pieces[i] ?? '';
    if (used + textWidth(piece) > width) piece = cutPlain(piece, width - used);
    kept += piece;
    used += textWidth(piece);
    const code = codes[i];
    if (used < width) {
      if (!code) break;
      kept += code[0];
      update(state, code[0], code[1]);
    }
  }
  return closed(state, kept);
}

function cutPlain(text: string, width: number): string {
  if (text.length === textWidth(text)) return text.slice(0, width);
  let kept = text;
  while (textWidth(kept) > width) kept = kept.slice(0, -1);
  return kept;
}

/** A cell's line within `width` columns: cut with an ellipsis where wider, then padded to its alignment. */
function fitted(line: string, width: number, align: 'left' | 'right' | 'center' | undefined): string {
  const text = textWidth(line) <= width ? line : `${cut(line, width - 1)}…`;
  const length = textWidth(text);
  if (width + 1 < length) return text;
  const padding = Math.max(0, width - length);
  if (align === 'right') return ' '.repeat(padding) + text;
  if (align === 'center') {
    const right = Math.ceil(padding / 2);
    return ' '.repeat(padding - right) + text + ' '.repeat(right);
  }
  return text + ' '.repeat(padding);
}

/** The rows of the box table, its head first where it has one. */
const allRows = (spec: TableSpec): ReadonlyArray<readonly string[]> =>
  spec.head.length ? [spec.head, ...spec.rows] : spec.rows;

/** Each column's width with a space either side, as drawn when no widths are given: its widest cell's. */
function columnWidths(spec: TableSpec): number[] {
  const rows = allRows(spec);
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, () => 1);
  for (const row of rows) row.forEach((text, c) => (widths[c] = Math.max(widths[c] ?? 1, textWidth(text) + 2)));
  return widths;
}

/**
 * The box table with plain borders, as cli-table3 draws it: each column as wide as its widest cell and a space
 * either side, or as `colWidths` gives, every cell then wrapped at words to its column and cut with an ellipsis.
 */
export function renderTable(spec: TableSpec, colWidths?: readonly number[]): string {
  const measured = columnWidths(spec);
  return colWidths
    ? draw(
        spec,
        measured.map((w, c) => Math.max(1, colWidths[c] ?? w)),
        true,
      )
    : draw(spec, measured, false);
}

function draw(spec: TableSpec, widths: readonly number[], wrap: boolean): string {
  const rows = allRows(spec);
  if (!rows.length) return '';
  const rule = (left: string, middle: string, right: string) =>
    left + widths.map((w) => '─'.repeat(w)).join(middle) + right;
  const out: string[] = [rule('┌', '┬', '┐')];
  rows.forEach((row, y) => {
    if (y > 0) out.push(rule('├', '┼', '┤'));
    const cells = row.map((text, c) => colourLines(wrap ? wrapWords((widths[c] ?? 1) - 2, text) : text.split('\n')));
    const height = Math.max(1, ...cells.map((lines) => lines.length));
    for (let n = 0; n < height; n++) {
      let line = '│';
      cells.forEach((lines, c) => {
        const inner = (widths[c] ?? 1) - 2;
        const text = lines[n];
        line += `${text === undefined ? ' '.repeat(inner + 2) : ` ${fitted(text, inner, spec.colAligns[c])} `}│`;
      });
      out.push(line);
    }
  });
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}

const MARKDOWN_ALIGN = { left: '---', right: '---:', center: ':---:' } as const;

/** The same table in Markdown: a head row, its alignment row, and a line a row, each `|` in a cell escaped. */
export function renderMarkdownTable(spec: TableSpec): string {
  const line = (cells: readonly string[]) => `| ${cells.map((text) => text.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    line(spec.head),
    `| ${spec.head.map((_, c) => MARKDOWN_ALIGN[spec.colAligns[c] ?? 'left']).join(' | ')} |`,
    ...spec.rows.map(line),
  ].join('\n');
}

const withoutColumn = (spec: TableSpec, c: number): TableSpec => ({
  head: spec.head.filter((_, i) => i !== c),
  colAligns: spec.colAligns.filter((_, i) => i !== c),
  rows: spec.rows.map((row) => row.filter((_, i) => i !== c)),
});

/** The columns a table takes with its widths: each column's, and one border left of each and one at the right. */
const drawnWidth = (widths: readonly number[]) => widths.reduce((sum, w) => sum + w, 0) + widths.length + 1;

/** The narrowest the first column is wrapped to: narrower, a mode's name would take a line a word. */
const MIN_FIRST_COLUMN = 12;

/**
 * The table within `columns`: while it is wider, the columns headed by `droppable` go, in that order; a table still
 * too wide wraps its first column (the names) at words. Names wider than that leave the table wide, for fitLines.
 */
export function renderFittedTable(spec: TableSpec, columns: number, droppable: readonly string[]): string {
  let fitted = spec;
  let widths = columnWidths(spec);
  for (const head of droppable) {
    if (drawnWidth(widths) <= columns) break;
    const c = fitted.head.indexOf(head);
    if (c >= 0) {
      fitted = withoutColumn(fitted, c);
      widths = widths.filter((_, i) => i !== c);
    }
  }
  const excess = drawnWidth(widths) - columns;
  const first = widths[0];
  if (excess <= 0 || first === undefined) return draw(fitted, widths, false);
  return draw(fitted, [Math.max(MIN_FIRST_COLUMN, first - excess), ...widths.slice(1)], true);
}
