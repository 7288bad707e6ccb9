import type { EventHandle, StreamHandle } from '../cuda/types.js';
import type { RepHooks } from '../kinds/index.js';
import type { Op, Schedule } from '../plan/types.js';

// What an issuer hands the rep runner: a schedule bound to handles, every call prebuilt (issue.ts's DirectIssuer
// issues it op by op, graph-issuer.ts replays it).

/**
 * A schedule bound to handles, ready to issue: one closure per issued call, returning the raw cudaError_t, so the
 * timed loop only calls and compares. `ops[i]` is what `thunks[i]` issues (for naming a failure).
 */
export interface PreparedRep {
  readonly schedule: Schedule;
  readonly thunks: ReadonlyArray<() => number>;
  /** The op each thunk issues; null for a graph launch, which issues the whole body. */
  readonly ops: ReadonlyArray<Op | null>;
  readonly opStreams: readonly StreamHandle[];
  /** Index in `thunks` of the call that issues the body's op `bodyIndex` (for a graph, its launch). */
  readonly bodyThunkIndex: (bodyIndex: number) => number;
  /** The tag of each host op of the body, by body index, for reading when it ran. */
  readonly hostTags: ReadonlyMap<number, number>;
  /** A kind's hooks in each rep (the host stage's hand-over and loader); null: the runner's bare loop issues it. */
  readonly rep: RepHooks | null;
  /** Host time spent capturing and instantiating a graph, once; null for a schedule issued op by op. */
  readonly setup: { readonly captureMs: number; readonly instantiateMs: number } | null;
  /** Every event of the schedule, so a traced rep can read any of them. */
  readonly events: ReadonlyMap<string, EventHandle>;
  readonly start: EventHandle;
  readonly end: EventHandle;
  /** Index in `thunks` of the call that records `start`. */
  readonly startIndex: number;
}

/** Turns a schedule into a PreparedRep. The direct issuer issues every op from the host; the graph issuer replays. */
export interface Issuer {
  prepare(schedule: Schedule): PreparedRep;
}

/** A schedule's streams and events, created once, and a way to build the thunk of any of its ops. */
export interface BoundSchedule {
  readonly streams: ReadonlyMap<string, StreamHandle>;
  readonly events: ReadonlyMap<string, EventHandle>;
  stream(id: string): StreamHandle;
  event(id: string): EventHandle;
  /** The device a stream of the schedule is on. */
  deviceOf(id: string): number;
  /** `external`: inside a capture, record events as graph nodes (so a replay records them, for timing). */
  thunk(op: Op, options?: { external?: boolean }): { issue: () => number; hostTag: number | null };
}
