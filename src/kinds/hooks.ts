import type { ModeResult } from '../model/mode.js';
import type { Plan as ModelPlan, PlanOp, Schedule as ModelSchedule, StreamSpec } from '../model/schedule.js';
import type {
  AloneContext,
  BodyPassFacts,
  CheckFacts,
  ComputeStep,
  KindTerm,
  ModeLineContext,
  OutputCheck,
  PassedBody,
} from './api/index.js';
import type { PlanPassContext, ReportContext, ResultView, TermMeasured, TermWords } from './api/index.js';
import { holds, isWorkOp, stageOf, table, type WorkOp } from './list.js';

// The kinds' hooks into the core's passes: plan passes, output checks, report sections and mode lines, mode fields
// and terms of the overlap bound (the api's `passes`, `check`, `report`, `modeLine`, `modeFields`, `term`), each
// given the facts of the list it reads. A kind's hooks see the model's ops of any kind; what they give back holds
// only ops of the kinds listed (theirs, or ones they were given), so the list reads it back as its own `WorkOp`s.

/** A plan's op: a listed kind's work op, or one that orders and times them. */
type Op = PlanOp<WorkOp>;

const BODY_PASS_FACTS: BodyPassFacts = {
  computeKinds: new Set(table.filter((s) => s.phase === 'compute').map((s) => s.id)),
};

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

/** The kinds with a whole-plan pass: a config with a step of one runs on several devices as that pass lays them out. */
export const SPANNING_STAGES: ReadonlySet<string> = new Set(
  table.filter((kind) => kind.passes?.plan).map((kind) => kind.id),
);

/**
 * The whole-plan pass that lays a plan out over several devices: that of the first kind in the table with one
 * whose ops the plan holds. Null where none does: the devices then split the input.
 */
export function spanningPass(
  plan: Pick<ModelPlan<WorkOp>, 'schedules'>,
): (<P extends ModelPlan<WorkOp>>(plan: P, devices: readonly number[], context: PlanPassContext) => P) | null {
  const ops = plan.schedules.flatMap((s) => s.body);
  const pass = table.find((kind) => kind.passes?.plan && holds(kind, ops))?.passes?.plan;
  return pass
    ? <P extends ModelPlan<WorkOp>>(given: P, devices: readonly number[], context: PlanPassContext) =>
        pass(given, devices, context) as P
    : null;
}

/** A step timed alone by its kind's own pass (a collective at each bucket count); null where its kind has none. */
export function aloneSchedules(step: ComputeStep, context: AloneContext): ModelSchedule<WorkOp>[] | null {
  return (
    (table.find((kind) => kind.id === step.stage)?.passes?.alone?.(step, context) as
      | ModelSchedule<WorkOp>[]
      | undefined) ?? null
  );
}

/** Each kind's report section with lines for this Result, in the table's order. */
export function kindReports(
  result: ResultView,
  context: ReportContext,
): { readonly id: string; readonly title: string; readonly lines: string[] }[] {
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

/**
 * The output check of the first kind in the table with one whose ops `ops` holds, with the facts it reads; null: none.
 */
export function outputCheck(ops: readonly Op[]): { readonly check: OutputCheck; readonly facts: CheckFacts } | null {
  const kind = table.find((k) => k.check && holds(k, ops));
  return kind?.check ? { check: kind.check, facts: CHECK_FACTS } : null;
}

/** The reference rep of serial's output check, where a kind of its ops checks them against one. */
export const referenceOf = (serial: ModelSchedule<WorkOp>): ModelSchedule<WorkOp> | undefined =>
  outputCheck(serial.body)?.check.reference(serial) as ModelSchedule<WorkOp> | undefined;

/** Whether some kind of the body's ops makes its outputs depend on the layout (the api's `layoutDependent`). */
export const layoutDependent = (body: readonly Op[]): boolean =>
  table.some((k) => k.check?.layoutDependent && holds(k, body) && k.check.layoutDependent(body));

/**
 * The fields the kinds of a schedule's ops add to its mode in the Result (the api's `modeFields`), in the table's
 * order.
 */
export function kindModeFields(
  schedule: Pick<ModelSchedule<WorkOp>, 'body' | 'device'>,
  deviceOf: (stream: string) => number,
): Partial<ModeResult> {
  return Object.assign(
    {},
    ...table.map((kind) => (kind.modeFields && holds(kind, schedule.body) ? kind.modeFields(schedule, deviceOf) : {})),
  );
}

/** The terms kinds add beside the GPU's in the overlap bound (the api's `term`), in the table's order. */
export const KIND_TERMS: readonly KindTerm[] = table.flatMap((s) => (s.term ? [s.term] : []));

/** What the first kind with a term measured of `mode` itself (a host stage's CPU stage), for the model's words. */
export const kindMeasured = (mode: ModeResult): TermMeasured | null =>
  KIND_TERMS.reduce<TermMeasured | null>((found, t) => found ?? t.measured?.(mode) ?? null, null);

/** The words of the first kind with a term whose ops `mode` runs (a collective's buckets); null: chunks × streams. */
export const termWords = (mode: ModeResult): TermWords | null =>
  KIND_TERMS.find((t) => t.words?.holds(mode))?.words ?? null;

/** The kinds' lines about an overlapped mode whose layout they changed (the api's `modeLine`), in the table's order. */
export function kindModeLines(mode: ModeResult, result: ResultView, context: ModeLineContext): string[] {
  return table.flatMap((kind) => {
    const line = kind.modeLine?.(mode, result, context);
    return line ? [line] : [];
  });
}
