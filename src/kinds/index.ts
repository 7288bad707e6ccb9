import type { ZodRawShape, z } from 'zod';
import type { ModeResult } from '../model/mode.js';
import type { Plan as ModelPlan, PlanOp, Schedule as ModelSchedule, StreamSpec } from '../model/schedule.js';
import type { AloneContext, BodyPassFacts, CheckFacts, ChunkWork, ComputeStep, ConfigSection, DescribeContext, IssuedOp, IssueSite } from './api/index.js';
import type { KindDescription, KindFlag, KindFlagValues, KindRepEnd, KindRuntime, KindRuntimeModule, KindTerm, ModelResource, ModeLineContext } from './api/index.js';
import type { OpenContext, OutputCheck, PassedBody, PlanPassContext, ReportContext, ResultView, RuntimePrimitives, RuntimeStart } from './api/index.js';
import type { SectionContext, StageKind, StartContext, StepConfig, TermMeasured, TermWords, TimelineFields } from './api/index.js';
import type { ConfigHost } from '../model/buffers.js';
import { collective } from './collective/index.js';
import { d2h, h2d } from './copy/index.js';
import { gemm } from './gemm/index.js';
import { host } from './host/index.js';
import { kernel } from './kernel/index.js';
import { matmul } from './matmul/index.js';
import { peer } from './peer/index.js';

// The list of stage kinds: the one place that names them. Everything else (the planner's work ops, the issuer and
// the runtimes it opens, the timeline, every picture's legend, letters, colours and engine rows, the Result's op
// kinds and sections, messages) reads it. A new kind is a folder beside these (kinds/api/ says what it holds) and a
// row in STAGE_KINDS.

// What the core reads of a kind's contract (./api/): the types its hooks are called with and give back.
export { NOT_LAUNCHED, PENDING } from './api/index.js';
export type { Agreement, CheckRecord, ChunkWork, ComputeStep, CuptiRecord, DescribeContext, HostBuffers, IssueSite, KindFlagValues, KindRep, KindRuntime } from './api/index.js';
export type { Launch, ModelParts, ModelResource, OpenContext, RepHooks, RepWatch, ReportContext, RuntimePrimitives, RuntimeStart, SchedulePart, StageKind } from './api/index.js';
export type { KindRepEnd, SectionContext, TermContext, TermMeasured, TermWords, Thunk } from './api/index.js';

/** The ops that do the workload's work (and show on a timeline), as opposed to ordering and timing ops. */
export type WorkOp = (typeof STAGE_KINDS)[number] extends infer K ? (K extends KindDescription<string, infer O> ? O : never) : never;

/** Every stage kind, in the order pictures list them: load, compute, communication, store, host work, peer copies. */
export const STAGE_KINDS = [h2d, kernel, gemm, matmul, collective, d2h, host, peer] as const;

/** A stage kind's id: the kind the Result's timeline gives an op. */
export type Stage = (typeof STAGE_KINDS)[number]['id'];

export const STAGES: readonly Stage[] = STAGE_KINDS.map((s) => s.id);

/** The ids as a non-empty tuple, for a schema's enum. */
export const STAGE_IDS = STAGE_KINDS.map((s) => s.id) as unknown as readonly [Stage, ...Stage[]];

const WORK_OP_KINDS: ReadonlySet<string> = new Set(STAGE_KINDS.map((s) => s.opKind));

export const isWorkOp = <O extends { readonly kind: string }>(op: O): op is Extract<O, WorkOp> => WORK_OP_KINDS.has(op.kind);

// A stage kind with its op type erased, so the table can be searched by a work op of any kind.
type AnyStage = StageKind<Stage, WorkOp, RuntimePrimitives, Record<never, never>>;
const table = STAGE_KINDS as unknown as readonly AnyStage[];

/** The stage kind of a work op. */
export function stageOf(op: WorkOp): AnyStage {
  const found = table.find((s) => s.opKind === op.kind && s.owns(op));
  if (!found) throw new Error(`no stage kind issues a ${op.kind} op`);
  return found;
}

