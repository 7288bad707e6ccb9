import { cudaPipe } from './cuda-pipe/index.js';
import type { TraceFormat } from './format.js';
import { kineto } from './kineto/index.js';
import { nsys } from './nsys/index.js';

// The one list of trace formats: `analyze` reads every file through it, the analysis document's schema names its
// ids, and the findings take each format's words from it. A format is its folder and its row here
// (docs/ARCHITECTURE.md, "A new trace format").

const FORMATS: TraceFormat[] = [kineto, cudaPipe, nsys];

/** Every format, in the order a file is tried against them (a `marked` sniff first, then a `likely` one). */
export function traceFormats(): readonly TraceFormat[] {
  return FORMATS;
}

/** The format of an id the list holds; a parsed trace's `format` is always one. */
export function traceFormat(id: string): TraceFormat {
  const format = FORMATS.find((f) => f.id === id);
  if (!format) throw new Error(`no trace format "${id}" in src/traces/formats/index.ts`);
  return format;
}

/** Adds a format to the list, as a row above does: tests register their fixture format through it. */
export function registerTraceFormat(format: TraceFormat): void {
  if (FORMATS.some((f) => f.id === format.id)) throw new Error(`trace format "${format.id}" is already in the list`);
  FORMATS.push(format);
}
