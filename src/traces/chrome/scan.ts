import { UsageError } from '../../errors.js';
import { traceError } from '../errors.js';
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  EventReader,
  EventSyntax,
  endsBare,
  isSpace,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from './event.js';
import { type Kept, type Reads, type TopFields, type TraceRecord, type TraceRecords, topFieldsOf } from './record.js';
import { RecordStore } from './store.js';

// A scanner for the shape of a Chrome trace: one JSON object whose `traceEvents` is an array of small objects. It
// walks the bytes once, tracking only strings and nesting, to find where each event (and each other top-level value)
// begins and ends; each is then handed whole to V8's JSON.parse, which validates it, and reduced to the fields the
// formats read. A general streaming tokenizer (stream-json) made a token object for every key and value of every
// event, which took most of analyze's time (docs/measurements/2026-11-28-analyze-parser/README.md). Memory is the
// kept records, held as bytes (store.ts), the strings they share, and the event being read.

/** What scanning a trace leaves: the top-level fields, the kept events in file order, and each format's refusal. */
export interface StreamedTrace {
  readonly top: TopFields;
  readonly records: TraceRecords;
  /** Per format, in the order given: why it would refuse the trace (it kept past a limit), else null. */
  readonly refused: readonly (UsageError | null)[];
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Where the scanner is: before the document; in its top-level object before a key, in a key, before its colon,
 * before its value, in a value, after it; in `traceEvents` before an event, in one, after one; after the document.
 */
type State =
  | 'root'
  | 'key'
  | 'first-key'
  | 'colon'
  | 'value'
  | 'top-value'
  | 'after-value'
  | 'event'
  | 'first-event'
  | 'in-event'
  | 'after-event'
  | 'done';

export class ChromeScanner {
  private state: State = 'root';
  /** Bytes of the value being read from earlier chunks, and where it starts in the current one. */
  private parts: Buffer[] = [];
  private start = 0;
  /** The value being read: its nesting, whether in a string, whether the last byte was an escaping backslash. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** A number or literal is read up to the byte after it; a string or container up to its closing byte. */
  private bare = false;
  /** The last top-level key, and whether the value being read is a key. */
  private key = '';
  private readingKey = false;
  private offset = 0;
  private topKeys = 0;
  private hasEvents = false;
  private readonly top: Record<string, unknown> = {};
  private records: RecordStore;
  private index = 0;
  /** Per format, in the order given: the events and ranges it kept, and the refusal once it kept past a limit. */
  private events: number[] = [];
  private contexts: number[] = [];
  private refused: (UsageError | null)[] = [];
  private readonly topRead: ReadonlySet<string>;
  private readonly reader: EventReader;

  constructor(
    private readonly file: string,
    private readonly reads: Reads,
    private readonly keepers: readonly ((record: TraceRecord) => Kept)[],
    private readonly limits: { readonly maxEvents: number; readonly maxContext: number },
  ) {
    this.reader = new EventReader(reads);
    this.records = new RecordStore(reads);
    this.topRead = new Set([...reads.topKeys, ...reads.topValues.keys(), ...reads.topTables.keys()]);
  }

  /** Grows with every event that ends, kept or not, and every top-level key: what scanning a trace is made of. */
  get progress(): number {
    return this.index + this.topKeys;
  }

