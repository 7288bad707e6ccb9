import { type Frame, followDirective } from './branches.js';
import { Macros, type Truth } from './conditions.js';
import { ATTRIBUTE_CALLS, type KernelParam, parseParams } from './parameters.js';
import { isDirective, spell, type Token, tokenize } from './tokenize.js';

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

interface Declaration {
  readonly signature: Omit<KernelSignature, 'ambiguity'>;
  readonly state: Truth;
  /** The undecided condition inside its parameter list, or null. */
  readonly splitBy: string | null;
}

/**
 * Every `extern "C" __global__` function in a CUDA source (in an `extern "C" { }` block or declared one by one), with
 * its parameters classified, as the compiler sees it with `options`: declarations in `#if` branches the -D and -U
 * options (and the source's own #define) rule out are left out, and a kernel declared differently in branches that
 * cannot be decided here carries its alternatives.
 */
export function scanKernels(
  source: string,
  options: readonly string[] = [],
): { signatures: KernelSignature[]; excluded: ExcludedKernel[] } {
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
      if (found && statementState === false)
        excluded.push({ name: found.name, line: found.line, conditions: conditions(statementDepth) });
      else if (found) {
        const { splitParams: inside, ...signature } = found;
        const splitBy = inside.map((t) => undecidedInside.get(t)).find((c) => c !== undefined) ?? null;
        declarations.push({
          signature: { ...signature, conditions: conditions(statementDepth) },
          state: statementState,
          splitBy,
        });
      }
    }
    statement = [];
    undecidedInside.clear();
  };

  for (const item of tokenize(source)) {
    if (isDirective(item)) {
      // A declaration begun in a branch ends with it: `#if A / void k(float *x) / #else / void k(double *x) / #endif`
      // declares k twice, each head its own candidate, and the body after #endif belongs to whichever is compiled.
      if (
        ['elif', 'elifdef', 'elifndef', 'else', 'endif'].includes(item.name) &&
        statement.length &&
        statementDepth >= frames.length
      )
        finish();
      followDirective(item, frames, macros, regionState);
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
    if (state === null && frames.length > statementDepth)
      undecidedInside.set(item, frames[frames.length - 1]?.text ?? '');
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
  if (first?.text === 'extern' && second?.kind === 'string' && statement.length === 2)
    return second.text === '"C"' ? 'C' : 'C++';
  if (first?.text === 'namespace' && statement.length <= 2) return 'namespace';
  if (first?.text === 'inline' && statement[1]?.text === 'namespace' && statement.length <= 3) return 'namespace';
  return null;
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
  const text = spell(rest.slice(0, close + 1));
  return {
    name: name.text,
    params: parseParams(rest.slice(i + 1, close), typedefs),
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
      const others =
        chosen.state === true ? [] : candidates.filter((c) => c !== chosen && paramShape(c.signature.params) !== shape);
      const where = (d: Declaration) =>
        `line ${d.signature.line}${d.signature.conditions.length ? ` under ${d.signature.conditions.join(', ')}` : ''}` +
        `: ${formatSignature(d.signature)}`;
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

const paramShape = (params: readonly KernelParam[]): string =>
  params.map((p) => (p.kind === 'pointer' ? `${p.pointee}${'*'.repeat(p.depth)}` : String(p.type))).join(',');

export function formatSignature(signature: Pick<KernelSignature, 'name' | 'params'>): string {
  return `${signature.name}(${signature.params.map((p) => p.text).join(', ')})`;
}
