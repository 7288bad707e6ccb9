import { gunzipSync } from 'node:zlib';
import { UsageError } from '../errors.js';
import { readRegularBytes } from '../files/read.js';
import { formatByteLimit } from '../files/limits.js';

// A trace is read whole, then parsed whole: streaming is not done yet (docs/analyze.md). The limit keeps a hostile or
// mistaken file from taking the machine's memory: V8 cannot hold a string much above 512 MiB, and JSON.parse of a
// 256 MiB trace already takes a few GiB.

/** The largest trace read, compressed or not, and the largest a gzip file may inflate to. */
export const MAX_TRACE_BYTES = 256 * 1024 * 1024;

const HINT = 'Pass a PyTorch profiler trace (.json, .json.gz, .pt.trace.json.gz) or a `cuda-pipe run --trace` file.';

/** The error every reader and parser raises about a trace: one paragraph naming the file. */
export function traceError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot analyse trace ${file}: ${reason}.`, { hint: HINT });
}

/** The trace's JSON, gunzipped where it starts with gzip's magic bytes (whatever its name says). */
export function readTraceJson(file: string, maxBytes = MAX_TRACE_BYTES): unknown {
  const raw = readRegularBytes(file, { what: 'trace', maxBytes, hint: HINT });
  const text = (raw[0] === 0x1f && raw[1] === 0x8b ? gunzip(file, raw, maxBytes) : raw).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    // Python's json writes NaN and Infinity, which are not JSON: name them, as the parser's message does not.
    const nonJson = /(?<![\w"])(NaN|-?Infinity)(?![\w"])/.exec(text.slice(0, 64 * 1024 * 1024));
    const why = error instanceof Error ? error.message : String(error);
    throw traceError(file, nonJson ? `it is not valid JSON (${nonJson[1]} is not a JSON number: ${why})` : `it is not valid JSON (${why})`);
  }
}

function gunzip(file: string, raw: Buffer, maxBytes: number): Buffer {
  try {
    return gunzipSync(raw, { maxOutputLength: maxBytes });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw traceError(file, `it inflates to more than the ${formatByteLimit(maxBytes)} a trace may be`);
    if (code === 'Z_BUF_ERROR') throw traceError(file, 'its gzip data is truncated (the file ends before the compressed stream does)');
    throw traceError(file, `its gzip data is corrupt (${error instanceof Error ? error.message : String(error)})`);
  }
}
