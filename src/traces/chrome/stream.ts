import { traceError } from '../errors.js';
import { checkProgress, openTrace, streamError, type TraceLimits, tooLong } from '../read.js';
import type { Kept, Reads, TraceRecord } from './record.js';
import { ChromeScanner, type StreamedTrace } from './scan.js';

// A Chrome trace streamed: the document is never held, only the top-level fields the formats read and, of
// `traceEvents`, each event reduced to a `TraceRecord` of the fields they read, and dropped at once unless a format
// keeps it (scan.ts). The format is decided after the last event (../parse.ts), so no key order is assumed: a writer
// may put the fields that tell its format before `traceEvents` or after it. The limits (../read.ts) are checked
// after every chunk.

export type { StreamedTrace };

/**
 * Streams a trace file into its kept events: each chunk of text (inflated where the file is gzip) scanned as it
 * arrives, so an error is known to lie in that chunk, and one found only at the end means the text stopped short.
 */
export async function streamTrace(
  file: string,
  reads: Reads,
  keepers: readonly ((record: TraceRecord) => Kept)[],
  limits: TraceLimits,
): Promise<StreamedTrace> {
  const { text, gzip, compressedBytes } = openTrace(file, limits);
  const scanner = new ChromeScanner(file, reads, keepers, limits);
  let bytes = 0;
  let progress = 0;
  let withoutEvent = 0;
  try {
    for await (const chunk of text as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) throw tooLong(file, gzip, limits.maxBytes);
      scanner.write(chunk);
      withoutEvent = scanner.progress === progress ? withoutEvent + chunk.length : 0;
      progress = scanner.progress;
      checkProgress(file, limits, { text: bytes, compressed: compressedBytes(), withoutEvent });
    }
    if (bytes === 0) throw traceError(file, 'it is empty');
    return scanner.end();
  } catch (error) {
    throw streamError(file, error);
  } finally {
    text.destroy();
  }
}
