import type { z } from 'zod';
import { UsageError } from '../errors.js';
import { MAX_RESULT_BYTES } from '../files/limits.js';
import { readRegularFile } from '../files/read.js';
import { CONTROL, escapeControl, formatPath } from '../format.js';
import { type ModeRole, modeId } from '../vocabulary.js';
import type { ModeResult } from '../model/mode.js';
import { BoundTermSchema } from '../model/analysis.js';
import { RESULT_SCHEMA_ID, RESULT_VERSION, type RunResult, RunResultSchema } from './schema.js';
import { AB_SCHEMA_ID, type AbResult, AbResultSchema } from './ab.js';
import { PROBE_SCHEMA_ID, type ProbeDocument, ProbeDocumentSchema } from './probe.js';
import { type RunResultV1, runResultV1Schema } from './v1.js';
import { resultProblem } from './validate.js';

/** A result file holds one Result, or an array of them (several configs). Anything else is a usage error. */
export function loadResults(path: string): RunResult[] {
  return resultsOf(readDocument(path, RESULTS_HINT), path);
}

const RESULTS_HINT = 'Pass files written by `cuda-pipe run --json`.';

/** Any document this tool writes that `report` re-renders: Results (run, sweep, merge), an A/B document, a probe. */
export type SavedDocument =
  | { readonly kind: 'results'; readonly results: RunResult[] }
  | { readonly kind: 'ab'; readonly ab: AbResult }
  | { readonly kind: 'probe'; readonly probe: ProbeDocument };

/** A saved document of any kind, told apart by its `schema` field (an array holds Results). */
export function loadDocument(path: string): SavedDocument {
  const parsed = readDocument(
    path,
    'Pass a file written by `cuda-pipe run`, `sweep`, `merge`, `ab` or `probe` with --json.',
  );
  const schema = Array.isArray(parsed) ? RESULT_SCHEMA_ID : (parsed as { schema?: unknown } | null)?.schema;
  if (schema === AB_SCHEMA_ID)
    return { kind: 'ab', ab: checkDocument(AbResultSchema, parsed, path, 'A/B document (`cuda-pipe ab --json`)') };
  if (schema === PROBE_SCHEMA_ID)
    return {
      kind: 'probe',
      probe: checkDocument(ProbeDocumentSchema, parsed, path, 'probe document (`cuda-pipe probe --json`)'),
    };
  return { kind: 'results', results: resultsOf(parsed, path) };
}

function resultsOf(parsed: unknown, path: string): RunResult[] {
  const items = Array.isArray(parsed) ? parsed : [parsed];
  return items.map((item, index) =>
    parseResult(item, (where) => `${path}${Array.isArray(parsed) ? `[${index}]` : ''}${where ? `: ${where}` : ''}`),
  );
}

// A document is parsed once: zod's compiled fast path (made with new Function at a schema's first parse) cost 60 ms
// of each `report`, and was no faster on the largest committed documents (docs/measurements/2026-11-28-cli-start/).
const ONCE = { jitless: true } as const;

function checkDocument<S extends z.ZodType>(schema: S, item: unknown, path: string, what: string): z.output<S> {
  const result = schema.safeParse(item, ONCE);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = formatPath((issue?.path ?? []).filter((p): p is string | number => typeof p !== 'symbol'));
  throw new UsageError(`${path}: ${field || 'document'}: not a valid ${what}: ${issue?.message ?? 'invalid'}.`, {
    hint: 'Pass the file as cuda-pipe wrote it.',
  });
}