/** The stage kind of a timeline kind. */
export function stage(id: Stage): AnyStage {
  const found = table.find((s) => s.id === id);
  if (!found) throw new Error(`unknown stage kind ${id}`);
  return found;
}

export const describeWorkOp = (op: WorkOp, context: DescribeContext): string => stageOf(op).describe(op, context);
export const workOpWhat = (op: WorkOp, context: DescribeContext): string => stageOf(op).what(op, context);

/** The runtimes a plan's kinds issue through, by kind id: opened once per run by `openRuntimes`. */
export type KindRuntimes = ReadonlyMap<Stage, KindRuntime>;

/** The runtime modules of the kinds with ops among `ops` (every schedule's), in the table's order, each with its ops. */
export type RuntimeModules = readonly { readonly id: Stage; readonly module: KindRuntimeModule; readonly ops: readonly WorkOp[] }[];

/**
 * Imports the runtime of each kind that issues through a library and has ops among `ops`, and loads its library:
 * called before any device is opened, so that a missing library is named before anything else.
 */
export async function loadRuntimes(ops: readonly { readonly kind: string }[]): Promise<RuntimeModules> {
  const modules: { id: Stage; module: KindRuntimeModule; ops: WorkOp[] }[] = [];
  for (const kind of table) {
    if (!kind.runtime) continue;
    const own = ops.filter((op): op is WorkOp => isWorkOp(op) && stageOf(op) === kind);
    if (!own.length) continue;
    const module = (await kind.runtime()) as KindRuntimeModule;
    module.load?.();
    modules.push({ id: kind.id, module, ops: own });
  }
  return modules;
}

/** Opens each loaded runtime for this run, in the table's order, told which of the plan's schedules hold its ops. */
export async function openRuntimes(
  modules: RuntimeModules,
  context: Omit<OpenContext, 'ops' | 'schedules'> & { readonly schedules: readonly ScheduleWithBody[] },
): Promise<KindRuntimes> {
  const runtimes = new Map<Stage, KindRuntime>();
  for (const { id, module, ops } of modules) runtimes.set(id, await module.open({ ...context, schedules: schedulesHolding(id, context.schedules), ops }));
  return runtimes;
}

type ScheduleWithBody = OpenContext['schedules'][number] & { readonly body: readonly { readonly kind: string }[] };

/** The schedules whose bodies hold ops of kind `id`, as its runtime is told of them: how each is issued, and its description. */
export function schedulesHolding(id: string, schedules: readonly ScheduleWithBody[]): OpenContext['schedules'] {
  return schedules.filter((s) => s.body.some((op) => isWorkOp(op) && stageOf(op).id === id)).map((s) => ({ description: s.description, issue: s.issue }));
}

/** What the runtimes give the Result: their sections (the api's `result`) and notes, in the table's order. */
export function kindRecords(runtimes: KindRuntimes): { sections: Partial<KindSections>; notes: string[] } {
  const records = [...runtimes.values()].flatMap((r) => (r.record ? [r.record] : []));
  return { sections: Object.assign({}, ...records.map((r) => r.sections)), notes: records.flatMap((r) => r.notes) };
}

/** Binds a work op: through the runtime's own calls, or through its kind's runtime. */
export function issueWorkOp(op: WorkOp, primitives: RuntimePrimitives, runtimes: KindRuntimes, site: IssueSite): IssuedOp {
  const kind = stageOf(op);
  if (kind.issue) return kind.issue(op, primitives);
  const runtime = runtimes.get(kind.id);
  if (!runtime) throw new Error(`${kind.id} op ${workNames([op]).join(', ')} has no runtime opened for it`);
  return runtime.issue(op, site);
}

export const timelineFields = (op: WorkOp, kernelBytes: (op: { kernel: string; count: number }) => number): TimelineFields => stageOf(op).timeline(op, kernelBytes);

