import type {
  ChunkRange,
  EventSpec,
  Plan,
  PlanOp,
  Schedule,
  SpanningSpec,
  StreamSpec,
  WorkOpBase,
} from '../../model/schedule.js';
import type { ModeRole } from '../../vocabulary.js';
import type { ComputeStep } from './config.js';

// How a stage kind takes part in planning: the ops it plans for a chunk, and its passes over what the planner made.
// Its hooks see the model's plan (model/schedule.ts) over any kind's ops, so a kind never loads the list of kinds.

/** One chunk of the pipeline as the planner hands it to each stage kind: what the stage plans its ops from. */
export interface ChunkWork {
  readonly buffers: readonly {
    readonly name: string;
    readonly role: string;
    readonly elementBytes: number;
    readonly itemSize: number;
  }[];
  /** The compute steps this chunk runs, in the config's order; each is planned by its own stage kind. */
  readonly compute: readonly ComputeStep[];
  /** The host stage's name, or null where the config has none. */
  readonly host: string | null;
  /** Items (elements where a config has no pipeline.items): buffer b's elements are the range × b.itemSize. */
  readonly range: { readonly first: number; readonly count: number };
  /** Item index in the device buffers where this chunk lives (its own range, or its slot of a ring). */
  readonly deviceFirst: number;
  readonly stream: string;
  readonly chunk: number | null;
}

/** The facts of the list of kinds a body pass reads, which the planner passes in (a kind does not load the list). */
export interface BodyPassFacts {
  /** The op kinds of a chunk's compute phase (the kinds whose `phase` is `compute`). */
  readonly computeKinds: ReadonlySet<string>;
}

/** What a body pass returns: the body, the streams it issues on, and the events it records beyond the given ones. */
export interface PassedBody<W extends WorkOpBase = WorkOpBase> {
  readonly body: readonly PlanOp<W>[];
  readonly streams: readonly StreamSpec[];
  readonly events: readonly EventSpec[];
}

/** What a whole-plan pass is given beyond the plan: the pipeline's mode, and the core's builders it may not load. */
export interface PlanPassContext {
  /** The config runs its layouts as graph replays (pipeline.mode: graph). */
  readonly graph: boolean;
  /** plan/devices.ts's `spanningSchedule`: a timed region whose streams are on several devices. */
  spanning(spec: SpanningSpec): Schedule;
}

/** What a kind's `alone` pass is given: the plan's chunk cuts, and the core's builder of a step timed alone. */
export interface AloneContext {
  /** The chunk cuts of the plan's layouts, one per distinct chunk count. */
  readonly layouts: readonly (readonly ChunkRange[])[];
  /** The step's ops over `ranges` (each range its own chunk), back to back on one stream, timed as `role`. */
  timed(role: ModeRole, description: string, ranges: readonly ChunkRange[]): Schedule;
}

/** A kind's plan passes (`KindPlanning.passes`). */
export interface KindPasses {
  /** Over each one-device schedule's body as it is made (plan/schedules.ts's timedSchedule). */
  body?(
    schedule: { readonly body: readonly PlanOp[]; readonly streams: readonly StreamSpec[]; readonly device: number },
    facts: BodyPassFacts,
  ): PassedBody;
  /**
   * Over the one-device plan, to run it on several devices: where a plan holds ops of a kind with this pass, the
   * devices run as it lays them out instead of splitting the input.
   */
  plan?(plan: Plan, devices: readonly number[], context: PlanPassContext): Plan;
  /**
   * The schedules that time one of its steps alone, in place of the step alone on whole buffers (a collective at each
   * bucket count of the layouts, apart from the compute steps).
   */
  alone?(step: ComputeStep, context: AloneContext): Schedule[];
}

export interface KindPlanning<O extends WorkOpBase = WorkOpBase> {
  /**
   * Where its ops go in a chunk's work, and how it plans them. Absent for a kind the chunk pipeline does not plan
   * (a peer copy, which the planner of a pipeline across two devices places between its halves).
   */
  readonly phase?: 'load' | 'compute' | 'store';
  /** A load or store kind's ops of a chunk. */
  plan?(work: ChunkWork): O[];
  /** A compute kind's ops of one of the chunk's compute steps (one whose `stage` is this kind's id). */
  planStep?(step: ComputeStep, work: ChunkWork): O[];
  /**
   * Passes over what the planner made, for a kind whose ops change how the rest of a schedule or plan is laid out
   * (a collective's communication stream; data parallelism over devices). The planner runs them for each kind whose
   * ops the body or plan holds, in the table's order.
   */
  readonly passes?: KindPasses;
}
