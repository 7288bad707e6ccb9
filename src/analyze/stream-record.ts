// A trace event reduced, as soon as it is read, to the fields some trace format reads: the streaming reader builds
// these from JSON tokens without ever holding a whole event, and a document parsed whole (tests build them in code)
// goes through `recordOf`, so both paths hand the format parsers the same records. A field that holds an object or
// an array is kept only as that fact (`Nested`): no format reads one, and a hostile event must not make us hold it.

/** An object or array where a format expects a number or a string: kept as its kind, for the message. */
export interface Nested {
  readonly nested: 'object' | 'array';
}

export type Field = string | number | boolean | null | Nested | undefined;

/** The event fields and `args` fields any format reads; everything else in an event is dropped as it streams. */
export const EVENT_FIELDS = ['ph', 'cat', 'name', 'pid', 'tid', 'ts', 'dur'] as const;
export const ARG_FIELDS = [
  'device',
  'stream',
  'bytes',
  'correlation',
  'startMs',
  'engineStartMs',
  'engineEndMs',
  'issuedMs',
  'name',
  'grid',
  'block',
  'registers per thread',
  'shared memory',
] as const;

/** Args a kernel's launch shape gives as arrays of dimensions (`[16, 2, 4]`): kept as their product, the count. */
export const DIMENSION_FIELDS: ReadonlySet<string> = new Set(['grid', 'block']);

/** The members of a Kineto `deviceProperties` entry the analysis reads (the multiprocessors, for contention). */
export const DEVICE_FIELDS = ['id', 'numSms', 'regsPerMultiprocessor', 'sharedMemPerMultiprocessor', 'maxThreadsPerMultiprocessor'] as const;
export type DeviceField = (typeof DEVICE_FIELDS)[number];

export type EventField = (typeof EVENT_FIELDS)[number];
export type ArgField = (typeof ARG_FIELDS)[number];

/** One event of `traceEvents`, with its place in that array for messages. */
export interface TraceRecord {
  readonly index: number;
  readonly event: Readonly<Partial<Record<EventField, Field>>>;
  /** The event's `args` fields; absent where `args` is not an object. */
  readonly args: Readonly<Partial<Record<ArgField, Field>>>;
}

/** The top-level fields the formats read: which of Kineto's keys are present, the rank, the writing tool. */
export interface TopFields {
  /** Kineto's `deviceProperties`, each entry's fields the analysis reads; absent where the trace has none. */
  readonly devices?: readonly Readonly<Partial<Record<DeviceField, Field>>>[];
  /** `schemaVersion`, `distributedInfo` or `deviceProperties` is present: Kineto writes them. */
  readonly kinetoKeys: boolean;
  /** `distributedInfo.rank`, where it is a primitive. */
  readonly rank: Field;
  /** `otherData.tool`, where it is a primitive. */
  readonly tool: Field;
  /** Kineto's `baseTimeNanoseconds`, which its `ts` count from; absent from older traces and other formats. */
  readonly baseTimeNs?: Field;
}

export const KINETO_TOP_KEYS: ReadonlySet<string> = new Set(['schemaVersion', 'distributedInfo', 'deviceProperties']);

/** A primitive as it is; an object or array as its kind. */
export function fieldOf(value: unknown): Field {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === undefined) return value;
  return Array.isArray(value) ? NESTED_ARRAY : NESTED_OBJECT;
}

export const NESTED_OBJECT: Nested = Object.freeze({ nested: 'object' });
export const NESTED_ARRAY: Nested = Object.freeze({ nested: 'array' });

/** A field as a message shows it: JSON for a primitive, "an object" or "an array" otherwise. */
export function shown(value: Field): string {
  if (typeof value === 'object' && value !== null) return `an ${value.nested}`;
  return JSON.stringify(value) ?? 'nothing';
}

/** The record of a parsed event, or null where the item is not an object (null, a number, a string). */
export function recordOf(item: unknown, index: number): TraceRecord | null {
  if (typeof item !== 'object' || item === null) return null;
  const raw = item as Record<string, unknown>;
  const event: Partial<Record<EventField, Field>> = {};
  for (const key of EVENT_FIELDS) if (Object.hasOwn(raw, key)) event[key] = fieldOf(raw[key]);
  const args: Partial<Record<ArgField, Field>> = {};
  const rawArgs = raw.args;
  if (typeof rawArgs === 'object' && rawArgs !== null && !Array.isArray(rawArgs))
    for (const key of ARG_FIELDS) {
      if (!Object.hasOwn(rawArgs, key)) continue;
      const value = (rawArgs as Record<string, unknown>)[key];
      args[key] = DIMENSION_FIELDS.has(key) && Array.isArray(value) ? dimensionsOf(value) : fieldOf(value);
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
export function topFieldsOf(document: Record<string, unknown>): TopFields {
  const member = (key: string, inner: string): Field => {
    const value = document[key];
    return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, inner) ? fieldOf((value as Record<string, unknown>)[inner]) : undefined;
  };
  const properties = document.deviceProperties;
  const devices = Array.isArray(properties)
    ? properties.flatMap((entry) => {
        if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return [];
        const out: Partial<Record<DeviceField, Field>> = {};
        for (const key of DEVICE_FIELDS) if (Object.hasOwn(entry, key)) out[key] = fieldOf((entry as Record<string, unknown>)[key]);
        return [out];
      })
    : undefined;
  return {
    kinetoKeys: Object.keys(document).some((k) => KINETO_TOP_KEYS.has(k)),
    rank: member('distributedInfo', 'rank'),
    tool: member('otherData', 'tool'),
    ...(devices ? { devices } : {}),
    baseTimeNs: fieldOf(document.baseTimeNanoseconds),
  };
}
