import wrapAnsi from 'wrap-ansi';
import { textWidth } from './text-width.js';

// Every command's terminal output fits its width: the terminal's, or 100 columns where stdout is no terminal
// (issue 26). Renderers lay tables out within the width they are given; prose lines are wrapped here.

/** Where stdout is no terminal (a pipe, a file, CI's log), lines fit this many columns. */
export const DEFAULT_COLUMNS = 100;

/** The narrowest output laid out: narrower terminals get this and wrap it themselves. */
export const MIN_COLUMNS = 60;

/** What the layout needs to know of an output stream: a terminal's, or text collected by a test. */
export interface Terminal {
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * The columns output to `stream` fits: `COLUMNS` where it is set to a whole number (as `ls` and Python read it),
 * else the terminal's width where the stream is one, else DEFAULT_COLUMNS.
 */
export function outputColumns(stream: Terminal = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  const asked = /^\d{1,5}$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : undefined;
  const columns = asked ?? (stream.isTTY ? stream.columns : undefined);
  return columns !== undefined && columns > 0 ? Math.max(MIN_COLUMNS, columns) : DEFAULT_COLUMNS;
}

/**
 * The columns a paragraph of prose (an error, a hint, commander's messages) is wrapped at on `stream`: COLUMNS where
 * it is set, else the terminal's width; written to a pipe or a file without COLUMNS, each paragraph stays one line,
 * so that a search of a log (`grep cuda-pipe: ci.log`) finds it whole, and the reader's own window wraps it.
 */
export function paragraphColumns(stream: Terminal = process.stderr, env: NodeJS.ProcessEnv = process.env): number {
  return /^\d{1,5}$/.test(env.COLUMNS ?? '') || stream.isTTY ? outputColumns(stream, env) : Number.POSITIVE_INFINITY;
}

// SGR colour codes, the only escapes the renderers write (style.ts); anything else goes to string-width.
const SGR = /\u001b\[[0-9;]*m/g;
// Characters one column wide each: printable ASCII, Latin to Georgian without combining marks, and the punctuation,
// arrows, maths and box drawing the renderers use (× · ± → │). string-width segments every string by grapheme,
// which made a 12,000-mode table take minutes; this covers nearly every line at the cost of a regular expression.
const NARROW = /^[\u0020-\u007e\u00a0-\u02ff\u0370-\u10ff\u2010-\u2bff]*$/;

/** The width a line takes on a terminal: colour codes take none, wide characters two. */
export function visibleWidth(line: string): number {
  const plain = line.includes('\u001b') ? line.replace(SGR, '') : line;
  return NARROW.test(plain) ? plain.length : textWidth(line);
}

/**
 * Wraps every line wider than `columns` at word boundaries (hard where a word is wider), its continuation lines
 * indented two columns past the line's own indentation, so that a bullet's text stays under it. Colour codes are
 * kept and never counted. Lines that fit, table rows included, are left as they are.
 */
export function fitLines(text: string, columns: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (visibleWidth(line) <= columns) return line;
      if (line.length > LONG_LINE && !line.includes('\u001b') && NARROW.test(line)) return wrapLong(line, columns);
      const indent = ' '.repeat(Math.min(line.length - line.trimStart().length + 2, Math.floor(columns / 2)));
      const [first = '', ...rest] = wrapAnsi(line, columns, { hard: true, trim: false }).split('\n');
      if (!rest.length) return first;
      const tail = wrapAnsi(rest.map((part) => part.trim()).join(' '), columns - indent.length, { hard: true })
        .split('\n')
        .map((part) => indent + part);
      return [first.trimEnd(), ...tail].join('\n');
    })
    .join('\n');
}

/** The narrowest description laid out beside its term (commander's own limit); a narrower one goes under it. */
const MIN_BESIDE = 40;

/**
 * A term and its description as a help text lays them out (commander's items, the exit codes, the environment): the
 * term indented by `indent` and padded to `termWidth`, the description beside it wrapped within its column, or, where
 * that column would be narrower than 40 or the term is wider than `termWidth`, on the lines under the term, indented
 * four past it. Every line fits `columns`.
 */
export function fitItem(
  term: string,
  description: string,
  columns: number,
  options: { indent?: number; termWidth?: number } = {},
): string {
  const indent = ' '.repeat(options.indent ?? 2);
  const termWidth = Math.max(options.termWidth ?? 0, 0);
  if (!description) return fitLines(indent + term, columns);
  const beside = columns - indent.length - termWidth - 2;
  if (beside >= MIN_BESIDE && visibleWidth(term) <= termWidth) {
    const pad = ' '.repeat(termWidth - visibleWidth(term));
    const [first = '', ...rest] = wrapAnsi(description, beside, { hard: true }).split('\n');
    const under = ' '.repeat(indent.length + termWidth + 2);
    return [`${indent}${term}${pad}  ${first}`, ...rest.map((line) => under + line)].join('\n');
  }
  const under = `${indent}    `;
  const lines = wrapAnsi(description, Math.max(columns - under.length, 1), { hard: true }).split('\n');
  return [fitLines(indent + term, columns), ...lines.map((line) => under + line)].join('\n');
}

/**
 * Past this many characters a plain line is wrapped by `wrapLong`, in time linear in its length: wrap-ansi's time
 * grows with the square of a line's length, and `report` of a Result with a 1 MiB note ran for minutes.
 */
const LONG_LINE = 4096;

/**
 * A long plain line (no colour codes, every character one column) wrapped as `fitLines` wraps any line: at spaces,
 * a word wider than the line cut where it must, continuation lines indented two columns past the line's own.
 */
function wrapLong(line: string, columns: number): string {
  const own = line.length - line.trimStart().length;
  const indent = ' '.repeat(Math.min(own + 2, Math.floor(columns / 2)));
  const lines: string[] = [];
  let current = line.slice(0, own);
  let prefix = '';
  const width = () => (lines.length ? columns - indent.length : columns);
  const flush = () => {
    lines.push(prefix + current.trimEnd());
    prefix = indent;
    current = '';
  };
  for (const word of line.slice(own).split(' ')) {
    if (!word) continue;
    const room = width() - current.length - (current.trim() ? 1 : 0);
    if (word.length <= room) {
      current += current.trim() ? ` ${word}` : word;
      continue;
    }
    if (current.trim()) flush();
    let rest = word;
    for (let w = width(); rest.length > w; w = width()) {
      lines.push(prefix + rest.slice(0, w));
      prefix = indent;
      rest = rest.slice(w);
    }
    current = rest;
  }
  if (current.trim() || !lines.length) flush();
  return lines.join('\n');
}
