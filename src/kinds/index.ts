// The door of src/kinds/: the core reaches the stage kinds, and the kind contract, through this module alone. The
// list itself, the one place that names the kinds, is ./list.ts; the modules beside it are what the core reads of
// the list, one concern each, and this module passes their names on and nothing of a kind's own.

// What the core reads of a kind's contract (./api/): the types its hooks are called with and give back.
export { NOT_LAUNCHED, PENDING } from './api/index.js';
export type {
  Agreement,
  CheckRecord,
  ChunkWork,
  ComputeStep,
  CuptiRecord,
  DescribeContext,
  HostBuffers,
  IssueSite,
  KindFlagValues,
  KindRep,
  KindRuntime,
} from './api/index.js';
export type {
  Launch,
  ModelParts,
  ModelResource,
  OpenContext,
  RepHooks,
  RepWatch,
  ReportContext,
  RuntimePrimitives,
  RuntimeStart,
  SchedulePart,
  StageKind,
} from './api/index.js';
export type { KindRepEnd, SectionContext, TermContext, TermMeasured, TermWords, Thunk } from './api/index.js';

// The list and its lookups.
export { isWorkOp, STAGE_IDS, STAGE_KINDS, STAGES, stage, stageOf } from './list.js';
export type { Stage, WorkOp } from './list.js';
// A work op as the core reads it through its kind.
export {
  describeWorkOp,
  nounCounts,
  opBytes,
  phaseOps,
  takesTolerance,
  timelineFields,
  workNames,
  workOpWhat,
} from './ops.js';
// Where the kinds' ops run: engines, the model's resources, CUPTI's records.
export {
  COMMUNICATION_STAGES,
  EVENT_SHAPES,
  engineRows,
  engineSharing,
  KERNEL_STAGES,
  MODEL_RESOURCES,
  SM_STAGES,
} from './engines.js';
export type { EngineRow } from './engines.js';
// The kinds' runtimes, their flags and environment.
export {
  issueWorkOp,
  KIND_ENVIRONMENT,
  KIND_FLAGS,
  kindFlagValues,
  kindRecords,
  loadRuntimes,
  openRuntimes,
  preflight,
} from './runtimes.js';
export { schedulesHolding, startRuntimes, stopRuntimes } from './runtimes.js';
export type { KindRuntimes, RuntimeModules } from './runtimes.js';
// What the kinds add to the config and to the Result.
export {
  CONFIG_SECTIONS,
  kindRepFields,
  MODE_SECTIONS,
  RESULT_SECTIONS,
  readConfigSections,
  STEP_CONFIGS,
} from './sections.js';
export type { ConfigSections, KindSections } from './sections.js';
// The kinds' hooks into the core's passes.
export {
  aloneSchedules,
  bodyPasses,
  KIND_TERMS,
  kindMeasured,
  kindModeFields,
  kindModeLines,
  kindReports,
  layoutDependent,
} from './hooks.js';
export { outputCheck, referenceOf, SPANNING_STAGES, spanningPass, termWords } from './hooks.js';
