import { finished } from 'node:stream/promises';
import Parser from 'stream-json/Parser.js';
import { traceError } from '../errors.js';
import { checkProgress, openTrace, streamError, type TraceLimits, tooLong } from '../read.js';
import { type Field, NESTED_ARRAY, NESTED_OBJECT, type Reads, type TopFields, type TraceRecord } from './record.js';

// A Chrome trace streamed through stream-json's tokenizer: the document is never held, only the top-level fields the
// formats read and, of `traceEvents`, each event reduced to a `TraceRecord` of the fields they read as its tokens
// arrive, and dropped at once unless a format keeps it. The format is decided after the last event (../parse.ts), so
// no key order is assumed: a writer may put the fields that tell its format before `traceEvents` or after it.
// Memory is the kept records, the strings they share, and a chunk of text in flight.

/** What streaming a trace leaves: the top-level fields and the kept events in file order. */
export interface StreamedTrace {
  readonly top: TopFields;
  readonly records: readonly TraceRecord[];
}

interface Token {
  readonly name: string;
  readonly value?: string | boolean | null;
}

/** The opening of a container, told apart from every JSON value. */
const OBJECT: unique symbol = Symbol('object');
const ARRAY: unique symbol = Symbol('array');
type Opening = typeof OBJECT | typeof ARRAY;
/** Distinct strings shared between records (kernel names repeat by the thousand); past this, strings are copied. */
const MAX_INTERNED = 1 << 16;

/**
 * Where the next value token lands: before the document, in its top-level object, in a top-level object whose
 * members are read (`member` its key), in `traceEvents`, in an event, in its `args`, in an array of dimensions, in a
 * top-level table or one of its entries (`member` the table's key); `key` the last key read.
 */
interface Slot {
  readonly at: 'root' | 'top' | 'member' | 'events' | 'event' | 'args' | 'dimensions' | 'table' | 'entry';
  key: string | null;
  readonly member?: string;
}

/**
 * The token machine: one JSON token at a time, holding only the event being read. Depth counts open containers; a
 * container nobody reads is skipped by depth alone, without building anything.
 */
export class TraceAssembler {
  private depth = 0;
  /** The depth a skipped container was opened at; tokens are ignored until the depth is back to it. */
  private skipAt = -1;
  private done = false;
  private readonly stack: Slot[] = [{ at: 'root', key: null }];
  private readonly interned = new Map<string, string>();
  private topKeys = 0;
  private readonly keys = new Set<string>();
  private readonly values: Record<string, Field> = {};
  private readonly tables: Record<string, Record<string, Field>[]> = {};
  private hasEvents = false;
  private records: TraceRecord[] = [];
  private index = 0;
  private event: Record<string, Field> = {};
  private args: Record<string, Field> = {};
  /** A dimensions array being read: its field and the product so far (NaN once an item is not a count). */
  private dimensions: { field: string; product: number } | null = null;

  constructor(
    private readonly file: string,
    private readonly reads: Reads,
    private readonly keeps: (record: TraceRecord) => boolean,
    private readonly maxEvents: number,
  ) {}

  /** The document's top-level value has ended. */
  get complete(): boolean {
    return this.done;
  }

  /** Grows with every event that ends, kept or not, and every top-level key: what streaming a trace is made of. */
  get progress(): number {
    return this.index + this.topKeys;
  }

  token(token: Token): void {
    const opens = token.name === 'startObject' || token.name === 'startArray';
    const closes = token.name === 'endObject' || token.name === 'endArray';
    if (this.skipAt >= 0) {
      if (opens) this.depth++;
      else if (closes && --this.depth === this.skipAt) this.skipAt = -1;
    } else if (closes) this.close();
    else if (token.name === 'keyValue') this.slot.key = token.value as string;
    else {
      const value = token.name === 'startObject' ? OBJECT : token.name === 'startArray' ? ARRAY : token.name === 'numberValue' ? Number(token.value) : (token.value ?? null);
      const into = this.place(value);
      if (opens) {
        if (into === 'skip') this.skip();
        else this.open(into);
      }
    }
  }

  finish(): StreamedTrace {
    if (!this.hasEvents) throw traceError(this.file, 'it has no traceEvents array');
    return { top: { keys: this.keys, values: this.values, tables: this.tables }, records: this.records };
  }