/** A JSON file within the size and depth limits, its strings' control characters escaped. */
function readDocument(path: string, hint: string): unknown {
  const text = readRegularFile(path, { what: 'result file', maxBytes: MAX_RESULT_BYTES, hint });
  const deep = jsonDeeperThan(text, MAX_RESULT_DEPTH);
  if (deep !== null) {
    throw new UsageError(
      `${path}: the JSON nests more than ${MAX_RESULT_DEPTH} levels deep (at character ${deep}); a Result nests about 10.`,
      { hint },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not a JSON file: ${(error as Error).message}.`, { hint });
  }
  return mayHoldControl(text) ? escapeStrings(parsed) : parsed;
}

/** Any character CONTROL escapes, once (CONTROL itself is global, for replace). */
const ANY_CONTROL = new RegExp(CONTROL.source);
/** The JSON escapes that can decode to such a character: \b, \f, \r and \u (\n and \t are kept as they are). */
const CONTROL_ESCAPE = /\\[bfru]/;

/**
 * Whether a parsed file can hold a string with a character to escape: only where its text holds one raw, or an escape
 * that can decode to one. A file cuda-pipe wrote holds neither, and skips the walk that copied every object of it
 * (about 4 ms of a `compare` start: docs/measurements/2026-11-29-escape-walk/). An escaped backslash before b, f, r or
 * u only costs the walk.
 */
function mayHoldControl(text: string): boolean {
  return ANY_CONTROL.test(text) || CONTROL_ESCAPE.test(text);
}

/**
 * How deep a Result file's JSON may nest. JSON.parse takes any depth, but every recursive step after it (the schema,
 * JSON.stringify in `report --json`, `merge`) overflows the stack on 200,000 levels.
 */
export const MAX_RESULT_DEPTH = 64;

/** A structural character of JSON: a bracket, a brace, or the quote that opens a string. */
const STRUCTURE = /["[\]{}]/g;
/** Inside a string: its closing quote, or a backslash, which escapes the character after it. */
const IN_STRING = /["\\]/g;

/**
 * The offset where `text` (JSON) first nests deeper than `limit` arrays and objects, or null; strings are skipped.
 * The regular expressions jump from one character that matters to the next: a character at a time in JavaScript,
 * this scan was 8.6 ms of the 305 ms a profile of `report` sampled (docs/measurements/2026-11-28-cli-start-2/).
 */
export function jsonDeeperThan(text: string, limit: number): number | null {
  let depth = 0;
  STRUCTURE.lastIndex = 0;
  for (let found = STRUCTURE.exec(text); found !== null; found = STRUCTURE.exec(text)) {
    const c = found[0];
    if (c === '"') {
      STRUCTURE.lastIndex = stringEnd(text, STRUCTURE.lastIndex);
    } else if (c === '[' || c === '{') {
      depth += 1;
      if (depth > limit) return found.index;
    } else depth -= 1;
  }
  return null;
}

/** Where the string whose text starts at `from` ends, past its closing quote; the text's length when it never does. */
function stringEnd(text: string, from: number): number {
  IN_STRING.lastIndex = from;
  for (let found = IN_STRING.exec(text); found !== null; found = IN_STRING.exec(text)) {
    if (found[0] === '"') return IN_STRING.lastIndex;
    IN_STRING.lastIndex += 1;
  }
  return text.length;
}

/**
 * Every string of a parsed file (keys too) with its control characters escaped: everything a report prints from a
 * Result is then text, whichever renderer prints it. Recursive within MAX_RESULT_DEPTH levels.
 */
function escapeStrings(value: unknown): unknown {
  if (typeof value === 'string') return escapeControl(value);
  if (Array.isArray(value)) return value.map(escapeStrings);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [escapeControl(key), escapeStrings(v)]));
  return value;
}

/** One Result document of any version this tool has written, migrated to the current version. */
export function parseResult(item: unknown, where: (field: string) => string = (f) => f): RunResult {
  const version = (item as { version?: unknown } | null)?.version;
  const schema = (item as { schema?: unknown } | null)?.schema;
  if (schema !== RESULT_SCHEMA_ID) {
    throw new UsageError(
      `${where('')} is not a cuda-pipe result (its "schema" is ${JSON.stringify(schema) ?? 'missing'}, not "${RESULT_SCHEMA_ID}").`,
      {
        hint: 'Pass files written by `cuda-pipe run --json`.',
      },
    );
  }
  if (version === 1) return consistent(migrateV1(check(runResultV1Schema(), item, where, 1)), where);
  if (version === RESULT_VERSION)
    return consistent(nothingCompared(check(RunResultSchema, item, where, RESULT_VERSION)), where);
  throw new UsageError(
    `${where('version')}: result version ${JSON.stringify(version)} is not one this cuda-pipe reads (1 to ${RESULT_VERSION}).`,
    {
      hint:
        typeof version === 'number' && version > RESULT_VERSION
          ? 'It was written by a newer cuda-pipe: upgrade this one.'
          : undefined,
    },
  );
}

function check<S extends z.ZodType>(
  schema: S,
  item: unknown,
  where: (field: string) => string,
  version: number,
): z.output<S> {
  const result = schema.safeParse(item, ONCE);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = (issue?.path ?? []).filter((p): p is string | number => typeof p !== 'symbol');
  throw new UsageError(
    `${where(formatPath(path) || 'document')}: not a valid version ${version} result: ${issue?.message ?? 'invalid'}.`,
    {
      hint: 'Pass files written by `cuda-pipe run --json`; `cuda-pipe schema --result` prints the current schema.',
    },
  );
}

/** A Result the schema accepts may still hold what no run writes (see validate.ts): refused, naming the field. */
/**
 * Files written before `nothing-compared` existed say `passed` for a config with no output buffer (gemm.yaml), where
 * no output was compared; they are read as what happened, so that no report of them claims a comparison.
 */
function nothingCompared(result: RunResult): RunResult {
  const v = result.verification;
  const outputs = result.buffers.some((b) => b.role === 'out' || b.role === 'inout');
  if (v.status !== 'passed' || outputs || v.reduction) return result;
  return { ...result, verification: { ...v, status: 'nothing-compared' } };
}

function consistent(result: RunResult, where: (field: string) => string): RunResult {
  const found = resultProblem(result);
  if (found === null) return result;
  throw new UsageError(
    `${where(found.field)}: ${found.problem}; this is not a Result cuda-pipe wrote, or it was changed since.`,
    {
      hint: 'Measure again with `cuda-pipe run --json`, or restore the file from where it was written.',
    },
  );
}

/**
 * Version 1 named modes by strings and held one layout, summary and bound. Each v1 mode id is matched against the
 * ids that version generated for this result's own kernels and orders, so nothing is taken apart.
 */
export function migrateV1(old: RunResultV1): RunResult {
  const { layout } = old;
  const device = old.environment.device.index;
  const overlap = (order: (typeof layout.orders)[number]): ModeRole => ({
    kind: 'overlapped',
    layout: { chunks: layout.chunks, streams: layout.streams, order, topology: 'chunk-per-stream' },
  });
  const v1Roles = new Map<string, ModeRole>([
    ['serial', { kind: 'serial' }],
    ['overlapped', overlap(layout.order)],
    ...layout.orders.map((o): [string, ModeRole] => [`overlapped:${o}`, overlap(o)]),
    ['h2d', { kind: 'stage', stage: 'h2d' }],
    ['d2h', { kind: 'stage', stage: 'd2h' }],
    ...old.kernels.map((k): [string, ModeRole] => [
      `kernel:${k.label}`,
      { kind: 'stage', stage: 'kernel', kernel: k.label },
    ]),
    ['bidirectional', { kind: 'link', copiesPerDirection: Math.max(2, layout.chunks), streamsPerDirection: 2 }],
  ]);
  const serialMs = old.summary.serialMs;
  // Version 1 kept the limiting terms as free strings; they were always one of today's terms.
  const bound = {
    ...old.bound,
    terms: old.bound.terms.map((t) => ({ ...t, term: BoundTermSchema.parse(t.term), perOpMs: 0 })),
  };
  const modes: ModeResult[] = old.modes.map((m) => {
    const role = v1Roles.get(m.id);
    if (!role) throw new UsageError(`version 1 result: mode "${m.id}" is none this version of the format could write.`);
    const headline = m.id === 'overlapped';
    return {
      id: modeId(role),
      role,
      device,
      description: m.description,
      bytes: m.bytes,
      samplesMs: m.samplesMs,
      hostIssueMs: m.hostIssueMs,
      stats: m.stats,
      stoppedBy: m.stoppedBy,
      elapsedMs: m.elapsedMs,
      gateTimeouts: m.gateTimeouts,
      smClockMHz: m.smClockMHz,
      analysis:
        role.kind === 'overlapped'
          ? {
              serialMs,
              speedup: serialMs / m.stats.median,
              // Version 1 kept the uncertainty of the headline only.
              speedupError: headline ? old.summary.speedupError : null,
              bound,
              efficiency: bound.ms / m.stats.median,
              chunkElements: layout.chunkElements,
              model: null,
            }
          : null,
    };
  });
  const headlineId = modeId(overlap(layout.order));
  return {
    schema: RESULT_SCHEMA_ID,
    version: RESULT_VERSION,
    tool: old.tool,
    createdAt: old.createdAt,
    run: { hostname: old.environment.hostname, rank: null, localRank: null, size: null, jobId: null, launcher: null },
    environment: { node: old.environment.node, platform: old.environment.platform, software: old.environment.software },
    devices: [old.environment.device],
    config: old.config,
    pipeline: {
      elements: layout.elements,
      align: layout.align,
      requestedChunks: layout.requestedChunks,
      requestedStreams: layout.requestedStreams,
    },
    buffers: old.buffers,
    kernels: old.kernels,
    policy: old.policy,
    clocks: old.clocks,
    modes,
    summary: { mode: headlineId, ...old.summary },
    timeline: null,
    sweep: null,
    verification: {
      status: old.verification.status,
      mismatches: old.verification.mismatches.map((m) => ({ ...m, mode: headlineId })),
    },
    warnings: old.warnings,
    notes: [...old.notes, `Migrated from a version 1 result written by cuda-pipe ${old.tool.version}.`],
  };
}
