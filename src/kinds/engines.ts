import type { ModelResource } from './api/index.js';
import { type Stage, table } from './list.js';

// Where the kinds' ops run, as the pictures, the trace and the overlap model group them: the engines and which
// stages share one, the model's resources, the kinds on the SMs, running kernels or communicating, and how CUPTI
// records each kind's ops.

/**
 * For each stage whose ops queue for an engine, the stages sharing that engine, given how many copy engines the
 * device has (one serves both directions). Built once per call: callers index by the arrays it holds.
 */
export function engineSharing(copyEngines: number): ReadonlyMap<Stage, readonly Stage[]> {
  const hostCopies = table.filter((s) => s.look.engine.hostCopy).map((s) => s.id);
  return new Map(
    table
      .filter((s) => s.look.engine.exclusive)
      .map((s) => [s.id, s.look.engine.hostCopy && copyEngines < 2 ? hostCopies : [s.id]]),
  );
}

/** An engine as the trace draws it: a track per engine, the stages whose ops run on it, in the order of `row`. */
export interface EngineRow {
  readonly row: number;
  readonly name: string;
  readonly stages: readonly Stage[];
}

/** The engines of a device with `copyEngines` copy engines: one serves both directions where it has one. */
export function engineRows(copyEngines: number): EngineRow[] {
  const rows = new Map<string, { row: number; name: string; stages: Stage[] }>();
  for (const s of table) {
    const shared = s.look.engine.hostCopy && copyEngines < 2;
    // Stages on one engine (kernels and GEMMs on the SMs) share its row.
    const key = shared ? 'copy' : s.look.engine.name;
    const row = rows.get(key) ?? {
      row: s.look.engine.row,
      name: shared ? 'copy engine' : s.look.engine.name,
      stages: [],
    };
    row.row = Math.min(row.row, s.look.engine.row);
    row.stages.push(s.id);
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.row - b.row);
}

/** The kinds whose ops run on the SMs as the overlap model counts them (kernels, GEMMs): computation. */
export const SM_STAGES: readonly Stage[] = table.filter((s) => s.model?.term === 'kernels').map((s) => s.id);

/** The kinds whose ops are communication between ranks, whose time is set against computation. */
export const COMMUNICATION_STAGES: readonly Stage[] = table.filter((s) => s.communication).map((s) => s.id);

/** The kinds whose ops run kernels (CUPTI records them as kernels): a mode of them alone keeps the SMs at work. */
export const KERNEL_STAGES: readonly Stage[] = table
  .filter((kind) => kind.cupti?.kind === 'kernel')
  .map((kind) => kind.id);

/**
 * How each kind's ops read as GPU work in src/traces/events.ts: as CUPTI records them, a copy's direction its term's.
 */
export const EVENT_SHAPES: ReadonlyMap<
  Stage,
  { readonly kind: 'kernel' | 'memcpy'; readonly direction: 'h2d' | 'd2h' | null; readonly communication: boolean }
> = new Map(
  table.flatMap((s) =>
    s.cupti
      ? [
          [
            s.id,
            {
              kind: s.cupti.kind,
              direction: s.model?.term === 'H2D' ? 'h2d' : s.model?.term === 'D2H' ? 'd2h' : null,
              communication: !!s.communication,
            },
          ] as const,
        ]
      : [],
  ),
);

/** The overlap model's resources, each once, in the table's order (the pipeline's: loads, compute, stores). */
export const MODEL_RESOURCES: readonly ModelResource[] = [...new Set(table.flatMap((s) => (s.model ? [s.model] : [])))];