  private get slot(): Slot {
    return this.stack[this.stack.length - 1]!;
  }

  /**
   * Keeps a value where the current slot reads it, and says where a container that opens here goes: read into (a
   * slot), or skipped whole. For a primitive the answer is not used.
   */
  private place(value: Field | Opening): Slot | 'skip' {
    const slot = this.slot;
    const kept = (): Field => (value === OBJECT || value === ARRAY ? nested(value) : this.kept(value));
    switch (slot.at) {
      case 'root':
        if (value !== OBJECT) throw traceError(this.file, 'it is not a Chrome trace object (a JSON object with traceEvents)');
        return { at: 'top', key: null };
      case 'top':
        return this.topValue(slot.key ?? '', value);
      case 'member':
        if (slot.key !== null && this.reads.topValues.get(slot.member ?? '')?.includes(slot.key)) this.values[`${slot.member}.${slot.key}`] = kept();
        return 'skip';
      case 'events':
        if (value === OBJECT) {
          this.event = {};
          this.args = {};
          return { at: 'event', key: null };
        }
        // An array is an object to the formats, with none of their fields: dropped, as JSON.parse's path drops it.
        if (value === ARRAY) {
          this.index++;
          return 'skip';
        }
        throw traceError(this.file, `traceEvents[${this.index}] is not an object`);
      case 'event':
        if (slot.key === 'args') {
          this.args = {};
          return value === OBJECT ? { at: 'args', key: null } : 'skip';
        }
        if (slot.key !== null && this.reads.event.has(slot.key)) this.event[slot.key] = kept();
        return 'skip';
      case 'args':
        if (slot.key !== null && this.reads.dimensions.has(slot.key) && this.reads.args.has(slot.key) && value === ARRAY) {
          this.dimensions = { field: slot.key, product: 1 };
          return { at: 'dimensions', key: null };
        }
        if (slot.key !== null && this.reads.args.has(slot.key)) this.args[slot.key] = kept();
        return 'skip';
      case 'dimensions':
        if (this.dimensions) this.dimensions.product *= typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : Number.NaN;
        return 'skip';
      case 'table': {
        const table = this.tables[slot.member ?? ''];
        if (value !== OBJECT || !table) return 'skip';
        table.push({});
        return { at: 'entry', member: slot.member ?? '', key: null };
      }
      case 'entry': {
        const table = this.tables[slot.member ?? ''];
        if (slot.key !== null && this.reads.topTables.get(slot.member ?? '')?.includes(slot.key) && table?.length) table[table.length - 1]![slot.key] = kept();
        return 'skip';
      }
    }
  }

  private topValue(key: string, value: Field | Opening): Slot | 'skip' {
    this.topKeys++;
    if (this.reads.topKeys.has(key)) this.keys.add(key);
    const members = this.reads.topValues.get(key);
    // A repeated key replaces the earlier one, as JSON.parse has it.
    if (members) for (const member of members) delete this.values[member === '' ? key : `${key}.${member}`];
    if (members?.includes('')) this.values[key] = value === OBJECT || value === ARRAY ? nested(value) : this.kept(value);
    if (this.reads.topTables.has(key)) {
      delete this.tables[key];
      if (value === ARRAY) {
        this.tables[key] = [];
        return { at: 'table', member: key, key: null };
      }
    }
    if (key === 'traceEvents') {
      this.hasEvents = value === ARRAY;
      this.records = [];
      this.index = 0;
      if (value === ARRAY) return { at: 'events', key: null };
    }
    return members && value === OBJECT ? { at: 'member', member: key, key: null } : 'skip';
  }

  private open(slot: Slot): void {
    this.depth++;
    this.stack.push(slot);
  }

  private skip(): void {
    this.skipAt = this.depth;
    this.depth++;
  }

  private close(): void {
    const slot = this.stack.pop()!;
    this.depth--;
    if (slot.at === 'event') this.endEvent();
    if (slot.at === 'dimensions' && this.dimensions) {
      const { field, product } = this.dimensions;
      this.args[field] = Number.isNaN(product) ? NESTED_ARRAY : product;
      this.dimensions = null;
    }
    if (this.depth === 0) this.done = true;
  }

