import type { ElementType, ScalarType } from '../vocabulary.js';
import { evaluate, Macros, type Truth, truthOf } from './conditions.js';
import { type Directive, isDirective, spell, type Token, tokenize } from './tokenize.js';

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

export interface KernelSignature {
  readonly name: string;
  readonly params: readonly KernelParam[];
  /** 1-based line of the declaration in the source. */
  readonly line: number;
  readonly text: string;
  /** The preprocessor conditions it is declared under, as written ("#ifdef USE_DOUBLE"), outermost first. */
  readonly conditions: readonly string[];
  /**
   * Why the parameters NVRTC compiles cannot be known here, or null: the kernel is declared with other parameters
   * under conditions that cannot be decided without the compiler (`#if __CUDA_ARCH__ >= 800`), or its parameter list
   * itself holds such a condition.
   */
  readonly ambiguity: string | null;
}

/** A kernel declared only in branches the compiler skips with these options, for the "not found" hint. */
export interface ExcludedKernel {
  readonly name: string;
  readonly line: number;
  readonly conditions: readonly string[];
}

const SCALAR_SPELLINGS: ReadonlyArray<[string[], ScalarType]> = [
  [['float'], 'float32'],
  [['double'], 'float64'],
  [['int', 'signed', 'signed int', 'int32_t'], 'int32'],
  [['unsigned', 'unsigned int', 'uint32_t', 'uint'], 'uint32'],
  [['long long', 'long long int', 'signed long long', 'signed long long int', 'long', 'long int', 'signed long', 'int64_t', 'ptrdiff_t', 'ssize_t', 'intptr_t'], 'int64'],
  [['unsigned long long', 'unsigned long long int', 'unsigned long', 'unsigned long int', 'uint64_t', 'size_t', 'uintptr_t'], 'uint64'],
  [['short', 'short int', 'signed short', 'signed short int', 'int16_t'], 'int16'],
  [['unsigned short', 'unsigned short int', 'uint16_t'], 'uint16'],
  [['char', 'signed char', 'int8_t'], 'int8'],
  [['unsigned char', 'uint8_t'], 'uint8'],
];
const SCALAR_BY_SPELLING = new Map(SCALAR_SPELLINGS.flatMap(([spellings, type]) => spellings.map((s) => [s, type] as const)));

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
const QUALIFIERS = new Set(['const', 'volatile', '__restrict__', '__restrict', 'restrict', '__grid_constant__', 'register']);
/** Attributes written as a call: their parenthesised arguments are not the parameter list. */
const ATTRIBUTE_CALLS = new Set(['__launch_bounds__', '__attribute__', '__declspec', '__align__', 'alignas', '__maxnreg__', '__cluster_dims__']);

interface Declaration {
  readonly signature: Omit<KernelSignature, 'ambiguity'>;
  readonly state: Truth;
  /** The undecided condition inside its parameter list, or null. */
  readonly splitBy: string | null;
}

/** A branch of an #if group: whether it is taken, whether an earlier one was, and how it reads in messages. */
interface Frame {
  state: Truth;
  /** This branch's state with every enclosing one's, kept so that a token's region costs nothing at any depth. */
  combined: Truth;
  taken: Truth;
  text: string;
  readonly opening: string;
}

/**
 * Every `extern "C" __global__` function in a CUDA source (in an `extern "C" { }` block or declared one by one), with
 * its parameters classified, as the compiler sees it with `options`: declarations in `#if` branches the -D and -U
 * options (and the source's own #define) rule out are left out, and a kernel declared differently in branches that
 * cannot be decided here carries its alternatives.
 */