/**
 * For each stage whose ops queue for an engine, the stages sharing that engine, given how many copy engines the
 * device has (one serves both directions). Built once per call: callers index by the arrays it holds.
 */
export function engineSharing(copyEngines: number): ReadonlyMap<Stage, readonly Stage[]> {
  const hostCopies = table.filter((s) => s.look.engine.hostCopy).map((s) => s.id);
  return new Map(table.filter((s) => s.look.engine.exclusive).map((s) => [s.id, s.look.engine.hostCopy && copyEngines < 2 ? hostCopies : [s.id]]));
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
    const row = rows.get(key) ?? { row: s.look.engine.row, name: shared ? 'copy engine' : s.look.engine.name, stages: [] };
    row.row = Math.min(row.row, s.look.engine.row);
    row.stages.push(s.id);
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.row - b.row);
}

type SectionOf<K> = K extends { readonly result?: infer S } ? (ZodRawShape extends NonNullable<S> ? Record<never, never> : NonNullable<S>) : Record<never, never>;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The fields every kind adds to a Result, as one zod shape for the Result's schema (result/schema.ts). */
export const RESULT_SECTIONS = Object.assign({}, ...table.map((s) => s.result ?? {})) as Intersection<SectionOf<(typeof STAGE_KINDS)[number]>>;

/** The fields kinds add to a mode from their records of its reps (the api's `reps`); the core reads none of them. */
export const MODE_SECTIONS: Record<never, never> = Object.assign({}, ...table.map((s) => s.reps?.fields ?? {}));

/** The fields each kind adds to a mode from its records of the mode's timed reps, in the table's order. */
export function kindRepFields(reps: readonly KindRepEnd[]): Readonly<Record<string, unknown>> {
  return Object.assign(
    {},
    ...table.map((kind) => {
      const records = reps.filter((r) => r.kind === kind.id).map((r) => r.record);
      return kind.reps && records.length ? kind.reps.summary(records) : {};
    }),
  );
}

/** The command-line flags the kinds add to `run` and `sweep`, in the table's order. */
export const KIND_FLAGS: readonly KindFlag[] = table.flatMap((s) => s.flags ?? []);

/** The values a command's parsed flags give the kinds' own flags, by key (commander's camel-case names). */
export function kindFlagValues(flags: object): KindFlagValues {
  const given = flags as Readonly<Record<string, unknown>>;
  return Object.fromEntries(KIND_FLAGS.flatMap((flag) => (typeof given[flag.key] === 'string' ? [[flag.key, given[flag.key] as string]] : [])));
}

/** The environment variables the kinds' runtimes read, in the table's order. */
export const KIND_ENVIRONMENT: ReadonlyArray<readonly [string, string]> = table.flatMap((s) => s.environment ?? []);

/** The values of the fields the kinds add to a Result. */
export type KindSections = z.infer<z.ZodObject<typeof RESULT_SECTIONS>>;

/** The compute kinds with an entry of their own in the config's `kernels:` list (every one but the kernel). */
export const STEP_CONFIGS: readonly (StepConfig<unknown> & { readonly stage: Stage })[] = table.flatMap((s) => (s.config ? [{ ...s.config, stage: s.id }] : []));

const SECTIONS: readonly ConfigSection[] = table.flatMap((s) => (s.section ? [s.section] : []));

/** The kinds' own sections of the config, as one zod shape for the config's schema (config/schema.ts). */
export const CONFIG_SECTIONS: Record<never, never> = Object.fromEntries(SECTIONS.map((s) => [s.key, s.schema]));

/** What the kinds read from their own sections of the config (the host stage's), each under its key. */
export type ConfigSections = { readonly host: ConfigHost | null };

