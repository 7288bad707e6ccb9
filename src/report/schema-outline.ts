import { DEFAULT_COLUMNS, fitLines } from './width.js';

// `schema` at a terminal: the fields of a JSON Schema as an outline a person reads, one field a line with its type
// and description, every line within the width. The JSON Schema itself is a document, written whole to a pipe or a
// file (`cuda-pipe schema > cuda-pipe.schema.json`): a JSON string cannot wrap, and its descriptions run to 275
// columns (issue 39).

/** The part of JSON Schema the outline reads. */
interface Node {
  readonly type?: string | readonly string[];
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Node>>;
  readonly required?: readonly string[];
  readonly items?: Node;
  readonly additionalProperties?: Node | boolean;
  readonly anyOf?: readonly Node[];
  readonly oneOf?: readonly Node[];
  readonly minimum?: number;
  readonly title?: string;
}

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A node's type in a few words: `integer ≥ 1`, `"auto" or integer`, `array of object`. */
function typeOf(node: Node): string {
  const branches = node.anyOf ?? node.oneOf;
  if (branches) return [...new Set(branches.map(typeOf))].join(' or ');
  if (node.const !== undefined) return shown(node.const);
  if (node.enum) return node.enum.map(shown).join(' | ');
  const type = typeof node.type === 'string' ? node.type : (node.type?.join(' or ') ?? 'any');
  if (type === 'array' && node.items) return `array of ${typeOf(node.items)}`;
  if ((type === 'integer' || type === 'number') && node.minimum !== undefined && node.minimum > Number.MIN_SAFE_INTEGER)
    return `${type} ≥ ${node.minimum}`;
  return type;
}

/** The objects a node holds fields of: itself, its items, its map's values and each branch's. */
function objectsIn(node: Node): Node[] {
  if (node.properties) return [node];
  if (node.items) return objectsIn(node.items);
  if (typeof node.additionalProperties === 'object') return objectsIn(node.additionalProperties);
  return [...(node.anyOf ?? []), ...(node.oneOf ?? [])].flatMap(objectsIn);
}

/** Where a node's fields go in a path: `[]` for an array's items, `.*` for a map's values. */
function suffix(node: Node): string {
  if (node.items) return '[]';
  if (typeof node.additionalProperties === 'object' && !node.properties) return '.*';
  return '';
}

function lines(node: Node, path: string, depth: number, seen: Set<string>): string[] {
  const out: string[] = [];
  for (const object of objectsIn(node)) {
    for (const [name, field] of Object.entries(object.properties ?? {})) {
      const at = path ? `${path}.${name}` : name;
      if (seen.has(at)) continue;
      seen.add(at);
      const required = object.required?.includes(name) ? ', required' : '';
      out.push(
        `${'  '.repeat(depth)}${at} (${typeOf(field)}${required})${field.description ? `: ${field.description}` : ''}`,
      );
      out.push(...lines(field, at + suffix(field), depth + 1, seen));
    }
  }
  return out;
}

/** Every field of `schema`, one a line with its type and description, indented by depth, within `columns`. */
export function renderSchemaOutline(document: unknown, command: string, columns = DEFAULT_COLUMNS): string {
  // The schemas zod writes (config, Result, analysis) hold only the keywords Node reads, and others it skips.
  const schema = document as Node;
  const head = `${schema.title ?? 'JSON Schema'}: its fields. The JSON Schema itself goes to a pipe or a file: ${command} > schema.json`;
  return fitLines([head, '', ...lines(schema, suffix(schema), 0, new Set())].join('\n'), columns);
}
