// The yaml parser recurses once per nesting level, and around 800 levels of `[` (well inside a 1 MiB file) it runs
// out of stack, after seconds of work. This scan runs first, in one linear pass over the text, and stops a file
// that nests far deeper than any config could. It over-counts rather than under-counts (a bracket inside a plain
// scalar counts as a level), which is harmless at a limit that real configs, about 5 levels deep, never approach.

export const MAX_NESTING = 64;

export interface NestingProblem {
  /** Offset in the text where the limit was crossed. */
  readonly offset: number;
  readonly depth: number;
}

interface ScanState {
  flowDepth: number;
  /** Indentations of the block levels open before the current line. */
  readonly indents: number[];
  /** Set while inside a `|` or `>` block scalar: lines indented deeper than this are text, not structure. */
  blockScalarIndent: number | null;
  /** Set while a quoted scalar continues onto the next line. */
  openQuote: '"' | "'" | null;
}

/** The first place where the text nests deeper than `max` levels, or null. */
export function findExcessiveNesting(text: string, max: number = MAX_NESTING): NestingProblem | null {
  const state: ScanState = { flowDepth: 0, indents: [], blockScalarIndent: null, openQuote: null };
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? text.length : newline;
    const problem = scanLine(text, lineStart, lineEnd, state, max);
    if (problem) return problem;
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  return null;
}

function scanLine(text: string, start: number, end: number, state: ScanState, max: number): NestingProblem | null {
  let i = start;
  while (i < end && text[i] === ' ') i += 1;
  const indent = i - start;
  const blank = i >= end || text[i] === '#' || text[i] === '\r';
  if (state.blockScalarIndent !== null) {
    if (blank || indent > state.blockScalarIndent) return null;
    state.blockScalarIndent = null;
  }
  let depth = state.flowDepth;
  if (state.openQuote === null && state.flowDepth === 0 && !blank) {
    while (state.indents.length && (state.indents[state.indents.length - 1] ?? 0) >= indent) state.indents.pop();
    state.indents.push(indent);
    depth = state.indents.length;
  }
  let lastToken = '';
  for (; i < end; i += 1) {
    const c = text[i];
    if (state.openQuote !== null) {
      i = skipQuoted(text, i, end, state);
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') continue;
    if (c === '#' && (i === start || text[i - 1] === ' ' || text[i - 1] === '\t')) break;
    if ((c === '"' || c === "'") && startsScalar(text, i, start)) {
      state.openQuote = c;
      continue;
    }
    if (c === '[' || c === '{') {
      state.flowDepth += 1;
      depth += 1;
    } else if (c === ']' || c === '}') {
      state.flowDepth = Math.max(0, state.flowDepth - 1);
    } else if (state.flowDepth === 0 && isBlockIndicator(text, i, end)) {
      // "- - x" and "a: b: c" open a level per indicator on one line.
      depth += 1;
    }
    if (depth > max) return { offset: i, depth };
    lastToken = c ?? '';
  }
  if (state.openQuote === null && state.flowDepth === 0 && endsWithBlockScalarHeader(text, start, end, lastToken)) {
    state.blockScalarIndent = indent;
  }
  return null;
}

/** A quote opens a scalar only where a scalar can start: `don't` is plain text, `'x'` and `key: "x"` are quoted. */
function startsScalar(text: string, i: number, lineStart: number): boolean {
  let j = i - 1;
  while (j >= lineStart && (text[j] === ' ' || text[j] === '\t')) j -= 1;
  if (j < lineStart) return true;
  const before = text[j];
  return before === ':' || before === '-' || before === ',' || before === '[' || before === '{' || before === '?';
}

/** Returns the index of the closing quote (or the line's end), clearing `openQuote` when the scalar closes. */
function skipQuoted(text: string, i: number, end: number, state: ScanState): number {
  const quote = state.openQuote;
  for (let j = i; j < end; j += 1) {
    const c = text[j];
    if (quote === '"' && c === '\\') {
      j += 1;
      continue;
    }
    if (c === quote) {
      if (quote === "'" && text[j + 1] === "'") {
        j += 1;
        continue;
      }
      state.openQuote = null;
      return j;
    }
  }
  return end;
}

function isBlockIndicator(text: string, i: number, end: number): boolean {
  const c = text[i];
  const next = i + 1 < end ? text[i + 1] : ' ';
  const spaceAfter = next === ' ' || next === '\t' || next === '\r';
  if (c === ':') return spaceAfter;
  if (c === '-' || c === '?') return spaceAfter && (i === 0 || text[i - 1] === ' ' || text[i - 1] === '\n');
  return false;
}

function endsWithBlockScalarHeader(text: string, start: number, end: number, lastToken: string): boolean {
  if (lastToken !== '|' && lastToken !== '>' && !/[0-9+-]/.test(lastToken)) return false;
  const line = text
    .slice(start, end)
    .replace(/\s+#.*$/, '')
    .trimEnd();
  return /(^|[\s:-])[|>][0-9+-]*$/.test(line);
}

/** The depth of a parsed value, counted without recursion and without walking a shared object twice. */
export function valueDepthExceeds(value: unknown, max: number = MAX_NESTING): boolean {
  const seen = new Set<object>();
  // Two stacks side by side rather than a pair per value: 100,000 values made 100,000 short-lived arrays.
  const items: unknown[] = [value];
  const depths: number[] = [0];
  while (items.length) {
    const item = items.pop();
    const depth = depths.pop() as number;
    if (typeof item !== 'object' || item === null || seen.has(item)) continue;
    if (depth >= max) return true;
    seen.add(item);
    for (const child of Object.values(item)) {
      items.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}
