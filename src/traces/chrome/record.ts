// A Chrome trace event reduced, as soon as it is read, to the fields some format reads (each Chrome format declares
// them, `ChromeReads`): the streaming reader builds these without ever holding a whole event, and a document parsed
// whole (tests build them in code) goes through `recordOf`, so both paths hand the formats the same records. A field
// that holds an object or an array is kept only as that fact (`Nested`): no format reads one, and a hostile event
// must not make us hold it.

/** An object or array where a format expects a number or a string: kept as its kind, for the message. */
export interface Nested {
  readonly nested: 'object' | 'array';
}

export type Field = string | number | boolean | null | Nested | undefined;

/**
 * What a Chrome trace format reads of a document; the reader keeps the union of every registered format's, and
 * drops the rest as it streams.
 */
export interface ChromeReads {
  /** The event fields it reads (`ph`, `cat`, `ts`…). */
  readonly event: readonly string[];
  /** The fields of an event's `args` it reads. */
  readonly args: readonly string[];
  /** Args given as arrays of dimensions (`[16, 2, 4]`): kept as their product, the count. */
  readonly dimensions?: readonly string[];
  /** Top-level keys whose presence it tells the format by. */
  readonly topKeys?: readonly string[];
  /** Top-level values it reads: a key, or `key.member` for a member of a top-level object. */
  readonly topValues?: readonly string[];
  /** Top-level arrays of objects it reads, with the members read of each entry. */
  readonly topTables?: Readonly<Record<string, readonly string[]>>;
}

/** One event of `traceEvents`, with its place in that array for messages. */
export interface TraceRecord {
  readonly index: number;
  readonly event: Readonly<Record<string, Field>>;
  /** The event's `args` fields; empty where `args` is not an object. */
  readonly args: Readonly<Record<string, Field>>;
}

/** The kept events, in file order, held as bytes (store.ts) and each read back as a record as it is iterated. */
export interface TraceRecords extends Iterable<TraceRecord> {
  readonly length: number;
  /** The records a last time, their memory given back as the iteration passes it: nothing may read them after. */
  drain(): Iterable<TraceRecord>;
}

/** Whether an event is kept: for its own sake, only as the context of others (kept without its args), or not. */
export type Kept = 'event' | 'context' | false;

/** The top-level fields the formats read. */
export interface TopFields {
  /** The top-level keys of `ChromeReads.topKeys` the document has. */
  readonly keys: ReadonlySet<string>;
  /** Each value of `ChromeReads.topValues` the document has, by its path. */
  readonly values: Readonly<Record<string, Field>>;
  /** Each table of `ChromeReads.topTables` that is an array: its entries that are objects, their members read. */
  readonly tables: Readonly<Record<string, readonly Readonly<Record<string, Field>>[]>>;
}

/** Every format's reads together: what the reader keeps. */
export interface Reads {
  readonly event: ReadonlySet<string>;
  readonly args: ReadonlySet<string>;
  readonly dimensions: ReadonlySet<string>;
  readonly topKeys: ReadonlySet<string>;
  /** A top-level key → the members read of it: '' for the value itself. */
  readonly topValues: ReadonlyMap<string, readonly string[]>;
  readonly topTables: ReadonlyMap<string, readonly string[]>;
}

export function readsOf(all: readonly ChromeReads[]): Reads {
  const topValues = new Map<string, string[]>();
  for (const path of all.flatMap((r) => r.topValues ?? [])) {
    const dot = path.indexOf('.');
    const [key, member] = dot < 0 ? [path, ''] : [path.slice(0, dot), path.slice(dot + 1)];
    const members = topValues.get(key) ?? [];
    if (!members.includes(member)) members.push(member);
    topValues.set(key, members);
  }
  const topTables = new Map<string, string[]>();
  for (const [key, members] of all.flatMap((r) => Object.entries(r.topTables ?? {})))
    topTables.set(key, [...new Set([...(topTables.get(key) ?? []), ...members])]);
  return {
    event: new Set(all.flatMap((r) => r.event)),
    args: new Set(all.flatMap((r) => r.args)),
    dimensions: new Set(all.flatMap((r) => r.dimensions ?? [])),
    topKeys: new Set(all.flatMap((r) => r.topKeys ?? [])),
    topValues,
    topTables,
  };
}

/** A primitive as it is; an object or array as its kind. */
export function fieldOf(value: unknown): Field {
  if (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    value === undefined
  )
    return value;
  return Array.isArray(value) ? NESTED_ARRAY : NESTED_OBJECT;
}

export const NESTED_OBJECT: Nested = Object.freeze({ nested: 'object' });
export const NESTED_ARRAY: Nested = Object.freeze({ nested: 'array' });

/** A field as a message shows it: JSON for a primitive, "an object" or "an array" otherwise. */
export function shown(value: Field): string {
  if (typeof value === 'object' && value !== null) return `an ${value.nested}`;
  return JSON.stringify(value) ?? 'nothing';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The record of a parsed event, or null where the item is not an object (null, a number, a string). */
export function recordOf(item: unknown, index: number, reads: Reads): TraceRecord | null {
  if (typeof item !== 'object' || item === null) return null;
  const raw = item as Record<string, unknown>;
  const event: Record<string, Field> = {};
  for (const key of reads.event) if (Object.hasOwn(raw, key)) event[key] = fieldOf(raw[key]);
  const args: Record<string, Field> = {};
  const rawArgs = raw.args;
  if (isObject(rawArgs))
    for (const key of reads.args) {
      if (!Object.hasOwn(rawArgs, key)) continue;
      const value = rawArgs[key];
      args[key] = reads.dimensions.has(key) && Array.isArray(value) ? dimensionsOf(value) : fieldOf(value);
    }
  return { index, event, args };
}

/** The product of an array of dimensions; the array's kind where one is not a count. */
export function dimensionsOf(values: readonly unknown[]): Field {
  let product = 1;
  for (const v of values) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return NESTED_ARRAY;
    product *= v;
  }
  return product;
}

/** The top-level fields of a document parsed whole. */
export function topFieldsOf(document: Record<string, unknown>, reads: Reads): TopFields {
  const values: Record<string, Field> = {};
  for (const [key, members] of reads.topValues) {
    if (!Object.hasOwn(document, key)) continue;
    const value = document[key];
    for (const member of members) {
      if (member === '') values[key] = fieldOf(value);
      else if (isObject(value) && Object.hasOwn(value, member)) values[`${key}.${member}`] = fieldOf(value[member]);
    }
  }
  const tables: Record<string, Readonly<Record<string, Field>>[]> = {};
  for (const [key, members] of reads.topTables) {
    const table = document[key];
    if (!Array.isArray(table)) continue;
    tables[key] = table.filter(isObject).map((entry) => {
      const out: Record<string, Field> = {};
      for (const member of members) if (Object.hasOwn(entry, member)) out[member] = fieldOf(entry[member]);
      return out;
    });
  }
  return { keys: new Set(Object.keys(document).filter((k) => reads.topKeys.has(k))), values, tables };
}