export function scanKernels(source: string, options: readonly string[] = []): { signatures: KernelSignature[]; excluded: ExcludedKernel[] } {
  const macros = Macros.fromOptions(options);
  const typedefs = new Map<string, Token[]>();
  const frames: Frame[] = [];
  const declarations: Declaration[] = [];
  const excluded: ExcludedKernel[] = [];
  // Not `?? true`: null (undecided) is a state of its own.
  const combinedOf = (frame: Frame | undefined): Truth => (frame ? frame.combined : true);
  const regionState = (): Truth => combinedOf(frames[frames.length - 1]);
  // The enclosing frames of an open declaration do not change before it ends (an #else or #endif of theirs ends it).
  const conditions = (depth: number) => frames.slice(0, depth).map((f) => f.text);
  // Braces that only group declarations (extern "C" { }, namespace { }): the linkage inside each, innermost last.
  const linkage: boolean[] = [];
  let statement: Token[] = [];
  let statementState: Truth = true;
  let statementDepth = 0;
  let bodyDepth = 0;
  let bodyState: Truth = true;
  // Tokens of a declaration that lie in an undecided branch opened after the declaration began, and that branch.
  const undecidedInside = new Map<Token, string>();

  const finish = () => {
    if (statement.length) {
      const found = declaration(statement, linkage[linkage.length - 1] ?? false, typedefs, statementState);
      if (found && statementState === false) excluded.push({ name: found.name, line: found.line, conditions: conditions(statementDepth) });
      else if (found) {
        const { splitParams: inside, ...signature } = found;
        const splitBy = inside.map((t) => undecidedInside.get(t)).find((c) => c !== undefined) ?? null;
        declarations.push({ signature: { ...signature, conditions: conditions(statementDepth) }, state: statementState, splitBy });
      }
    }
    statement = [];
    undecidedInside.clear();
  };

  for (const item of tokenize(source)) {
    if (isDirective(item)) {
      // A declaration begun in a branch ends with it: `#if A / void k(float *x) / #else / void k(double *x) / #endif`
      // declares k twice, each head its own candidate, and the body after #endif belongs to whichever is compiled.
      if (['elif', 'elifdef', 'elifndef', 'else', 'endif'].includes(item.name) && statement.length && statementDepth >= frames.length) finish();
      directive(item, frames, macros, regionState);
      continue;
    }
    const state = regionState();
    if (bodyDepth > 0) {
      if (state !== false || bodyState === false) bodyDepth += item.text === '{' ? 1 : item.text === '}' ? -1 : 0;
      continue;
    }
    if (!statement.length) {
      statementState = state;
      statementDepth = frames.length;
    } else if (state === false && statementState !== false) {
      // The preprocessor drops a skipped branch inside a declaration it keeps.
      continue;
    } else if (state !== statementState && statementState !== false) {
      statementState = null;
    }
    if (state === null && frames.length > statementDepth) undecidedInside.set(item, frames[frames.length - 1]?.text ?? '');
    if (item.text === '{') {
      const group = groupOf(statement);
      if (group) {
        linkage.push(group === 'namespace' ? (linkage[linkage.length - 1] ?? false) : group === 'C');
        statement = [];
      } else {
        finish();
        bodyDepth = 1;
        bodyState = state;
      }
      continue;
    }
    if (item.text === '}') {
      linkage.pop();
      statement = [];
      continue;
    }
    if (item.text === ';') {
      finish();
      continue;
    }
    statement.push(item);
  }
  return { signatures: resolveCandidates(declarations), excluded };
}

/** Every `extern "C" __global__` function as the compiler sees it with `options` (see scanKernels). */
export function parseKernelSignatures(source: string, options: readonly string[] = []): KernelSignature[] {
  return scanKernels(source, options).signatures;
}

function groupOf(statement: readonly Token[]): 'C' | 'C++' | 'namespace' | null {
  const [first, second] = statement;
  if (first?.text === 'extern' && second?.kind === 'string' && statement.length === 2) return second.text === '"C"' ? 'C' : 'C++';
  if (first?.text === 'namespace' && statement.length <= 2) return 'namespace';
  if (first?.text === 'inline' && statement[1]?.text === 'namespace' && statement.length <= 3) return 'namespace';
  return null;
}

const both = (outer: Truth, inner: Truth): Truth => (outer === false || inner === false ? false : outer === null || inner === null ? null : true);

