import { type Field, NESTED_ARRAY, NESTED_OBJECT, type Reads } from './record.js';

// One event's bytes read as JSON, materialising only the fields the formats read: the event's own, and those of its
// `args` (a dimensions array as its product). Every other value is walked over, its strings and nesting followed,
// and never built: most of a profiler's event is args no format reads (input shapes, types, ids).

// JSON's structural bytes, shared with scan.ts, which finds each event's bytes in the stream.
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** Where a number or a literal (true, false, null) ends. */
export const endsBare = (c: number) => c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c);

/** Why an event's bytes are not JSON: the parser's words, and the text near the fault for the message. */
export class EventSyntax extends Error {
  constructor(
    message: string,
    readonly near: string,
  ) {
    super(message);
  }
}

/** Keys looked up by a hash of their bytes, so that a key no format reads is never decoded. */
class KeyTable {
  private readonly byHash = new Map<number, { name: string; bytes: Buffer }[]>();
  readonly names: ReadonlySet<string>;

  constructor(names: Iterable<string>) {
    this.names = new Set(names);
    for (const name of this.names) {
      const bytes = Buffer.from(name, 'utf8');
      const h = hash(bytes, 0, bytes.length);
      this.byHash.set(h, [...(this.byHash.get(h) ?? []), { name, bytes }]);
    }
  }

  find(buf: Buffer, start: number, end: number, h: number): string | null {
    const candidates = this.byHash.get(h);
    if (!candidates) return null;
    for (const { name, bytes } of candidates) if (same(bytes, buf, start, end)) return name;
    return null;
  }
}

function same(bytes: Buffer, buf: Buffer, start: number, end: number): boolean {
  if (bytes.length !== end - start) return false;
  for (let k = 0; k < bytes.length; k++) if (bytes[k] !== buf[start + k]) return false;
  return true;
}

/**
 * The strings read, each decoded once: a kernel's name, a category, a phase repeat by the thousand, so a string
 * whose bytes were seen is found by their hash and compared, not decoded again. Bounded: past the limit, strings are
 * decoded each time.
 */
class StringCache {
  private readonly byHash = new Map<number, { text: string; bytes: Buffer }>();

  get(buf: Buffer, start: number, end: number, h: number): string {
    const known = this.byHash.get(h);
    if (known && same(known.bytes, buf, start, end)) return known.text;
    const text = buf.toString('utf8', start, end);
    if (!known && this.byHash.size < MAX_CACHED && end - start <= MAX_CACHED_BYTES)
      this.byHash.set(h, { text, bytes: Buffer.from(buf.subarray(start, end)) });
    return text;
  }
}

const MAX_CACHED = 1 << 16;
const MAX_CACHED_BYTES = 1024;

function hash(buf: Buffer, start: number, end: number): number {
  let h = 0;
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + buf[i]!) | 0;
  return h;
}

/** 10^k for the fraction digits of a number read exactly (k ≤ 22: every such power is a double). */
const POWERS = Array.from({ length: 23 }, (_, k) => 10 ** k);

export class EventReader {
  private buf: Buffer = Buffer.alloc(0);
  private i = 0;
  private end = 0;
  private readonly eventKeys: KeyTable;
  private readonly argKeys: KeyTable;
  private readonly strings = new StringCache();

  constructor(private readonly reads: Reads) {
    this.eventKeys = new KeyTable([...reads.event, 'args']);
    this.argKeys = new KeyTable(reads.args);
  }

  /** The event at buf[start, end), which the scanner found to be one object; its read fields and args. */
  read(buf: Buffer, start: number, end: number): { event: Record<string, Field>; args: Record<string, Field> } {
    this.buf = buf;
    this.i = start + 1;
    this.end = end;
    const event: Record<string, Field> = {};
    let args: Record<string, Field> = {};
    if (this.open()) {
      do {
        const key = this.key(this.eventKeys);
        if (key === 'args') {
          args = {};
          if (this.peek() === OPEN_OBJECT) this.args(args);
          else this.skip();
          // `args` read as an event field too where a format names it.
          if (this.reads.event.has('args')) event.args = NESTED_OBJECT;
        } else if (key !== null) event[key] = this.value();
        else this.skip();
      } while (this.next());
    }
    this.space();
    if (this.i !== this.end) throw this.fault('the end of the event');
    return { event, args };
  }

  private args(into: Record<string, Field>): void {
    this.i++;
    if (!this.open()) return;
    do {
      const key = this.key(this.argKeys);
      if (key === null) this.skip();
      else if (this.reads.dimensions.has(key) && this.peek() === OPEN_ARRAY) into[key] = this.dimensions();
      else into[key] = this.value();
    } while (this.next());
  }

  /** Past an object's `{`: false where it is empty (its `}` passed). */
  private open(): boolean {
    this.space();
    if (this.peek() !== CLOSE_OBJECT) return true;
    this.i++;
    return false;
  }

  /** After a member's value: true at a comma (another member follows), false at the object's `}`. */
  private next(): boolean {
    this.space();
    const c = this.peek();
    if (c === COMMA) {
      this.i++;
      return true;
    }
    if (c === CLOSE_OBJECT) {
      this.i++;
      return false;
    }
    throw this.fault('"," or "}" after a value');
  }