  write(chunk: Buffer): void {
    const n = chunk.length;
    let i = 0;
    this.start = 0;
    while (i < n) {
      const c = chunk[i]!;
      switch (this.state) {
        case 'root':
          if (isSpace(c)) i++;
          else if (c === OPEN_OBJECT) {
            this.state = 'first-key';
            i++;
          } else if (
            c === OPEN_ARRAY ||
            c === QUOTE ||
            c === 0x2d ||
            (c >= 0x30 && c <= 0x39) ||
            c === 0x74 ||
            c === 0x66 ||
            c === 0x6e
          )
            throw traceError(this.file, 'it is not a Chrome trace object (a JSON object with traceEvents)');
          else throw this.unexpected(chunk, i, 'a JSON object');
          break;
        case 'first-key':
        case 'key':
          if (isSpace(c)) i++;
          else if (c === QUOTE) {
            // A key is read as a value is, and marked as a key until its closing quote.
            this.openValue(chunk, i);
            this.readingKey = true;
            this.state = 'top-value';
            i = this.scanValue(chunk, i + 1);
          } else if (c === CLOSE_OBJECT && this.state === 'first-key') {
            this.state = 'done';
            i++;
          } else throw this.unexpected(chunk, i, 'a key in quotes');
          break;
        case 'colon':
          if (isSpace(c)) i++;
          else if (c === COLON) {
            this.state = 'value';
            i++;
          } else throw this.unexpected(chunk, i, '":" after a key');
          break;
        case 'value':
          if (isSpace(c)) i++;
          else {
            this.topKeys++;
            if (this.key === 'traceEvents') {
              this.hasEvents = c === OPEN_ARRAY;
              this.records = new RecordStore(this.reads);
              this.index = 0;
              this.events = this.keepers.map(() => 0);
              this.contexts = this.keepers.map(() => 0);
              this.refused = this.keepers.map(() => null);
            }
            if (this.key === 'traceEvents' && c === OPEN_ARRAY) {
              this.state = 'first-event';
              i++;
            } else {
              this.openValue(chunk, i);
              this.state = 'top-value';
              i = this.scanValue(chunk, i + (this.bare ? 0 : 1));
            }
          }
          break;
        case 'top-value':
          i = this.scanValue(chunk, i);
          break;
        case 'after-value':
          if (isSpace(c)) i++;
          else if (c === COMMA) {
            this.state = 'key';
            i++;
          } else if (c === CLOSE_OBJECT) {
            this.state = 'done';
            i++;
          } else throw this.unexpected(chunk, i, '"," or "}" after a value');
          break;
        case 'first-event':
        case 'event':
          if (isSpace(c)) i++;
          else if (c === CLOSE_ARRAY && this.state === 'first-event') {
            this.state = 'after-value';
            i++;
          } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
            this.openValue(chunk, i);
            this.state = 'in-event';
            i = this.scanValue(chunk, i + 1);
          } else if (c === QUOTE || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e)
            throw traceError(this.file, `traceEvents[${this.index}] is not an object`);
          else throw this.unexpected(chunk, i, 'an event');
          break;
        case 'in-event':
          i = this.scanValue(chunk, i);
          break;
        case 'after-event':
          if (isSpace(c)) i++;
          else if (c === COMMA) {
            this.state = 'event';
            i++;
          } else if (c === CLOSE_ARRAY) {
            this.state = 'after-value';
            i++;
          } else throw this.unexpected(chunk, i, '"," or "]" after an event');
          break;
        case 'done':
          if (isSpace(c)) i++;
          else throw this.unexpected(chunk, i, 'nothing after the top-level object');
          break;
      }
    }
    if (this.state === 'top-value' || this.state === 'in-event')
      this.parts.push(this.start === 0 ? chunk : chunk.subarray(this.start));
    this.offset += n;
  }

  /** The document has ended: what it kept, or why it is not a whole trace. */
  end(): StreamedTrace {
    if (this.state !== 'done') {
      if (this.state === 'root') throw traceError(this.file, 'it is empty');
      throw traceError(
        this.file,
        `it is not valid JSON: the text ends inside its top-level object, as a file cut short does (after byte ${this.offset})`,
      );
    }
    if (!this.hasEvents) throw traceError(this.file, 'it has no traceEvents array');
    return { top: topFieldsOf(this.top, this.reads), records: this.records, refused: this.refused };
  }

  private begin(i: number): void {
    this.parts = [];
    this.start = i;
  }

  private openValue(chunk: Buffer, i: number): void {
    const c = chunk[i]!;
    this.begin(i);
    this.escaped = false;
    this.bare = c !== OPEN_OBJECT && c !== OPEN_ARRAY && c !== QUOTE;
    this.inString = c === QUOTE;
    this.depth = c === OPEN_OBJECT || c === OPEN_ARRAY ? 1 : 0;
  }