function directive(item: Directive, frames: Frame[], macros: Macros, regionState: () => Truth): void {
  const top = frames[frames.length - 1];
  const outerFrame = frames[frames.length - 2];
  const outer = outerFrame ? outerFrame.combined : true;
  const ifValue = (): Truth => {
    if (item.name === 'ifdef' || item.name === 'ifndef') {
      const defined = macros.defined(item.tokens[0]?.text ?? '');
      return defined === null ? null : item.name === 'ifdef' ? defined : !defined;
    }
    return truthOf(evaluate(item.tokens, macros));
  };
  switch (item.name) {
    case 'if':
    case 'ifdef':
    case 'ifndef': {
      const value = ifValue();
      frames.push({ state: value, combined: both(top ? top.combined : true, value), taken: value, text: `${item.text} (line ${item.line})`, opening: item.text });
      return;
    }
    case 'elif':
    case 'elifdef':
    case 'elifndef': {
      if (!top) return;
      const value = item.name === 'elif' ? truthOf(evaluate(item.tokens, macros)) : ifValue();
      top.state = top.taken === true ? false : top.taken === null ? (value === false ? false : null) : value;
      top.taken = top.taken === true || value === true ? true : top.taken === null || value === null ? null : false;
      top.text = `${item.text} (line ${item.line}) after ${top.opening}`;
      top.combined = both(outer, top.state);
      return;
    }
    case 'else':
      if (!top) return;
      top.state = top.taken === true ? false : top.taken === null ? null : true;
      top.taken = true;
      top.text = `#else (line ${item.line}) of ${top.opening}`;
      top.combined = both(outer, top.state);
      return;
    case 'endif':
      frames.pop();
      return;
    case 'define': {
      const [name, ...rest] = item.tokens;
      // A function-like macro (NAME( with no space) is not a value an #if can use.
      if (name) macros.define(name.text, rest[0]?.text === '(' ? '' : rest.map((t) => t.text).join(' '), regionState());
      return;
    }
    case 'undef':
      if (item.tokens[0]) macros.undefine(item.tokens[0].text, regionState());
      return;
    default:
  }
}

/** The kernel a top-level declaration declares, when it is an extern "C" __global__ void function. */
function declaration(
  tokens: readonly Token[],
  linkageC: boolean,
  typedefs: Map<string, Token[]>,
  state: Truth,
): (Omit<KernelSignature, 'ambiguity' | 'conditions'> & { splitParams: readonly Token[] }) | null {
  let rest = [...tokens];
  if (rest[0]?.text === 'typedef' && state === true) {
    const alias = rest[rest.length - 1];
    if (alias?.kind === 'identifier' && !rest.some((t) => t.text === '(')) typedefs.set(alias.text, rest.slice(1, -1));
    return null;
  }
  if (rest[0]?.text === 'using' && rest[2]?.text === '=' && rest[1] && state === true) {
    typedefs.set(rest[1].text, rest.slice(3));
    return null;
  }
  let externC = linkageC;
  if (rest[0]?.text === 'extern' && rest[1]?.kind === 'string') {
    externC = rest[1].text === '"C"';
    rest = rest.slice(2);
  }
  if (!externC || !rest.some((t) => t.text === '__global__') || rest.some((t) => t.text === 'template')) return null;
  const prefix: Token[] = [];
  let i = 0;
  while (i < rest.length) {
    const token = rest[i] as Token;
    if (ATTRIBUTE_CALLS.has(token.text) && rest[i + 1]?.text === '(') {
      i = closing(rest, i + 1) + 1;
      continue;
    }
    if (token.text === '[' && rest[i + 1]?.text === '[') {
      i = closing(rest, i) + 1;
      continue;
    }
    if (token.text === '(') break;
    prefix.push(token);
    i += 1;
  }
  const name = prefix.pop();
  if (name?.kind !== 'identifier' || i >= rest.length || prefix[prefix.length - 1]?.text === '::') return null;
  if (!prefix.some((t) => t.text === 'void') || prefix.some((t) => t.text === '*' || t.text === '&')) return null;
  const close = closing(rest, i);
  const params = splitParams(rest.slice(i + 1, close)).map((p, index) => parseParam(p, index, typedefs));
  const text = spell(rest.slice(0, close + 1));
  return {
    name: name.text,
    params: params.length === 1 && params[0]?.text === 'void' ? [] : params,
    line: tokens[0]?.line ?? name.line,
    text,
    splitParams: rest.slice(i + 1, close),
  };
}