  /** A member's key and its colon: the key where the table holds it, else null (and the key is never decoded). */
  private key(table: KeyTable): string | null {
    this.space();
    if (this.peek() !== QUOTE) throw this.fault('a key in quotes');
    const { buf } = this;
    const start = this.i + 1;
    let h = 0;
    let escaped = false;
    let i = start;
    for (; i < this.end; i++) {
      const c = buf[i]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        i++;
      }
      h = (Math.imul(h, 31) + c) | 0;
    }
    if (i >= this.end) throw this.fault('a closing quote');
    let key: string | null;
    if (escaped) {
      const name = this.string();
      key = table.names.has(name) ? name : null;
    } else {
      key = table.find(buf, start, i, h);
      this.i = i + 1;
    }
    this.space();
    if (this.peek() !== COLON) throw this.fault('":" after a key');
    this.i++;
    this.space();
    return key;
  }

  /** A value a format reads: a primitive as it is, a container as its kind. */
  private value(): Field {
    const c = this.peek();
    if (c === QUOTE) return this.string();
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      this.skip();
      return c === OPEN_OBJECT ? NESTED_OBJECT : NESTED_ARRAY;
    }
    const start = this.i;
    while (this.i < this.end && !endsBare(this.buf[this.i]!)) this.i++;
    const exact = this.number(start, this.i);
    if (exact !== null) return exact;
    const text = this.buf.toString('latin1', start, this.i);
    try {
      return JSON.parse(text) as Field;
    } catch (error) {
      throw new EventSyntax(error instanceof Error ? error.message : String(error), text);
    }
  }

  /**
   * A decimal of at most 15 digits (an optional minus, digits, an optional fraction, no exponent) as its exact
   * double: its digits as a whole number over 10^k, one correctly rounded division, as JSON.parse gives it.
   * Null for anything else, which JSON.parse reads.
   */
  private number(start: number, end: number): number | null {
    const { buf } = this;
    let i = start;
    const negative = buf[i] === 0x2d;
    if (negative) i++;
    let digits = 0;
    let whole = 0;
    let fraction = -1;
    if (buf[i] === 0x30 && i + 1 < end && buf[i + 1] !== 0x2e) return null;
    for (; i < end; i++) {
      const c = buf[i]!;
      if (c >= 0x30 && c <= 0x39) {
        whole = whole * 10 + (c - 0x30);
        digits++;
        if (fraction >= 0) fraction++;
      } else if (c === 0x2e && fraction < 0 && digits > 0) fraction = 0;
      else return null;
    }
    if (digits === 0 || digits > 15 || fraction === 0) return null;
    const value = fraction > 0 ? whole / POWERS[fraction]! : whole;
    return negative ? -value : value;
  }
  /** The product of an array of dimensions; the array's kind where one is not a count. */
  private dimensions(): Field {
    this.i++;
    let product = 1;
    this.space();
    if (this.peek() === CLOSE_ARRAY) {
      this.i++;
      return product;
    }
    for (;;) {
      this.space();
      const v = this.value();
      product *= typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : Number.NaN;
      this.space();
      const c = this.peek();
      this.i++;
      if (c === CLOSE_ARRAY) return Number.isNaN(product) ? NESTED_ARRAY : product;
      if (c !== COMMA) {
        this.i--;
        throw this.fault('"," or "]" in an array');
      }
    }
  }

  /** A string whose opening quote is at i; decoded without JSON.parse unless it holds an escape. */
  private string(): string {
    const { buf } = this;
    const start = ++this.i;
    let escaped = false;
    let h = 0;
    for (let i = start; i < this.end; i++) {
      const c = buf[i]!;
      h = (Math.imul(h, 31) + c) | 0;
      if (c === BACKSLASH) {
        escaped = true;
        i++;
      } else if (c === QUOTE) {
        this.i = i + 1;
        if (!escaped) return this.strings.get(buf, start, i, h);
        const text = buf.toString('utf8', start - 1, i + 1);
        try {
          return JSON.parse(text) as string;
        } catch (error) {
          throw new EventSyntax(error instanceof Error ? error.message : String(error), text);
        }
      } else if (c < 0x20) throw this.fault('no control character in a string');
    }
    throw this.fault('a closing quote');
  }

  /**
   * Walks over a value no format reads: strings and nesting followed, a number or literal checked by its first byte.
   */
  private skip(): void {
    const { buf } = this;
    const c = this.peek();
    if (c === QUOTE) {
      let i = this.i + 1;
      while (i < this.end && buf[i] !== QUOTE) i += buf[i] === BACKSLASH ? 2 : 1;
      if (i >= this.end) throw this.fault('a closing quote');
      this.i = i + 1;
      return;
    }
    if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
      const start = this.i;
      while (this.i < this.end && !endsBare(buf[this.i]!)) this.i++;
      const first = buf[start];
      const second = buf[start + 1];
      const number =
        first !== undefined &&
        ((first >= 0x30 && first <= 0x39) ||
          (first === 0x2d && second !== undefined && second >= 0x30 && second <= 0x39));
      const word = buf.toString('latin1', start, this.i);
      if (!number && word !== 'true' && word !== 'false' && word !== 'null')
        throw new EventSyntax(`"${word.slice(0, 20)}" is not a JSON value`, word);
      return;
    }
    let depth = 0;
    let inString = false;
    let i = this.i;
    for (; i < this.end; i++) {
      const b = buf[i]!;
      if (inString) {
        if (b === BACKSLASH) i++;
        else if (b === QUOTE) inString = false;
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if ((b === CLOSE_OBJECT || b === CLOSE_ARRAY) && --depth === 0) break;
    }
    this.i = i + 1;
  }

  private peek(): number {
    return this.i < this.end ? this.buf[this.i]! : -1;
  }

  private space(): void {
    while (this.i < this.end && isSpace(this.buf[this.i]!)) this.i++;
  }

  private fault(expected: string): EventSyntax {
    const near = this.buf.toString('utf8', Math.max(0, this.i - 32), Math.min(this.end, this.i + 32));
    const found = this.i < this.end ? JSON.stringify(String.fromCharCode(this.buf[this.i]!)) : 'the end of the event';
    return new EventSyntax(`expected ${expected}, found ${found}`, near);
  }
}
