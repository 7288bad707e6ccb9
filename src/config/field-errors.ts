import { type Document, isMap, isPair, isScalar, isSeq, type Pair, type YAMLMap } from 'yaml';
import type { z } from 'zod';
import { ConfigSchema } from './schema.js';
import { UsageError } from '../errors.js';
import { CONTROL, formatPath } from '../format.js';
import { adviseUnknownField } from './suggest.js';
import type { Locator } from './types.js';

// Where in the YAML a field is, and what a config that fails its schema is told: a field's line and column, the
// entry form the user meant, and text that would act on a terminal.

/**
 * The first string (a key or a value) holding a control character, with its path: names and descriptions are
 * printed, and `\u001b[2J` in a name would clear the user's terminal. Newlines and tabs are text.
 */
export function controlText(
  value: unknown,
  path: (string | number)[],
): { path: (string | number)[]; code: number } | null {
  if (typeof value === 'string') {
    const code = controlCode(value);
    return code === null ? null : { path: [...path], code };
  }
  // One path, grown and shrunk in place and copied only for the answer: a copy per value cost 100,000 arrays.
  const within = (key: string | number, item: unknown) => {
    path.push(key);
    const found = controlText(item, path);
    path.pop();
    return found;
  };
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = within(i, item);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const code = controlCode(key);
      if (code !== null) return { path: [...path, key], code };
      const found = within(key, item);
      if (found) return found;
    }
  }
  return null;
}

function controlCode(text: string): number | null {
  CONTROL.lastIndex = 0;
  const found = CONTROL.exec(text);
  return found ? (found[0].codePointAt(0) as number) : null;
}

/** Each override: where it lands in the config, and the flag that set it. */
/**
 * A `kernels:` entry that fits no form (a kernel, or a library stage's entry) is reported as the form the user meant:
 * the one whose fields they used (no unknown field at the entry's top), else the one with the fewest complaints.
 */
function meantIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    const isEntry = issue.path.length === 2 && issue.path[0] === 'kernels';
    if (issue.code !== 'invalid_union' || !isEntry || !issue.errors.length) return [issue];
    const strayKeys = (branch: readonly z.core.$ZodIssue[]) =>
      branch.filter((i) => i.code === 'unrecognized_keys' && i.path.length === 0).length;
    const [best] = [...issue.errors].sort((x, y) => strayKeys(x) - strayKeys(y) || x.length - y.length);
    return (best ?? []).map((i) => ({ ...i, path: [...issue.path, ...i.path] }));
  });
}

export function schemaError(error: z.ZodError, locate: Locator): UsageError {
  const issues = meantIssues(error.issues);
  const lines = issues.slice(0, 5).map((issue) => {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      // A file with 100 000 stray keys must not cost 100 000 look-ups; the first few say what is wrong.
      const shown = issue.keys.slice(0, 5);
      const more =
        issue.keys.length > shown.length ? `\n(and ${issue.keys.length - shown.length} more unknown fields)` : '';
      return (
        shown
          .map(
            (key) =>
              `${locate([...path, key])}: unknown field "${formatPath([...path, key])}"${adviseUnknownField(ConfigSchema, path, key)}`,
          )
          .join('\n') + more
      );
    }
    return `${locate(path)}: ${formatPath(path) || 'config'}: ${issue.message}`;
  });
  const more = issues.length > 5 ? `\n(and ${issues.length - 5} more)` : '';
  return new UsageError(`Invalid config:\n${lines.join('\n')}${more}`, {
    hint: 'Run `cuda-pipe schema` for the full config schema.',
  });
}

/** The offset of the deepest node on `path` that exists: the key for a map entry, so unknown fields point at it. */
export function nodeOffset(doc: Document, path: readonly (string | number)[]): number | null {
  let node: unknown = doc.contents;
  let offset: number | null = rangeStart(node);
  for (const segment of path) {
    if (isMap(node)) {
      const pair = pairsByKey(node).get(String(segment));
      if (!pair) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
      if (path[path.length - 1] !== segment) offset = rangeStart(node) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      offset = rangeStart(node) ?? offset;
    } else {
      break;
    }
  }
  return offset;
}

// Messages locate every buffer and argument; a linear search per look-up would make a 20 000-key map cost minutes.
const pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();

function pairsByKey(map: YAMLMap): Map<string, Pair> {
  let index = pairIndex.get(map);
  if (!index) {
    index = new Map();
    for (const item of map.items) {
      if (isPair(item) && isScalar(item.key) && !index.has(String(item.key.value)))
        index.set(String(item.key.value), item);
    }
    pairIndex.set(map, index);
  }
  return index;
}

function rangeStart(node: unknown): number | null {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? range[0] : null;
}