/** Each kind's own section of the parsed config, read by its rules (the api's `section`). */
export function readConfigSections(parsed: object, context: Omit<SectionContext, 'locate'> & { locate(path: readonly (string | number)[]): string }): ConfigSections {
  const values = parsed as Readonly<Record<string, unknown>>;
  const read = SECTIONS.map((s) => [s.key, s.read(values[s.key], { ...context, locate: (field) => context.locate([s.key, ...field]) })]);
  return Object.fromEntries(read) as ConfigSections;
}

/**
 * A chunk's ops of one phase: loads and stores each stage kind of that phase in the table's order; the compute
 * steps in the config's order, each planned by its own kind, so kernels and library calls interleave as listed.
 */
export function phaseOps(phase: 'load' | 'compute' | 'store', work: ChunkWork): WorkOp[] {
  if (phase !== 'compute') return table.flatMap((s) => (s.phase === phase && s.plan ? s.plan(work) : []));
  return work.compute.flatMap((step) => {
    const kind = table.find((s) => s.id === step.stage);
    if (!kind?.planStep) throw new Error(`no compute stage kind plans a ${step.stage} step (${step.label})`);
    return kind.planStep(step, work);
  });
}

/** The bytes a body's work ops move, by the schedule's byte count each adds to. */
export function opBytes(ops: readonly { readonly kind: string }[]): { h2d: number; d2h: number; peer: number; collective: number } {
  const bytes = { h2d: 0, d2h: 0, peer: 0, collective: 0 };
  for (const op of ops) {
    if (!isWorkOp(op)) continue;
    const moved = stageOf(op).moves(op);
    if (moved) bytes[moved.count] += moved.bytes;
  }
  return bytes;
}

/** The kinds whose ops run on the SMs as the overlap model counts them (kernels, GEMMs): computation. */
export const SM_STAGES: readonly Stage[] = table.filter((s) => s.model?.term === 'kernels').map((s) => s.id);

/** The kinds whose ops are communication between ranks, whose time is set against computation. */
export const COMMUNICATION_STAGES: readonly Stage[] = table.filter((s) => s.communication).map((s) => s.id);

/** How each kind's ops read as GPU work in src/traces/events.ts: as CUPTI records them, a copy's direction its term's. */
export const EVENT_SHAPES: ReadonlyMap<Stage, { readonly kind: 'kernel' | 'memcpy'; readonly direction: 'h2d' | 'd2h' | null; readonly communication: boolean }> = new Map(
  table.flatMap((s) =>
    s.cupti ? [[s.id, { kind: s.cupti.kind, direction: s.model?.term === 'H2D' ? 'h2d' : s.model?.term === 'D2H' ? 'd2h' : null, communication: !!s.communication }] as const] : [],
  ),
);

/** The overlap model's resources, each once, in the table's order (the pipeline's: loads, compute, stores). */
export const MODEL_RESOURCES: readonly ModelResource[] = [...new Set(table.flatMap((s) => (s.model ? [s.model] : [])))];

/** The GPU work a body's ops run, by label, each once: a failure's "kernels in flight". */
export const workNames = (ops: readonly ({ readonly kind: string } | undefined)[]): string[] => [
  ...new Set(ops.flatMap((op) => (op && isWorkOp(op) ? stageOf(op).names(op) : []))),
];

/**
 * Whether an output buffer may take the config's tolerance: some op of the schedule that may write it is of a kind
 * whose results may vary by layout. Otherwise it verifies byte for byte.
 */
export function takesTolerance(buffer: string, ops: readonly { readonly kind: string }[]): boolean {
  return ops.some((op) => {
    if (!isWorkOp(op)) return false;
    const kind = stageOf(op);
    if (kind.verify !== 'tolerance') return false;
    const writes = kind.writes(op);
    return writes === null || writes.includes(buffer);
  });
}

