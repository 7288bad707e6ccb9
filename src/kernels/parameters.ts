import type { ElementType, ScalarType } from '../vocabulary.js';
import { spell, type Token } from './tokenize.js';

// A kernel parameter as cuda-pipe can pass it: the C spelling of its type read as a pointer to elements of a known
// type, a scalar koffi can encode, or neither (a struct, a reference, a function pointer), which no config can fill.

export type KernelParam =
  | {
      readonly kind: 'pointer';
      readonly name: string;
      readonly text: string;
      /** The element type the pointer points at; 'any' for void and char pointers, null when we cannot tell. */
      readonly pointee: ElementType | 'any' | null;
      readonly isConst: boolean;
      /** 1 for `float *x` and `float x[]`, 2 for `float **x`: only 1 can take a buffer. */
      readonly depth: number;
    }
  | {
      readonly kind: 'scalar';
      readonly name: string;
      readonly text: string;
      /** null for scalar types we cannot encode (structs, references, __half by value). */
      readonly type: ScalarType | null;
    };

const SCALAR_SPELLINGS: ReadonlyArray<[string[], ScalarType]> = [
  [['float'], 'float32'],
  [['double'], 'float64'],
  [['int', 'signed', 'signed int', 'int32_t'], 'int32'],
  [['unsigned', 'unsigned int', 'uint32_t', 'uint'], 'uint32'],
  [
    [
      'long long',
      'long long int',
      'signed long long',
      'signed long long int',
      'long',
      'long int',
      'signed long',
      'int64_t',
      'ptrdiff_t',
      'ssize_t',
      'intptr_t',
    ],
    'int64',
  ],
  [
    [
      'unsigned long long',
      'unsigned long long int',
      'unsigned long',
      'unsigned long int',
      'uint64_t',
      'size_t',
      'uintptr_t',
    ],
    'uint64',
  ],
  [['short', 'short int', 'signed short', 'signed short int', 'int16_t'], 'int16'],
  [['unsigned short', 'unsigned short int', 'uint16_t'], 'uint16'],
  [['char', 'signed char', 'int8_t'], 'int8'],
  [['unsigned char', 'uint8_t'], 'uint8'],
];
const SCALAR_BY_SPELLING = new Map(
  SCALAR_SPELLINGS.flatMap(([spellings, type]) => spellings.map((s) => [s, type] as const)),
);

const POINTEE_BY_SPELLING: ReadonlyMap<string, ElementType | 'any'> = new Map([
  ['float', 'float32'],
  ['double', 'float64'],
  ['int', 'int32'],
  ['int32_t', 'int32'],
  ['signed int', 'int32'],
  ['signed', 'int32'],
  ['unsigned', 'uint32'],
  ['unsigned int', 'uint32'],
  ['uint32_t', 'uint32'],
  ['unsigned char', 'uint8'],
  ['uint8_t', 'uint8'],
  ['__half', 'float16'],
  ['half', 'float16'],
  ['unsigned short', 'float16'],
  ['uint16_t', 'float16'],
  ['__nv_bfloat16', 'bfloat16'],
  ['nv_bfloat16', 'bfloat16'],
  ['void', 'any'],
  ['char', 'any'],
]);

/** Words that qualify a parameter without changing what is passed. */
const QUALIFIERS = new Set([
  'const',
  'volatile',
  '__restrict__',
  '__restrict',
  'restrict',
  '__grid_constant__',
  'register',
]);
/** Attributes written as a call: their parenthesised arguments are not the parameter list. */
export const ATTRIBUTE_CALLS = new Set([
  '__launch_bounds__',
  '__attribute__',
  '__declspec',
  '__align__',
  'alignas',
  '__maxnreg__',
  '__cluster_dims__',
]);

/** A kernel's parameters from the tokens between its parentheses, typedef'd names seen through; `(void)` is none. */
export function parseParams(tokens: readonly Token[], typedefs: ReadonlyMap<string, Token[]>): KernelParam[] {
  const params = splitParams(tokens).map((p, index) => parseParam(p, index, typedefs));
  return params.length === 1 && params[0]?.text === 'void' ? [] : params;
}

/**
 * A parameter list split at its top-level commas; `<...>` groups in a type count as brackets, a default value does not.
 */
