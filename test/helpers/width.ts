import { visibleWidth } from '../../src/report/width.js';

/** The lines of `text` wider than `columns` on a terminal, each with its line number, for an assertion's message. */
export function overlong(text: string, columns: number): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      visibleWidth(line) > columns ? [`line ${i + 1} (${visibleWidth(line)} columns): ${line}`] : [],
    );
}