  private endEvent(): void {
    const record: TraceRecord = { index: this.index++, event: this.event, args: this.args };
    if (!this.keeps(record)) return;
    if (this.records.length >= this.maxEvents)
      throw traceError(
        this.file,
        `it has more than ${this.maxEvents.toLocaleString('en-US')} events of the kinds analyze reads (kernels, copies, memsets, CUDA calls, profiler steps), the most one trace may keep`,
      );
    this.records.push(record);
  }

  /**
   * A string to keep, shared with its earlier copies. A fresh one is copied first: the tokenizer's strings are
   * slices of the chunk of text they came from, and keeping a slice would keep the whole chunk.
   */
  private kept(value: Field): Field {
    if (typeof value !== 'string') return value;
    const known = this.interned.get(value);
    if (known !== undefined) return known;
    const copy = ` ${value}`.slice(1);
    if (this.interned.size < MAX_INTERNED) this.interned.set(copy, copy);
    return copy;
  }
}

function nested(value: Opening): Field {
  return value === ARRAY ? NESTED_ARRAY : NESTED_OBJECT;
}

/** Python's json writes NaN and Infinity, which are not JSON: the tokenizer's message does not name them. */
const NON_JSON = /(?<![\w"])(NaN|-?Infinity)(?![\w"])/;

/**
 * Streams a trace file into its kept events. Chunks are written to the tokenizer one at a time and it tokenizes each
 * as it is written, so a syntax error is known to lie in that chunk (or at its border), and one raised only at the
 * end means the text stopped short.
 */
export async function streamTrace(file: string, reads: Reads, keeps: (record: TraceRecord) => boolean, limits: TraceLimits): Promise<StreamedTrace> {
  const { text, gzip, compressedBytes } = openTrace(file, limits);
  const assembler = new TraceAssembler(file, reads, keeps, limits.maxEvents);
  const parser = new Parser({ packValues: true, streamValues: false });
  let failure: unknown = null;
  parser.on('data', (token: Token) => {
    if (failure !== null) return;
    try {
      assembler.token(token);
    } catch (error) {
      failure = error;
    }
  });
  // Read from `parser.errored` after each write instead, where the chunk the error lies in is at hand.
  parser.on('error', () => {});
  let bytes = 0;
  let previous = '';
  let progress = 0;
  let withoutEvent = 0;
  try {
    for await (const chunk of text as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) throw tooLong(file, gzip, limits.maxBytes);
      await write(parser, chunk);
      if (failure !== null) throw failure;
      if (parser.errored) throw invalidJson(file, parser.errored, `${previous}${chunk.toString('utf8', 0, Math.min(chunk.length, 1024 * 1024))}`, false);
      withoutEvent = assembler.progress === progress ? withoutEvent + chunk.length : 0;
      progress = assembler.progress;
      checkProgress(file, limits, { text: bytes, compressed: compressedBytes(), withoutEvent });
      previous = chunk.toString('utf8', Math.max(0, chunk.length - 64));
    }
    if (bytes === 0) throw traceError(file, 'it is empty');
    parser.end();
    await finished(parser).catch(() => {});
    if (failure !== null) throw failure;
    if (parser.errored) throw invalidJson(file, parser.errored, previous, !assembler.complete);
  } catch (error) {
    throw streamError(file, error);
  } finally {
    text.destroy();
    parser.destroy();
  }
  return assembler.finish();
}

/** Writes a chunk, waiting when the tokenizer asks for it; an error is left on `parser.errored` for the caller. */
function write(parser: Parser, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (parser.write(chunk)) resolve();
    else if (parser.errored) resolve();
    else {
      parser.once('drain', resolve);
      parser.once('close', resolve);
    }
  });
}

function invalidJson(file: string, error: Error, near: string, cutShort: boolean) {
  const nonJson = NON_JSON.exec(near);
  if (nonJson) return traceError(file, `it is not valid JSON (${nonJson[1]} is not a JSON number: ${error.message})`);
  if (cutShort) return traceError(file, `it is not valid JSON: the text ends inside its top-level object, as a file cut short does (${error.message})`);
  return traceError(file, `it is not valid JSON (${error.message})`);
}
