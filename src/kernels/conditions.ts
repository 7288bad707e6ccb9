import type { Token } from './tokenize.js';

// Which `#if` branches the compiler takes, decided the way the preprocessor does where cuda-pipe can know the
// answer (the -D and -U options, the source's own #define and #undef, what NVRTC always defines) and left
// undecided where it cannot (the value of __CUDA_ARCH__, a macro a header may define).

/** true, false, or null for "cannot tell without the compiler". */
export type Truth = boolean | null;

/** A macro's value as far as it is known: a number, defined with a value we cannot compute ('opaque'), or unknown. */
type MacroValue = number | 'opaque' | 'unknown';

/** What NVRTC defines itself: __CUDA_ARCH__'s value depends on the architecture, so it is only "defined". */
const PREDEFINED: ReadonlyArray<[string, MacroValue]> = [
  ['__CUDACC__', 1],
  ['__CUDACC_RTC__', 1],
  ['__NVCC__', 1],
  ['__CUDA_ARCH__', 'opaque'],
  ['__cplusplus', 'opaque'],
  ['__CUDACC_VER_MAJOR__', 'opaque'],
  ['__CUDACC_VER_MINOR__', 'opaque'],
];

export class Macros {
  private readonly values = new Map<string, MacroValue>(PREDEFINED);

  /** The -D and -U options of a compile, in order: -DNAME, -DNAME=VALUE, -D NAME, --define-macro=NAME, -UNAME. */
  static fromOptions(options: readonly string[]): Macros {
    const macros = new Macros();
    for (let i = 0; i < options.length; i += 1) {
      const option = options[i] as string;
      const define = /^(?:-D|--define-macro=?)(.*)$/.exec(option);
      const undef = /^(?:-U|--undefine-macro=?)(.*)$/.exec(option);
      const match = define ?? undef;
      if (!match) continue;
      const body = match[1] === '' ? (options[++i] ?? '') : (match[1] as string);
      const [name = '', ...value] = body.split('=');
      if (define) macros.define(name, value.length ? value.join('=') : '1', true);
      else macros.undefine(name, true);
    }
    return macros;
  }

  define(name: string, value: string, sure: Truth): void {
    if (sure === false) return;
    const number = parseInteger(value.trim());
    this.values.set(name, sure === null ? 'unknown' : (number ?? 'opaque'));
  }

  undefine(name: string, sure: Truth): void {
    if (sure === false) return;
    if (sure === null) this.values.set(name, 'unknown');
    else this.values.delete(name);
  }

  defined(name: string): Truth {
    const value = this.values.get(name);
    if (value === 'unknown') return null;
    return value !== undefined;
  }

  /** A macro's value in an #if: its number, 0 when undefined (as the preprocessor has it), null when unknown. */
  value(name: string): number | null {
    const value = this.values.get(name);
    if (value === undefined) return 0;
    return typeof value === 'number' ? value : null;
  }
}

function parseInteger(text: string): number | null {
  const match = /^([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)[uUlL]*$/.exec(text);
  if (!match) return null;
  const digits = match[2] as string;
  const value =
    digits.startsWith('0x') || digits.startsWith('0X')
      ? Number.parseInt(digits, 16)
      : digits.length > 1 && digits.startsWith('0')
        ? Number.parseInt(digits, 8)
        : Number(digits);
  return match[1] === '-' ? -value : value;
}

/** An #if or #elif expression's value: a number, or null when it depends on something not known here. */
export function evaluate(tokens: readonly Token[], macros: Macros): number | null {
  let pos = 0;
  const peek = () => tokens[pos]?.text;
  const take = () => tokens[pos++]?.text;
  const fail = (): never => {
    throw new Error('not an expression this evaluator understands');
  };
  // Each level returns a number or null (unknown); && and || short-circuit on a known operand, as cpp does.
  const primary = (): number | null => {
    const token = tokens[pos];
    if (!token) return fail();
    if (token.text === '(') {
      take();
      const value = conditional();
      if (take() !== ')') fail();
      return value;
    }
    if (token.text === '!' || token.text === '-' || token.text === '+' || token.text === '~') {
      take();
      const value = primary();
      if (value === null) return null;
      return token.text === '!' ? Number(!value) : token.text === '-' ? -value : token.text === '~' ? ~value : value;
    }
    if (token.text === 'defined') {
      take();
      const paren = peek() === '(';
      if (paren) take();
      const name = take() ?? fail();
      if (paren && take() !== ')') fail();
      const truth = macros.defined(name);
      return truth === null ? null : Number(truth);
    }
    take();
    if (token.kind === 'number') return parseInteger(token.text) ?? fail();
    if (token.kind === 'char') return null;
    if (token.kind === 'identifier') {
      if (token.text === 'true') return 1;
      if (token.text === 'false') return 0;
      // A function-like macro call cannot be expanded here.
      if (peek() === '(') return null;
      return macros.value(token.text);
    }
    return fail();
  };
  const BINARY: ReadonlyArray<readonly string[]> = [
    ['||'],
    ['&&'],
    ['|'],
    ['^'],
    ['&'],
    ['==', '!='],
    ['<', '>', '<=', '>='],
    ['<<', '>>'],
    ['+', '-'],
    ['*', '/', '%'],
  ];
  const binary = (level: number): number | null => {
    if (level >= BINARY.length) return primary();
    let left = binary(level + 1);
    while (BINARY[level]?.includes(peek() ?? '')) {
      const op = take() as string;
      const right = binary(level + 1);
      left = apply(op, left, right);
    }
    return left;
  };
  const conditional = (): number | null => {
    const test = binary(0);
    if (peek() !== '?') return test;
    take();
    const yes = conditional();
    if (take() !== ':') fail();
    const no = conditional();
    if (test === null) return yes === no ? yes : null;
    return test ? yes : no;
  };
  try {
    const value = conditional();
    return pos === tokens.length ? value : null;
  } catch {
    return null;
  }
}

function apply(op: string, a: number | null, b: number | null): number | null {
  if (op === '&&') return a === 0 || b === 0 ? 0 : a === null || b === null ? null : 1;
  if (op === '||') return (a !== null && a !== 0) || (b !== null && b !== 0) ? 1 : a === null || b === null ? null : 0;
  if (a === null || b === null) return null;
  switch (op) {
    case '|':
      return a | b;
    case '^':
      return a ^ b;
    case '&':
      return a & b;
    case '==':
      return Number(a === b);
    case '!=':
      return Number(a !== b);
    case '<':
      return Number(a < b);
    case '>':
      return Number(a > b);
    case '<=':
      return Number(a <= b);
    case '>=':
      return Number(a >= b);
    case '<<':
      return a << b;
    case '>>':
      return a >> b;
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? null : Math.trunc(a / b);
    case '%':
      return b === 0 ? null : a % b;
    default:
      return null;
  }
}

/** A number's truth in an #if, null staying null. */
export const truthOf = (value: number | null): Truth => (value === null ? null : value !== 0);
