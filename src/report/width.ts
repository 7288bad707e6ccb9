import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';

// Every command's terminal output fits its width: the terminal's, or 100 columns where stdout is no terminal
// (issue 26). Renderers lay tables out within the width they are given; prose lines are wrapped here.

/** Where stdout is no terminal (a pipe, a file, CI's log), lines fit this many columns. */
export const DEFAULT_COLUMNS = 100;

/** The narrowest output laid out: narrower terminals get this and wrap it themselves. */
export const MIN_COLUMNS = 60;

/** The columns output to `stream` fits: the terminal's width where it is one, else DEFAULT_COLUMNS. */
export function outputColumns(stream: Pick<NodeJS.WriteStream, 'isTTY' | 'columns'> = process.stdout): number {
  const columns = stream.isTTY ? stream.columns : undefined;
  return columns !== undefined && columns > 0 ? Math.max(MIN_COLUMNS, columns) : DEFAULT_COLUMNS;
}

/** The width a line takes on a terminal: colour codes take none, wide characters two. */
export const visibleWidth = (line: string): number => stringWidth(line);

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