/** The printed plan's count of each noun the table's kinds are counted as, in the table's order. */
export function nounCounts(ops: readonly { readonly kind: string }[]): { one: string; many: string; always: boolean; count: number }[] {
  const counts = new Map<string, { one: string; many: string; always: boolean; count: number }>();
  for (const s of table) if (s.look.noun && !counts.has(s.look.noun.one)) counts.set(s.look.noun.one, { ...s.look.noun, count: 0 });
  for (const op of ops) {
    const noun = isWorkOp(op) ? stageOf(op).look.noun : null;
    const entry = noun && counts.get(noun.one);
    if (entry) entry.count += 1;
  }
  return [...counts.values()];
}

// The kinds' plan passes, output checks and report sections (the api's `passes`, `check`, `report`), each given the
// facts of the list it reads. A kind's hooks see the model's ops of any kind; what they give back holds only ops of
// the kinds listed here (theirs, or ones they were given), so the list reads it back as its own `WorkOp`s.

/** A plan's op: a listed kind's work op, or one that orders and times them. */
type Op = PlanOp<WorkOp>;

const BODY_PASS_FACTS: BodyPassFacts = { computeKinds: new Set(table.filter((s) => s.phase === 'compute').map((s) => s.id)) };

const holds = (kind: AnyStage, ops: readonly { readonly kind: string }[]) => ops.some((op) => isWorkOp(op) && stageOf(op) === kind);

/** A one-device schedule's body after the body pass of each kind it holds ops of, in the table's order. */
export function bodyPasses(body: readonly Op[], streams: readonly StreamSpec[], device: number): PassedBody<WorkOp> {
  let passed: PassedBody<WorkOp> = { body, streams, events: [] };
  for (const kind of table) {
    if (!kind.passes?.body || !holds(kind, passed.body)) continue;
    const next = kind.passes.body({ body: passed.body, streams: passed.streams, device }, BODY_PASS_FACTS);
    passed = { body: next.body as readonly Op[], streams: next.streams, events: [...passed.events, ...next.events] };
  }
  return passed;
}

/** The kinds whose ops run kernels (CUPTI records them as kernels): a mode of them alone keeps the SMs at work. */
export const KERNEL_STAGES: readonly Stage[] = table.filter((kind) => kind.cupti?.kind === 'kernel').map((kind) => kind.id);

/** The kinds with a whole-plan pass: a config with a step of one runs on several devices as that pass lays them out. */
export const SPANNING_STAGES: ReadonlySet<string> = new Set(table.filter((kind) => kind.passes?.plan).map((kind) => kind.id));

/**
 * The whole-plan pass that lays a plan out over several devices: that of the first kind in the table with one
 * whose ops the plan holds. Null where none does: the devices then split the input.
 */
export function spanningPass(
  plan: Pick<ModelPlan<WorkOp>, 'schedules'>,
): (<P extends ModelPlan<WorkOp>>(plan: P, devices: readonly number[], context: PlanPassContext) => P) | null {
  const ops = plan.schedules.flatMap((s) => s.body);
  const pass = table.find((kind) => kind.passes?.plan && holds(kind, ops))?.passes?.plan;
  return pass ? <P extends ModelPlan<WorkOp>>(given: P, devices: readonly number[], context: PlanPassContext) => pass(given, devices, context) as P : null;
}

/** A step timed alone by its kind's own pass (a collective at each bucket count); null where its kind has none. */
export function aloneSchedules(step: ComputeStep, context: AloneContext): ModelSchedule<WorkOp>[] | null {
  return (table.find((kind) => kind.id === step.stage)?.passes?.alone?.(step, context) as ModelSchedule<WorkOp>[] | undefined) ?? null;
}

/** Each kind's report section with lines for this Result, in the table's order. */
export function kindReports(result: ResultView, context: ReportContext): { readonly id: string; readonly title: string; readonly lines: string[] }[] {
  return table.flatMap((kind) => {
    const lines = kind.report?.lines(result, context) ?? [];
    return kind.report && lines.length ? [{ id: kind.report.id, title: kind.report.title, lines }] : [];
  });
}

