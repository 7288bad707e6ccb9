import {
  type Alias,
  type Document,
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  visit,
} from 'yaml';
import { UsageError } from '../errors.js';
import { findExcessiveNesting, MAX_NESTING, valueDepthExceeds } from './nesting.js';

/**
 * Each alias (`*name`) may expand at most this many nodes in all; a real config needs a handful. The yaml package
 * weighs each alias by the size of what it copies, so "billion laughs" documents stop long before they grow.
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * The values a config may expand to, aliases expanded: a real config holds a few hundred, and 1 MiB of YAML without
 * aliases less than this. The alias limit alone
 * let 300 KB of YAML expand to 15 million values (4 GB) through 100 aliases of a large anchor.
 */
export const MAX_CONFIG_VALUES = 1_000_000;

export interface ParsedYaml {
  readonly doc: Document;
  readonly lineCounter: LineCounter;
  readonly value: unknown;
}

const STRUCTURE_HINT =
  'A config is a few levels deep (see configs/balanced.yaml); `cuda-pipe schema` lists every field.';

/**
 * YAML text → a plain value, refusing what would exhaust the parser before handing it the text: nesting beyond
 * MAX_NESTING levels, alias expansion beyond MAX_ALIAS_COUNT, and an empty file. Every refusal names the place.
 */
export function parseConfigYaml(text: string, path: string): ParsedYaml {
  if (text.trim() === '') throw emptyConfig(path);
  const deep = findExcessiveNesting(text);
  if (deep) throw tooDeep(`${path}:${linePosition(text, deep.offset)}`);
  const lineCounter = new LineCounter();
  // uniqueKeys: the parser's own check compares every key with every other (minutes for 100 000 keys); ours
  // below uses a set per map.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const where = (offset: number): string => {
    const { line, col } = lineCounter.linePos(offset);
    return `${path}:${line}:${col}`;
  };
  const firstError = doc.errors[0];
  if (firstError) {
    if (/call stack/i.test(firstError.message)) throw tooDeep(where(firstError.pos[0]));
    throw new UsageError(`${where(firstError.pos[0])}: YAML syntax error: ${firstError.message.split('\n')[0]}`);
  }
  const duplicate = firstDuplicateKey(doc);
  if (duplicate)
    throw new UsageError(
      `${where(duplicate.offset)}: YAML syntax error: the key "${duplicate.key}" appears twice in the same map.`,
    );
  if (expandedValues(doc) > MAX_CONFIG_VALUES) {
    throw new UsageError(
      `${path}: the YAML expands to more than ${MAX_CONFIG_VALUES} values with its aliases (*name) expanded; a config holds a few hundred.`,
      {
        hint: 'Write the repeated values out, or use fewer aliases of large anchors.',
      },
    );
  }
  const value = toPlainValue(doc, path);
  if (value === null || value === undefined) throw emptyConfig(path);
  if (valueDepthExceeds(value)) throw tooDeep(path);
  return { doc, lineCounter, value };
}

function toPlainValue(doc: Document, path: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep(path);
    if (error instanceof Error && /alias/i.test(error.message)) {
      throw new UsageError(
        `${path}: the YAML's aliases (*name) expand to more than ${MAX_ALIAS_COUNT} copies of their anchors; ` +
          'this is how "billion laughs" documents exhaust memory, so cuda-pipe does not expand it.',
        {
          hint: 'Write the repeated values out, or use fewer aliases of large anchors.',
        },
      );
    }
    throw new UsageError(
      `${path}: the YAML cannot be read as data: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function emptyConfig(path: string): UsageError {
  return new UsageError(`${path}: the config file is empty.`, {
    hint: 'A config needs at least buffers and kernels: start from configs/balanced.yaml, and run `cuda-pipe schema` for every field.',
  });
}

function tooDeep(where: string): UsageError {
  return new UsageError(
    `${where}: the YAML nests more than ${MAX_NESTING} levels deep, so cuda-pipe does not parse it.`,
    { hint: STRUCTURE_HINT },
  );
}

function linePosition(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return `${line}:${offset - lineStart + 1}`;
}

/** The first key that repeats within one map, by its scalar text, found in one pass with a set per map. */
function firstDuplicateKey(doc: Document): { key: string; offset: number } | null {
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isMap(node)) {
      const keys = new Set<string>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        if (isScalar(pair.key)) {
          const key = String(pair.key.value);
          if (keys.has(key)) return { key, offset: pair.key.range?.[0] ?? 0 };
          keys.add(key);
        }
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
  return null;
}

/**
 * The values (scalars, maps, lists, keys) the document holds once every alias is expanded, counted without expanding.
 */
function expandedValues(doc: Document): number {
  const targets = aliasTargets(doc);
  // Only an anchored node can be met twice (through an alias), so only those are remembered.
  const anchored = new Set<unknown>(targets.values());
  const sizes = new Map<unknown, number>();
  const size = (node: unknown): number => {
    const remember = anchored.has(node);
    if (remember) {
      const known = sizes.get(node);
      if (known !== undefined) return known;
      // An anchor met again while it is counted refers to itself: it would expand for ever.
      sizes.set(node, Number.POSITIVE_INFINITY);
    }
    let total = 1;
    if (isAlias(node)) total = size(targets.get(node));
    else if (isMap(node)) for (const pair of node.items) total += isPair(pair) ? size(pair.key) + size(pair.value) : 1;
    else if (isSeq(node)) for (const item of node.items) total += size(item);
    if (remember) sizes.set(node, total);
    return total;
  };
  return size(doc.contents);
}

/**
 * The node each alias stands for: the last node before it in the document with its anchor, as yaml's
 * `Alias.resolve` finds it, but in one walk of the document for all aliases; `resolve` walks the whole document for
 * each alias, which made 99 aliases of a 150,000-value anchor cost 15 million visits.
 */
function aliasTargets(doc: Document): Map<Alias, Node | undefined> {
  const anchored = new Map<string, Node>();
  const targets = new Map<Alias, Node | undefined>();
  visit(doc, {
    Node: (_key, node) => {
      if (isAlias(node)) targets.set(node, anchored.get(node.source));
      else if ((isScalar(node) || isCollection(node)) && node.anchor) anchored.set(node.anchor, node);
    },
  });
  return targets;
}
