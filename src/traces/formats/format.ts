import type { ChromeReads, TopFields, TraceRecord, TraceRecords } from '../chrome/record.js';
import type { ParsedTrace } from '../events.js';

// What a trace format is: one folder under src/traces/formats/ and one row of index.ts's list. A format only reads
// its files into the event model (../events.ts); the analysis core reads that model and never a format. Two kinds
// of file are read: Chrome trace JSON, streamed once by the one reader (../chrome/stream.ts) that keeps what every
// Chrome format reads, the format told after the last event; and a file a format reads itself (an SQLite export),
// told by its first bytes before anything is streamed.

/** How sure a format is that a file is its own: `marked` by a field only its writer puts there, `likely` by events. */
export type Sniffed = 'marked' | 'likely' | null;

/** A format in the words of messages and findings. */
export interface FormatWords {
  /** The format as a message names it: "a PyTorch profiler (Kineto) trace". */
  readonly name: string;
  /** What a file lacks that is not of this format, for the message that refuses a file of no format. */
  readonly lacks: string;
  /** How the format tells the legacy default stream, in a finding's words. */
  readonly defaultStream: string;
}

interface FormatCommon {
  /** The format's id, in the analysis document's `format`: its folder's name. */
  readonly id: string;
  readonly words: FormatWords;
  /**
   * `wall`: its times are its host's wall clock, so the traces of one launch's ranks must overlap in time (and
   * `clockBaseMs` may move them onto one clock); `own`: they count from the trace's own start.
   */
  readonly clock: 'wall' | 'own';
}

/** A format of Chrome trace JSON. */
export interface ChromeFormat extends FormatCommon {
  readonly container: 'chrome';
  /** The fields it reads: the reader keeps these of every event, and nothing it does not name. */
  readonly reads: ChromeReads;
  /** Whether it reads this event: the reader keeps an event some format keeps, and drops it otherwise. */
  keeps(record: TraceRecord): boolean;
  /**
   * Whether a kept event only gives other events their context (a range whose name labels the launches inside it):
   * such events are kept without their args and counted against a limit of their own, so that a trace is never
   * refused for the events the rules read because of the ranges around them.
   */
  context?(record: TraceRecord): boolean;
  /** Whether the file is its own, from the top-level fields and the kept events. */
  sniff(top: TopFields, records: TraceRecords): Sniffed;
  /**
   * The events of its file; `records` are those any format kept, in file order, each read back as it is iterated
   * (hold what the model needs, not the records). Exit 2 naming the file and event. A parse that runs long may be a
   * generator that yields now and then: reading a file, the caller lets the event loop turn there, so that a signal
   * ends the command within its deadline instead of after the parse.
   */
  parse(file: string, top: TopFields, records: TraceRecords): ParsedTrace | PacedParse;
}

/** A parse in slices: each `next()` runs one, and the last returns the trace. */
export type PacedParse = Generator<void, ParsedTrace, void>;

/** A format whose files it reads itself. */
export interface FileFormat extends FormatCommon {
  readonly container: 'file';
  /** Whether the file is its own, from its first bytes; the file is checked as every trace is before it is read. */
  sniff(file: string, limit: { readonly maxBytes: number }): boolean;
  parse(file: string, limit: { readonly maxBytes: number }): Promise<ParsedTrace>;
}

export type TraceFormat = ChromeFormat | FileFormat;