/** The index of the bracket that closes the one at `open` (or the last token when it is never closed). */
function closing(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i += 1) {
    const text = (tokens[i] as Token).text;
    if (text === '(' || text === '[' || text === '{') depth += 1;
    if (text === ')' || text === ']' || text === '}') depth -= 1;
    if (depth === 0) return i;
  }
  return tokens.length - 1;
}

/** A parameter list split at its top-level commas; `<...>` groups in a type count as brackets, a default value does not. */
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
  const unusual = expanded.some((t) => t.text === '(' || t.text === '&' || t.text === '&&' || t.text === '...' || t.text === '<');
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
  const functionName = pointerTo >= 0 ? expanded.slice(pointerTo).find((t) => t.kind === 'identifier')?.text : undefined;
  const name = functionName ?? (typeWords.length > 1 && !spelled ? (typeWords.pop() as string) : `arg${index}`);
  const base = typeWords.join(' ');
  if (!unusual && depth > 0) {
    return { kind: 'pointer', name, text, pointee: dimensions > 1 ? null : (POINTEE_BY_SPELLING.get(base) ?? null), isConst, depth };
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
      const isName = i === current.length - 1 && current.slice(0, i).some((p) => p.kind === 'identifier' && !QUALIFIERS.has(p.text));
      return target && !isName ? target : [t];
    });
    if (next.length === current.length && next.every((t, i) => t === current[i])) return next;
    // A typedef that names several words per level must not grow a parameter without bound.
    if (next.length > 64) return current;
    current = next;
  }
  return current;
}

/** One signature per kernel name: the declaration the compiler will see, or why that cannot be known here. */
function resolveCandidates(declarations: readonly Declaration[]): KernelSignature[] {
  const byName = new Map<string, Declaration[]>();
  for (const d of declarations) {
    const list = byName.get(d.signature.name);
    if (list) list.push(d);
    else byName.set(d.signature.name, [d]);
  }
  return [...byName.values()]
    .map((candidates) => {
      const chosen = (candidates.find((c) => c.state === true) ?? candidates[0]) as Declaration;
      const shape = paramShape(chosen.signature.params);
      // With C linkage two different declarations do not compile, so one the compiler surely sees settles it.
      const others = chosen.state === true ? [] : candidates.filter((c) => c !== chosen && paramShape(c.signature.params) !== shape);
      const where = (d: Declaration) =>
        `line ${d.signature.line}${d.signature.conditions.length ? ` under ${d.signature.conditions.join(', ')}` : ''}` + `: ${formatSignature(d.signature)}`;
      const ambiguity =
        chosen.splitBy !== null
          ? `its parameter list changes with ${chosen.splitBy}, which cuda-pipe cannot decide without the compiler`
          : others.length
            ? `it is declared with different parameters under conditions cuda-pipe cannot decide without the compiler (${[chosen, ...others].map(where).join('; ')})`
            : null;
      return { ...chosen.signature, ambiguity };
    })
    .sort((a, b) => a.line - b.line);
}

const paramShape = (params: readonly KernelParam[]): string => params.map((p) => (p.kind === 'pointer' ? `${p.pointee}${'*'.repeat(p.depth)}` : String(p.type))).join(',');

export function formatSignature(signature: Pick<KernelSignature, 'name' | 'params'>): string {
  return `${signature.name}(${signature.params.map((p) => p.text).join(', ')})`;
}
