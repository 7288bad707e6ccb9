import { UsageError } from '../errors.js';

// The words every reader and format raises about a trace: one paragraph naming the file, and what to pass instead.

export const TRACE_HINT =
  'Pass a PyTorch profiler trace (.json, .json.gz, .pt.trace.json.gz) or a `cuda-pipe run --trace` file.';

/** The error every reader and parser raises about a trace: one paragraph naming the file. */
export function traceError(file: string, reason: string): UsageError {
  return new UsageError(`Cannot analyse trace ${file}: ${reason}.`, { hint: TRACE_HINT });
}