  /** Scans the value being read from `i`; at its end, takes it and returns the index after it, else `chunk.length`. */
  private scanValue(chunk: Buffer, from: number): number {
    const n = chunk.length;
    let i = from;
    if (this.bare) {
      while (i < n && !endsBare(chunk[i]!)) i++;
      if (i === n) return n;
      this.take(chunk, i);
      return i;
    }
    let { depth, inString, escaped } = this;
    while (i < n) {
      const c = chunk[i++]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (depth === 0) break;
        }
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
      else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) break;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    if (depth === 0 && !inString) this.take(chunk, i);
    return i;
  }

  /** The value that ended before `end` in this chunk. */
  private take(chunk: Buffer, end: number): void {
    if (this.state === 'in-event') {
      if (this.parts.length) {
        const whole = Buffer.concat([...this.parts, chunk.subarray(this.start, end)]);
        this.event(whole, 0, whole.length);
      } else this.event(chunk, this.start, end);
      this.parts = [];
      this.start = end;
      this.state = 'after-event';
      return;
    }
    const text = this.parts.length
      ? Buffer.concat([...this.parts, chunk.subarray(this.start, end)]).toString('utf8')
      : chunk.toString('utf8', this.start, end);
    this.parts = [];
    this.start = end;
    if (this.readingKey) {
      this.readingKey = false;
      this.key = this.parse(text) as string;
      this.state = 'colon';
    } else {
      if (this.topRead.has(this.key)) this.top[this.key] = this.parse(text);
      else this.parse(text);
      this.state = 'after-value';
    }
  }

  private event(buf: Buffer, start: number, end: number): void {
    const index = this.index++;
    // An array is an object to the formats, with none of their fields: dropped, as JSON.parse's path drops it.
    if (buf[start] === OPEN_ARRAY) {
      this.parse(buf.toString('utf8', start, end));
      return;
    }
    let record: TraceRecord;
    try {
      record = { index, ...this.reader.read(buf, start, end) };
    } catch (error) {
      if (error instanceof EventSyntax) throw invalidJson(this.file, error.message, error.near);
      throw error;
    }
    // Each format counts what it keeps against the limits: a trace is refused for the events its own format keeps,
    // never for those another format would have kept. A format past a limit keeps nothing more; past it for every
    // format, the trace is refused at once.
    let kept: Kept = false;
    for (let f = 0; f < this.keepers.length; f++) {
      if (this.refused[f]) continue;
      const keeps = this.keepers[f]!(record);
      if (!keeps) continue;
      const { maxEvents, maxContext } = this.limits;
      if (keeps === 'event' && ++this.events[f]! > maxEvents)
        this.refused[f] = tooMany(
          this.file,
          `${count(maxEvents)} events of the kinds analyze reads (kernels, copies, memsets, CUDA calls, profiler steps)`,
        );
      else if (keeps === 'context' && ++this.contexts[f]! > maxContext)
        this.refused[f] = tooMany(
          this.file,
          `${count(maxContext)} ranges that name the launches inside them (PyTorch ops, record_function and NVTX ranges)`,
        );
      else kept = kept === 'event' || keeps === 'event' ? 'event' : 'context';
    }
    if (this.refused.length && this.refused.every((r) => r !== null)) throw this.refused[0]!;
    if (!kept) return;
    this.records.push(kept === 'event' ? record : { index, event: record.event, args: {} });
  }

  private parse(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw invalidJson(this.file, error instanceof Error ? error.message : String(error), text);
    }
  }

  private unexpected(chunk: Buffer, i: number, expected: string): Error {
    const near = chunk.toString('utf8', Math.max(0, i - 32), Math.min(chunk.length, i + 32));
    return invalidJson(
      this.file,
      `at byte ${this.offset + i}: expected ${expected}, found ${JSON.stringify(String.fromCharCode(chunk[i]!))}`,
      near,
    );
  }
}

/**
 * The limits on kept events bound memory (docs/analyze.md states the budget per kept event), not the file: the
 * message says so, and what to do, rather than asking for another kind of file.
 */
function tooMany(file: string, what: string): UsageError {
  return new UsageError(`Cannot analyse trace ${file}: it has more than ${what}, the most one trace may keep.`, {
    hint: 'The limit bounds the memory analyze holds (docs/analyze.md). Profile fewer steps (torch.profiler.schedule(active=…)), or one rank a trace.',
  });
}

/** Python's json writes NaN and Infinity, which are not JSON: named where the parser's message does not. */
const NON_JSON = /(?<![\w"])(NaN|-?Infinity)(?![\w"])/;

function invalidJson(file: string, message: string, near: string) {
  const nonJson = NON_JSON.exec(near);
  if (nonJson) return traceError(file, `it is not valid JSON (${nonJson[1]} is not a JSON number: ${message})`);
  return traceError(file, `it is not valid JSON (${message})`);
}
