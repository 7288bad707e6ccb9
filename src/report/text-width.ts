import stringWidth from 'string-width';

// Characters string-width counts as one column each, none of which joins its neighbours into one grapheme: printable
// ASCII and Latin-1 (not the soft hyphen, which counts none, nor © and ®, emoji of two), dashes, quotes, the bullet,
// the ellipsis, arrows, ≤ ≥ and box drawing. string-width splits every string into graphemes with an Intl.Segmenter,
// whose first use loads
// ICU's data (25 ms of a start) and which makes each call slow; a string of these alone is as wide as it is long.
const ONE_COLUMN_EACH =
  /^[\u0020-\u007e\u00a0-\u00a8\u00aa-\u00ac\u00af-\u00ff\u2013\u2014\u2018-\u201d\u2022\u2026\u2190-\u2193\u2264\u2265\u2500-\u257f]*$/;

/**
 * The columns `text` takes on a terminal, exactly as string-width counts them (a test checks it). The CLI's bundle
 * gives this to wrap-ansi in place of string-width (scripts/bundle-cli.mjs), which made `--help` 80 ms slower.
 */
export function textWidth(text: string): number {
  return ONE_COLUMN_EACH.test(text) ? text.length : stringWidth(text);
}