function splitParams(tokens: readonly Token[]): Token[][] {
  const params: Token[][] = [];
  let current: Token[] = [];
  let depth = 0;
  let angle = 0;
  let inDefault = false;
  for (const token of tokens) {
    if (token.text === '(' || token.text === '[' || token.text === '{') depth += 1;
    if (token.text === ')' || token.text === ']' || token.text === '}') depth -= 1;
    if (!inDefault && depth === 0 && token.text === '<') angle += 1;
    if (!inDefault && depth === 0 && token.text === '>' && angle > 0) angle -= 1;
    if (depth === 0 && token.text === '=' && angle === 0) inDefault = true;
    if (depth === 0 && angle === 0 && token.text === ',') {
      params.push(current);
      current = [];
      inDefault = false;
      continue;
    }
    current.push(token);
  }
  if (current.length || params.length) params.push(current);
  return params;
}

function parseParam(tokens: readonly Token[], index: number, typedefs: ReadonlyMap<string, Token[]>): KernelParam {
  const equals = tokens.findIndex((t) => t.text === '=');
  const declarator = equals < 0 ? tokens : tokens.slice(0, equals);
  const text = spell(tokens);
  const expanded = expandTypedefs(
    declarator.filter((t) => !ATTRIBUTE_CALLS.has(t.text)),
    typedefs,
  );
  const isConst = expanded.some((t) => t.text === 'const');
  // A function pointer, a reference or a pack: nothing cuda-pipe can pass.
  const unusual = expanded.some(
    (t) => t.text === '(' || t.text === '&' || t.text === '&&' || t.text === '...' || t.text === '<',
  );
  let depth = expanded.filter((t) => t.text === '*').length;
  // Array parameters decay to pointers: `float x[]` is `float *x`; a further dimension makes it a pointer to arrays.
  const dimensions = expanded.filter((t) => t.text === '[').length;
  depth += Math.min(dimensions, 1);
  const words = expanded
    .filter((t) => t.kind === 'identifier' && !QUALIFIERS.has(t.text) && !inBrackets(expanded, t))
    .map((t) => t.text)
    .filter((word, i, all) => !(word === 'std' && all[i + 1] !== undefined));
  const typeWords = [...words];
  const spelled = SCALAR_BY_SPELLING.has(typeWords.join(' ')) || POINTEE_BY_SPELLING.has(typeWords.join(' '));
  // A function pointer's name is inside its first parentheses: float (*fn)(float).
  const pointerTo = expanded.findIndex((t, i) => t.text === '(' && expanded[i + 1]?.text === '*');
  const functionName =
    pointerTo >= 0 ? expanded.slice(pointerTo).find((t) => t.kind === 'identifier')?.text : undefined;
  const name = functionName ?? (typeWords.length > 1 && !spelled ? (typeWords.pop() as string) : `arg${index}`);
  const base = typeWords.join(' ');
  if (!unusual && depth > 0) {
    return {
      kind: 'pointer',
      name,
      text,
      pointee: dimensions > 1 ? null : (POINTEE_BY_SPELLING.get(base) ?? null),
      isConst,
      depth,
    };
  }
  return { kind: 'scalar', name, text, type: unusual ? null : (SCALAR_BY_SPELLING.get(base) ?? null) };
}

function inBrackets(tokens: readonly Token[], token: Token): boolean {
  let depth = 0;
  for (const t of tokens) {
    if (t === token) return depth > 0;
    if (t.text === '[') depth += 1;
    if (t.text === ']') depth -= 1;
  }
  return false;
}

/** A parameter's tokens with each typedef'd name (typedef float real;) replaced by what it names, a few levels deep. */
function expandTypedefs(tokens: readonly Token[], typedefs: ReadonlyMap<string, Token[]>): Token[] {
  let current = [...tokens];
  for (let level = 0; level < 8; level += 1) {
    const next = current.flatMap((t, i) => {
      const target = typedefs.get(t.text);
      // The last identifier is the parameter's name, never a type, unless nothing else names a type.
      const isName =
        i === current.length - 1 && current.slice(0, i).some((p) => p.kind === 'identifier' && !QUALIFIERS.has(p.text));
      return target && !isName ? target : [t];
    });
    if (next.length === current.length && next.every((t, i) => t === current[i])) return next;
    // A typedef that names several words per level must not grow a parameter without bound.
    if (next.length > 64) return current;
    current = next;
  }
  return current;
}
