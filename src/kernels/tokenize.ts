// A C/C++ tokenizer for kernel sources: enough of translation phases 1 to 3 (line splices, comments, string and
// character literals, raw strings, preprocessing directives) that a `/*` inside a string, a `"` inside a comment
// or a directive continued over several lines never shifts what the signature parser sees.

export type TokenKind = 'identifier' | 'number' | 'string' | 'char' | 'punct';

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** 1-based line where the token starts. */
  readonly line: number;
  /** Whether white space or a comment came before it: how the source spelled `float *x` rather than `float* x`. */
  readonly space: boolean;
}

/** A preprocessing directive: `#ifdef FOO` is { name: 'ifdef', tokens: [FOO] }. */
export interface Directive {
  readonly kind: 'directive';
  readonly name: string;
  readonly tokens: readonly Token[];
  readonly line: number;
  /** The directive as written, for messages: "#ifdef FOO". */
  readonly text: string;
}

export type SourceItem = Token | Directive;

const PUNCTUATORS_3 = new Set(['...', '<<=', '>>=', '->*']);
const PUNCTUATORS_2 = new Set([
  '::',
  '->',
  '++',
  '--',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '##',
  '.*',
]);

// Character tests by code, not by regular expression: they run once or more per character of the source.
const isLetter = (code: number): boolean =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 36 || code > 127;
const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isIdentStart = (c: string): boolean => isLetter(c.charCodeAt(0));
const isIdentPart = (c: string): boolean => {
  const code = c.charCodeAt(0);
  return isLetter(code) || isDigit(code);
};
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v';
const RAW_STRING = /(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(/y;
const QUOTE_PREFIX = /(?:u8|u|U|L)?(["'])/y;

/**
 * The source as tokens and directives, in order. Malformed input (an unterminated comment or string) ends the
 * token at the end of the text rather than failing: NVRTC is the judge of whether the source compiles.
 */
export function tokenize(source: string): SourceItem[] {
  // Phase 2: a backslash-newline joins lines. Each removed splice is remembered so tokens keep their real line.
  const lineOf = spliceLines(source);
  const text = source.replace(/\\\r?\n/g, '');
  const items: SourceItem[] = [];
  let directive: { name: string; tokens: Token[]; line: number; start: number } | null = null;
  let atLineStart = true;
  let space = false;
  let i = 0;
  const push = (kind: TokenKind, value: string, line: number) => {
    const token: Token = { kind, text: value, line, space };
    if (directive) directive.tokens.push(token);
    else items.push(token);
    atLineStart = false;
    space = false;
  };
  const endDirective = (end: number) => {
    if (!directive) return;
    items.push({
      kind: 'directive',
      name: directive.name,
      tokens: directive.tokens,
      line: directive.line,
      text: text.slice(directive.start, end).replace(/\s+/g, ' ').trim(),
    });
    directive = null;
  };
  while (i < text.length) {
    const c = text[i] as string;
    const next = text[i + 1] ?? '';
    if (c === '\n') {
      endDirective(i);
      atLineStart = true;
      space = true;
      i += 1;
      continue;
    }
    if (isSpace(c)) {
      space = true;
      i += 1;
      continue;
    }
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
      space = true;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      space = true;
      continue;
    }
    const line = lineOf(i);
    if (c === '#' && atLineStart && !directive) {
      let j = i + 1;
      while (j < text.length && (text[j] === ' ' || text[j] === '\t')) j += 1;
      let k = j;
      while (k < text.length && isIdentPart(text[k] as string)) k += 1;
      directive = { name: text.slice(j, k), tokens: [], line, start: i };
      atLineStart = false;
      i = k;
      continue;
    }
    const mayPrefix = c === 'u' || c === 'U' || c === 'L' || c === 'R';
    RAW_STRING.lastIndex = i;
    const raw = mayPrefix && !isIdentPart(text[i - 1] ?? ' ') ? RAW_STRING.exec(text) : null;
    if (raw) {
      const close = `)${raw[1] ?? ''}"`;
      const end = text.indexOf(close, i + raw[0].length);
      const stop = end < 0 ? text.length : end + close.length;
      push('string', text.slice(i, stop), line);
      i = stop;
      continue;
    }
    QUOTE_PREFIX.lastIndex = i;
    const prefix =
      c === '"' || c === "'" || (mayPrefix && !isIdentPart(text[i - 1] ?? ' ')) ? QUOTE_PREFIX.exec(text) : null;
    if (prefix) {
      const quote = prefix[1] as string;
      let j = i + prefix[0].length;
      while (j < text.length && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      const stop = Math.min(text.length, j + 1);
      push(quote === '"' ? 'string' : 'char', text.slice(i, stop), line);
      i = stop;
      continue;
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < text.length && isIdentPart(text[j] as string)) j += 1;
      push('identifier', text.slice(i, j), line);
      i = j;
      continue;
    }
    if (isDigit(c.charCodeAt(0)) || (c === '.' && isDigit(next.charCodeAt(0)))) {
      // A preprocessing number: digits, letters, dots, digit separators and signed exponents.
      let j = i + 1;
      for (; j < text.length; j += 1) {
        const d = text[j] as string;
        const exponentSign = (d === '+' || d === '-') && 'eEpP'.includes(text[j - 1] as string);
        if (!(isIdentPart(d) || d === '.' || d === "'" || exponentSign)) break;
      }
      push('number', text.slice(i, j), line);
      i = j;
      continue;
    }
    const three = text.slice(i, i + 3);
    const two = three.slice(0, 2);
    const punct = PUNCTUATORS_3.has(three) ? three : PUNCTUATORS_2.has(two) ? two : c;
    push('punct', punct, line);
    i += punct.length;
  }
  endDirective(text.length);
  return items;
}

/** Maps an offset in the spliced text to its line in the original source. */
function spliceLines(source: string): (offset: number) => number {
  // Line starts of the spliced text, each with its original line number.
  const starts: Array<[number, number]> = [[0, 1]];
  let removed = 0;
  let line = 1;
  for (let i = 0; i < source.length; i += 1) {
    if (source[i] === '\\' && (source[i + 1] === '\n' || (source[i + 1] === '\r' && source[i + 2] === '\n'))) {
      const width = source[i + 1] === '\n' ? 2 : 3;
      removed += width;
      line += 1;
      i += width - 1;
      continue;
    }
    if (source[i] === '\n') {
      line += 1;
      starts.push([i + 1 - removed, line]);
    }
  }
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as [number, number])[0] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return (starts[lo] as [number, number])[1];
  };
}

/** Tokens as the source spelled them, each run of white space and comments as one space. */
export function spell(tokens: readonly Token[]): string {
  return tokens.map((t, i) => (i > 0 && t.space ? ` ${t.text}` : t.text)).join('');
}

export const isDirective = (item: SourceItem): item is Directive => item.kind === 'directive';
