import { type Field, NESTED_ARRAY, NESTED_OBJECT, type Reads, type TraceRecord, type TraceRecords } from './record.js';

// The kept events of a streamed trace, held as bytes until a format reads them. A 1 GB PyTorch trace keeps about
// 3.3 million events (its kernels, launches and the ranges around them) until its format is known: as objects
// (an event, its fields, its args and their numbers) they took about 300 bytes each, 1 GiB in all, and most of
// analyze's peak RSS (docs/measurements/2026-11-28-analyze-rss/). Here each takes its fields' bytes: a key's number,
// a tag, and the value: a string by its number in a table of the distinct strings, a number as an int32 where it is
// one, else a float64. A format iterates them, each read back as the record it was, with its keys in the same
// order, and every value the same (a float64 holds every double exactly, -0 included).

/** How a value is held: its tag, then its bytes where it has any. */
const Tag = { String: 0, Int: 1, Float: 2, True: 3, False: 4, Null: 5, Object: 6, Array: 7 } as const;

/** Bytes a chunk holds: big enough that its slack and count are nothing, small enough to be no burden when unused. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** A field's most bytes: its key's number, its tag, and a float64. */
const FIELD_BYTES = 10;
/** A record's own: its index, and its counts of event and args fields. */
const HEAD_BYTES = 6;
const MAX_KEYS = 255;

const isInt32 = (v: number) => (v | 0) === v && !Object.is(v, -0);

export class RecordStore implements TraceRecords {
  private readonly chunks: { bytes: Buffer; used: number }[] = [];
  private bytes: Buffer = Buffer.alloc(0);
  private used = 0;
  private count = 0;
  private readonly strings: string[] = [];
  private readonly stringIds = new Map<string, number>();
  /** Every key a record may hold: the event's read fields (and `args`, which the reader may set), then the args'. */
  private readonly eventKeys: readonly string[];
  private readonly argKeys: readonly string[];
  private readonly eventIds = new Map<string, number>();
  private readonly argIds = new Map<string, number>();
  private readonly maxRecordBytes: number;

  constructor(reads: Reads) {
    this.eventKeys = [...new Set([...reads.event, 'args'])];
    this.argKeys = [...reads.args];
    if (this.eventKeys.length > MAX_KEYS || this.argKeys.length > MAX_KEYS)
      throw new Error(`the trace formats read more than ${MAX_KEYS} fields of an event`);
    this.eventKeys.forEach((key, id) => this.eventIds.set(key, id));
    this.argKeys.forEach((key, id) => this.argIds.set(key, id));
    this.maxRecordBytes = HEAD_BYTES + (this.eventKeys.length + this.argKeys.length) * FIELD_BYTES;
  }

  get length(): number {
    return this.count;
  }

  /** Keeps a record; its fields must be of the reads the store was made with. */
  push(record: TraceRecord): void {
    if (this.bytes.length - this.used < this.maxRecordBytes) this.grow();
    const { bytes } = this;
    bytes.writeUInt32LE(record.index, this.used);
    let at = this.used + HEAD_BYTES;
    let events = 0;
    for (const key in record.event) {
      at = this.field(at, this.eventIds, key, record.event[key]);
      events++;
    }
    let args = 0;
    for (const key in record.args) {
      at = this.field(at, this.argIds, key, record.args[key]);
      args++;
    }
    bytes[this.used + 4] = events;
    bytes[this.used + 5] = args;
    this.used = at;
    this.count++;
  }

  private field(at: number, ids: ReadonlyMap<string, number>, key: string, value: Field): number {
    const id = ids.get(key);
    if (id === undefined) throw new Error(`a trace record holds field "${key}", which no format reads`);
    if (value === undefined) throw new Error(`a trace record holds field "${key}" with no value`);
    const { bytes } = this;
    bytes[at] = id;
    if (typeof value === 'string') {
      let sid = this.stringIds.get(value);
      if (sid === undefined) {
        sid = this.strings.length;
        this.strings.push(value);
        this.stringIds.set(value, sid);
      }
      bytes[at + 1] = Tag.String;
      bytes.writeUInt32LE(sid, at + 2);
      return at + 6;
    }
    if (typeof value === 'number') {
      if (isInt32(value)) {
        bytes[at + 1] = Tag.Int;
        bytes.writeInt32LE(value, at + 2);
        return at + 6;
      }
      bytes[at + 1] = Tag.Float;
      bytes.writeDoubleLE(value, at + 2);
      return at + 10;
    }
    bytes[at + 1] =
      value === true
        ? Tag.True
        : value === false
          ? Tag.False
          : value === null
            ? Tag.Null
            : value.nested === 'object'
              ? Tag.Object
              : Tag.Array;
    return at + 2;
  }

  private grow(): void {
    if (this.used > 0) this.chunks.push({ bytes: this.bytes, used: this.used });
    this.bytes = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
  }

  [Symbol.iterator](): Iterator<TraceRecord> {
    return this.records([...this.chunks, { bytes: this.bytes, used: this.used }]);
  }

  drain(): Iterable<TraceRecord> {
    const chunks: ({ bytes: Buffer; used: number } | null)[] = [...this.chunks, { bytes: this.bytes, used: this.used }];
    this.chunks.length = 0;
    this.bytes = Buffer.alloc(0);
    this.used = 0;
    this.count = 0;
    return { [Symbol.iterator]: () => this.records(chunks, true) };
  }

  /** The records of `chunks`, each chunk dropped from the list once passed where `release`. */
  private records(chunks: ({ bytes: Buffer; used: number } | null)[], release = false): Iterator<TraceRecord> {
    let c = 0;
    let at = 0;
    return {
      next: (): IteratorResult<TraceRecord> => {
        while (c < chunks.length && at >= chunks[c]!.used) {
          if (release) chunks[c] = null;
          c++;
          at = 0;
        }
        if (c >= chunks.length) return { done: true, value: undefined };
        const { bytes } = chunks[c]!;
        const index = bytes.readUInt32LE(at);
        const events = bytes[at + 4]!;
        const argCount = bytes[at + 5]!;
        at += HEAD_BYTES;
        const event: Record<string, Field> = {};
        for (let k = 0; k < events; k++) at = this.read(bytes, at, this.eventKeys, event);
        const args: Record<string, Field> = {};
        for (let k = 0; k < argCount; k++) at = this.read(bytes, at, this.argKeys, args);
        return { done: false, value: { index, event, args } };
      },
    };
  }

  private read(bytes: Buffer, at: number, keys: readonly string[], into: Record<string, Field>): number {
    const key = keys[bytes[at]!]!;
    switch (bytes[at + 1]) {
      case Tag.String:
        into[key] = this.strings[bytes.readUInt32LE(at + 2)]!;
        return at + 6;
      case Tag.Int:
        into[key] = bytes.readInt32LE(at + 2);
        return at + 6;
      case Tag.Float:
        into[key] = bytes.readDoubleLE(at + 2);
        return at + 10;
      case Tag.True:
        into[key] = true;
        break;
      case Tag.False:
        into[key] = false;
        break;
      case Tag.Null:
        into[key] = null;
        break;
      case Tag.Object:
        into[key] = NESTED_OBJECT;
        break;
      default:
        into[key] = NESTED_ARRAY;
    }
    return at + 2;
  }
}
