import { looksLikeOwnTrace, ownKeeps, parseOwnTrace } from './chrome-own.js';
import { kinetoKeeps, looksLikeKineto, parseKineto } from './kineto.js';
import type { ParsedTrace } from '../analysis/events.js';
import { parseNsys } from './nsys.js';
import { TRACE_LIMITS, type TraceLimits, traceError } from './read.js';
import { isSqliteFile } from './sqlite.js';
import { streamTrace } from './stream.js';
import { recordOf, type TopFields, type TraceRecord, topFieldsOf } from './stream-record.js';

// A trace is streamed into the events either format reads (stream.ts); which format it is, is decided only after the
// last event, from the top-level fields and the kept events' categories, since the fields that tell (Kineto's
// `schemaVersion`, cuda-pipe's `otherData`) may come before or after `traceEvents`.

/** An event either format reads: both formats' kept events are kept until the format is known. */
const keeps = (record: TraceRecord): boolean => kinetoKeeps(record) || ownKeeps(record);

/** The largest Nsight Systems export read: sql.js holds the whole database in memory. */
export const MAX_SQLITE_BYTES = 1024 * 1024 * 1024;

/** Reads one trace file in whichever format it is, or fails with exit 2 naming the file and what was wrong. */
export async function parseTraceFile(file: string, limits: TraceLimits = TRACE_LIMITS): Promise<ParsedTrace> {
  // An Nsight Systems export is SQLite, told by its first bytes whatever its name; anything else is streamed as JSON.
  const sqlite = { maxBytes: Math.min(limits.maxBytes, MAX_SQLITE_BYTES) };
  if (isSqliteFile(file, sqlite)) return parseNsys(file, sqlite);
  const { top, records } = await streamTrace(file, keeps, limits);
  return parseRecords(file, top, records);
}

/** A document already parsed (tests build them in code), reduced to the records the stream would give. */
export function parseTraceDocument(file: string, parsed: unknown): ParsedTrace {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw traceError(file, 'it is not a Chrome trace object (a JSON object with traceEvents)');
  const document = parsed as Record<string, unknown>;
  const events = document.traceEvents;
  if (!Array.isArray(events)) throw traceError(file, 'it has no traceEvents array');
  const records: TraceRecord[] = [];
  events.forEach((item, index) => {
    const record = recordOf(item, index);
    if (record === null) throw traceError(file, `traceEvents[${index}] is not an object`);
    if (keeps(record)) records.push(record);
  });
  return parseRecords(file, topFieldsOf(document), records);
}

function parseRecords(file: string, top: TopFields, records: readonly TraceRecord[]): ParsedTrace {
  if (looksLikeOwnTrace(top)) return parseOwnTrace(file, records);
  if (looksLikeKineto(top, records)) return parseKineto(file, top, records);
  throw traceError(file, 'it is neither a PyTorch profiler (Kineto) trace nor a cuda-pipe trace: no kernel, gpu_memcpy or cuda_runtime events, and no otherData.tool of cuda-pipe');
}
