import { distance } from 'fastest-levenshtein';

/** The parts of a zod 4 schema's definition that lead from an object to the objects inside it. */
interface SchemaDef {
  readonly type: string;
  readonly shape?: Readonly<Record<string, unknown>>;
  readonly innerType?: unknown;
  readonly in?: unknown;
  readonly valueType?: unknown;
  readonly element?: unknown;
  readonly options?: readonly unknown[];
}

const defOf = (schema: unknown): SchemaDef | null =>
  (schema as { _zod?: { def?: SchemaDef } } | null)?._zod?.def ?? null;

/** Follows wrappers (default, optional, pipe) to the schema that checks the value itself. */
function unwrap(schema: unknown): SchemaDef | null {
  let def = defOf(schema);
  for (let guard = 0; def && guard < 16; guard += 1) {
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner === undefined) return def;
    def = defOf(inner);
  }
  return def;
}

/** The field names an object at `path` (from a config's root) may have, or [] when no object schema is there. */
export function knownFieldsAt(root: unknown, path: readonly (string | number)[]): string[] {
  let def = unwrap(root);
  for (const segment of path) {
    if (!def) return [];
    // A union of objects (a `kernels:` entry: a kernel or a library stage) goes on through the option with the field.
    if (def.type === 'union')
      def =
        (def.options ?? [])
          .map(unwrap)
          .find((o) => o?.type === 'object' && typeof segment === 'string' && o.shape?.[segment] !== undefined) ?? null;
    if (!def) return [];
    if (def.type === 'object' && typeof segment === 'string') def = unwrap(def.shape?.[segment]);
    else if (def.type === 'record') def = unwrap(def.valueType);
    else if (def.type === 'array') def = unwrap(def.element);
    else return [];
  }
  if (def?.type === 'union')
    return [
      ...new Set(
        (def.options ?? []).map(unwrap).flatMap((o) => (o?.type === 'object' ? Object.keys(o.shape ?? {}) : [])),
      ),
    ];
  return def?.type === 'object' ? Object.keys(def.shape ?? {}) : [];
}

/**
 * The known name closest to a misspelt one, when it is close enough to be the likely intent: within a third of the
 * name's length (at least 1, at most 3 edits), or the same name in another case.
 */
export function nearestName(unknown: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = name.toLowerCase() === unknown.toLowerCase() ? 0 : distance(unknown, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(unknown.length / 3)));
  return best !== null && bestDistance <= allowed ? best : null;
}

/** Where a known field of another object lives, for a field put at the wrong level ("chunks" at the top). */
export function homeOfField(root: unknown, field: string): string | null {
  const top = knownFieldsAt(root, []);
  for (const section of top) {
    if (knownFieldsAt(root, [section]).includes(field)) return section;
  }
  return null;
}

/** What to add to "unknown field" for `key` in the object at `path`: the likely intended name, or its right place. */
export function adviseUnknownField(root: unknown, path: readonly (string | number)[], key: string): string {
  const known = knownFieldsAt(root, path);
  // Known here, yet unknown to the entry: a field of another of its forms (a `kernels:` entry with gemm: and matmul:).
  if (known.includes(key))
    return `; "${key}" is a field of another form of this entry than its other fields: an entry takes one form (split it into two entries)`;
  const near = nearestName(key, known);
  if (near) return `; did you mean "${near}"?`;
  const home = path.length === 0 ? homeOfField(root, key) : null;
  return home ? `; it belongs under ${home} (${home}.${key})` : '';
}
