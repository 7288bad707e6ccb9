import {
  type Kept,
  readsOf,
  recordOf,
  type TopFields,
  type TraceRecord,
  type TraceRecords,
  topFieldsOf,
} from './chrome/record.js';
import { RecordStore } from './chrome/store.js';
import { streamTrace } from './chrome/stream.js';
import { traceError } from './errors.js';
import type { UsageError } from '../errors.js';
import type { ParsedTrace } from './events.js';
import type { ChromeFormat, PacedParse, TraceFormat } from './formats/format.js';
import { traceFormats } from './formats/index.js';
import { TRACE_LIMITS, type TraceLimits } from './read.js';

// A trace file read through the list of formats: a format that reads its files itself is tried first, by their
// first bytes; anything else is Chrome trace JSON, streamed once into the events some Chrome format keeps. Which
// of those it is, is decided only after the last event, from the top-level fields and the kept events, since the
// fields that tell (Kineto's `schemaVersion`, cuda-pipe's `otherData`) may come before or after `traceEvents`.

const chromeFormats = (formats: readonly TraceFormat[]) =>
  formats.filter((f): f is ChromeFormat => f.container === 'chrome');

/** Whether a format keeps an event: for its own sake, or only as the context of others. */
const keeperOf =
  (format: ChromeFormat) =>
  (record: TraceRecord): Kept =>
    format.keeps(record) ? (format.context?.(record) ? 'context' : 'event') : false;

/** An event some Chrome format keeps (every format's kept events are kept until the format is known). */
const keepsOf = (formats: readonly ChromeFormat[]) => {
  const keepers = formats.map(keeperOf);
  return (record: TraceRecord): Kept => {
    let kept: Kept = false;
    for (const keeper of keepers) {
      const keeps = keeper(record);
      if (keeps === 'event') return 'event';
      kept ||= keeps;
    }
    return kept;
  };
};

/** Reads one trace file in whichever format it is, or fails with exit 2 naming the file and what was wrong. */
export async function parseTraceFile(file: string, limits: TraceLimits = TRACE_LIMITS): Promise<ParsedTrace> {
  const formats = traceFormats();
  for (const format of formats)
    if (format.container === 'file' && format.sniff(file, limits)) return format.parse(file, limits);
  const chrome = chromeFormats(formats);
  const { top, records, refused } = await streamTrace(
    file,
    readsOf(chrome.map((f) => f.reads)),
    chrome.map(keeperOf),
    limits,
  );
  const parsed = parseRecords(file, chrome, top, records, refused);
  if (!isPaced(parsed)) return parsed;
  for (;;) {
    const slice = parsed.next();
    if (slice.done) return slice.value;
    // A turn of the event loop between slices: a signal's handler runs here.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const isPaced = (parsed: ParsedTrace | PacedParse): parsed is PacedParse =>
  typeof (parsed as PacedParse).next === 'function';

/** A document already parsed (tests build them in code), reduced to the records the stream would give. */
export function parseTraceDocument(file: string, parsed: unknown): ParsedTrace {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw traceError(file, 'it is not a Chrome trace object (a JSON object with traceEvents)');
  const document = parsed as Record<string, unknown>;
  const events = document.traceEvents;
  if (!Array.isArray(events)) throw traceError(file, 'it has no traceEvents array');
  const chrome = chromeFormats(traceFormats());
  const reads = readsOf(chrome.map((f) => f.reads));
  const keeps = keepsOf(chrome);
  const records = new RecordStore(reads);
  events.forEach((item, index) => {
    const record = recordOf(item, index, reads);
    if (record === null) throw traceError(file, `traceEvents[${index}] is not an object`);
    const kept = keeps(record);
    if (kept) records.push(kept === 'context' ? { ...record, args: {} } : record);
  });
  const trace = parseRecords(file, chrome, topFieldsOf(document, reads), records);
  if (!isPaced(trace)) return trace;
  for (;;) {
    const slice = trace.next();
    if (slice.done) return slice.value;
  }
}

/** The first format a field marks as its own, else the first its events make likely. */
function parseRecords(
  file: string,
  formats: readonly ChromeFormat[],
  top: TopFields,
  records: TraceRecords,
  refused: readonly (UsageError | null)[] = [],
): ParsedTrace | PacedParse {
  const sniffed = formats.map((format, f) => ({
    format,
    sniffed: format.sniff(top, records),
    refused: refused[f] ?? null,
  }));
  const chosen = sniffed.find((s) => s.sniffed === 'marked') ?? sniffed.find((s) => s.sniffed === 'likely');
  if (chosen?.refused) throw chosen.refused;
  if (chosen) return chosen.format.parse(file, top, records);
  const names = formats.map((f) => f.words.name);
  throw traceError(
    file,
    `it is neither ${names.slice(0, -1).join(', ')} nor ${names.at(-1)}: ${list(formats.map((f) => f.words.lacks))}`,
  );
}

const list = (items: readonly string[]) =>
  items.length > 1 ? `${items.slice(0, -1).join(', ')}, and ${items.at(-1)}` : (items[0] ?? '');
