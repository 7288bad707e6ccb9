import { looksLikeOwnTrace, parseOwnTrace } from './chrome-own.js';
import { looksLikeKineto, parseKineto } from './kineto.js';
import type { ParsedTrace } from './model.js';
import { parseNsys } from './nsys.js';
import { MAX_TRACE_BYTES, readTraceJson, traceError } from './read.js';
import { isSqliteFile } from './sqlite.js';

/** Reads one trace file in whichever format it is, or fails with exit 2 naming the file and what was wrong. */
export function parseTraceFile(file: string): ParsedTrace {
  // An Nsight Systems export is SQLite, told by its first bytes whatever its name; anything else is read as JSON.
  if (isSqliteFile(file, { maxBytes: MAX_TRACE_BYTES })) return parseNsys(file, { maxBytes: MAX_TRACE_BYTES });
  return parseTraceDocument(file, readTraceJson(file));
}

export function parseTraceDocument(file: string, parsed: unknown): ParsedTrace {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw traceError(file, 'it is not a Chrome trace object (a JSON object with traceEvents)');
  const document = parsed as Record<string, unknown>;
  const events = document.traceEvents;
  if (!Array.isArray(events)) throw traceError(file, 'it has no traceEvents array');
  if (looksLikeOwnTrace(document)) return parseOwnTrace(file, events);
  if (looksLikeKineto(document, events)) return parseKineto(file, document, events);
  throw traceError(file, 'it is neither a PyTorch profiler (Kineto) trace nor a cuda-pipe trace: no kernel, gpu_memcpy or cuda_runtime events, and no otherData.tool of cuda-pipe');
}