/** What the list knows of an op's kind, for a kind's output check. */
const CHECK_FACTS: CheckFacts = {
  compute: (op) => isWorkOp(op) && stageOf(op).phase === 'compute',
  writes: (op) => (isWorkOp(op) ? stageOf(op).writes(op) : []),
};

/** The output check of the first kind in the table with one whose ops `ops` holds, with the facts it reads; null: none. */
export function outputCheck(ops: readonly Op[]): { readonly check: OutputCheck; readonly facts: CheckFacts } | null {
  const kind = table.find((k) => k.check && holds(k, ops));
  return kind?.check ? { check: kind.check, facts: CHECK_FACTS } : null;
}

/** The reference rep of serial's output check, where a kind of its ops checks them against one. */
export const referenceOf = (serial: ModelSchedule<WorkOp>): ModelSchedule<WorkOp> | undefined =>
  outputCheck(serial.body)?.check.reference(serial) as ModelSchedule<WorkOp> | undefined;

/** Whether some kind of the body's ops makes its outputs depend on the layout (the api's `layoutDependent`). */
export const layoutDependent = (body: readonly Op[]): boolean => table.some((k) => k.check?.layoutDependent && holds(k, body) && k.check.layoutDependent(body));

/** The fields the kinds of a schedule's ops add to its mode in the Result (the api's `modeFields`), in the table's order. */
export function kindModeFields(schedule: Pick<ModelSchedule<WorkOp>, 'body' | 'device'>, deviceOf: (stream: string) => number): Partial<ModeResult> {
  return Object.assign({}, ...table.map((kind) => (kind.modeFields && holds(kind, schedule.body) ? kind.modeFields(schedule, deviceOf) : {})));
}

/** The terms kinds add beside the GPU's in the overlap bound (the api's `term`), in the table's order. */
export const KIND_TERMS: readonly KindTerm[] = table.flatMap((s) => (s.term ? [s.term] : []));

/** What the first kind with a term measured of `mode` itself (a host stage's CPU stage), for the model's words. */
export const kindMeasured = (mode: ModeResult): TermMeasured | null => KIND_TERMS.reduce<TermMeasured | null>((found, t) => found ?? t.measured?.(mode) ?? null, null);

/** The words of the first kind with a term whose ops `mode` runs (a collective's buckets); null: chunks × streams. */
export const termWords = (mode: ModeResult): TermWords | null => KIND_TERMS.find((t) => t.words?.holds(mode))?.words ?? null;

/**
 * Starts what the runtime of each kind with ops among `ops` (every schedule's) starts before any device is opened
 * (the api's `start`), in the table's order, by kind id. Where one fails, those started before it are stopped first.
 */
export async function startRuntimes(ops: readonly { readonly kind: string }[], context: StartContext): Promise<ReadonlyMap<string, RuntimeStart>> {
  const started = new Map<string, RuntimeStart>();
  try {
    for (const kind of table) {
      if (!kind.runtime || !holds(kind, ops)) continue;
      const module = (await kind.runtime()) as KindRuntimeModule;
      if (module.start) started.set(kind.id, await module.start(context));
    }
  } catch (error) {
    await stopRuntimes(started);
    throw error;
  }
  return started;
}

/** What each kind's runtime would refuse in the plan at its start, for a dry run, which starts none. */
export function preflight(plan: ModelPlan<WorkOp>): void {
  for (const kind of table) kind.preflight?.(plan);
}

/** Stops what `startRuntimes` started, the last first; each waits for the one after it. Stopping twice is harmless. */
export async function stopRuntimes(started: ReadonlyMap<string, RuntimeStart>): Promise<void> {
  for (const start of [...started.values()].reverse()) await start.stop();
}

/** The kinds' lines about an overlapped mode whose layout they changed (the api's `modeLine`), in the table's order. */
export function kindModeLines(mode: ModeResult, result: ResultView, context: ModeLineContext): string[] {
  return table.flatMap((kind) => {
    const line = kind.modeLine?.(mode, result, context);
    return line ? [line] : [];
  });
}
