import type {
  IssuedOp,
  IssueSite,
  KindFlag,
  KindFlagValues,
  KindRuntime,
  KindRuntimeModule,
  OpenContext,
  RuntimePrimitives,
  RuntimeStart,
  StartContext,
} from './api/index.js';
import type { Plan as ModelPlan } from '../model/schedule.js';
import { holds, isWorkOp, type Stage, stageOf, table, type WorkOp } from './list.js';
import { workNames } from './ops.js';
import type { KindSections } from './sections.js';

// The runtimes of the kinds that issue through a library or start work of their own: loaded, started, opened and
// stopped in the list's order for the kinds a plan holds ops of, and the flags and environment they read.

/** The runtimes a plan's kinds issue through, by kind id: opened once per run by `openRuntimes`. */
export type KindRuntimes = ReadonlyMap<Stage, KindRuntime>;

/**
 * The runtime modules of the kinds with ops among `ops` (every schedule's), in the table's order, each with its ops.
 */
export type RuntimeModules = readonly {
  readonly id: Stage;
  readonly module: KindRuntimeModule;
  readonly ops: readonly WorkOp[];
}[];

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
  for (const { id, module, ops } of modules)
    runtimes.set(id, await module.open({ ...context, schedules: schedulesHolding(id, context.schedules), ops }));
  return runtimes;
}

type ScheduleWithBody = OpenContext['schedules'][number] & { readonly body: readonly { readonly kind: string }[] };

/**
 * The schedules whose bodies hold ops of kind `id`, as its runtime is told of them: how each is issued, and its
 * description.
 */
export function schedulesHolding(id: string, schedules: readonly ScheduleWithBody[]): OpenContext['schedules'] {
  return schedules
    .filter((s) => s.body.some((op) => isWorkOp(op) && stageOf(op).id === id))
    .map((s) => ({ description: s.description, issue: s.issue }));
}

/** What the runtimes give the Result: their sections (the api's `result`) and notes, in the table's order. */
export function kindRecords(runtimes: KindRuntimes): { sections: Partial<KindSections>; notes: string[] } {
  const records = [...runtimes.values()].flatMap((r) => (r.record ? [r.record] : []));
  return { sections: Object.assign({}, ...records.map((r) => r.sections)), notes: records.flatMap((r) => r.notes) };
}

/** Binds a work op: through the runtime's own calls, or through its kind's runtime. */
export function issueWorkOp(
  op: WorkOp,
  primitives: RuntimePrimitives,
  runtimes: KindRuntimes,
  site: IssueSite,
): IssuedOp {
  const kind = stageOf(op);
  if (kind.issue) return kind.issue(op, primitives);
  const runtime = runtimes.get(kind.id);
  if (!runtime) throw new Error(`${kind.id} op ${workNames([op]).join(', ')} has no runtime opened for it`);
  return runtime.issue(op, site);
}

/**
 * Starts what the runtime of each kind with ops among `ops` (every schedule's) starts before any device is opened
 * (the api's `start`), in the table's order, by kind id. Where one fails, those started before it are stopped first.
 */
export async function startRuntimes(
  ops: readonly { readonly kind: string }[],
  context: StartContext,
): Promise<ReadonlyMap<string, RuntimeStart>> {
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

/** The command-line flags the kinds add to `run` and `sweep`, in the table's order. */
export const KIND_FLAGS: readonly KindFlag[] = table.flatMap((s) => s.flags ?? []);

/** The values a command's parsed flags give the kinds' own flags, by key (commander's camel-case names). */
export function kindFlagValues(flags: object): KindFlagValues {
  const given = flags as Readonly<Record<string, unknown>>;
  return Object.fromEntries(
    KIND_FLAGS.flatMap((flag) => (typeof given[flag.key] === 'string' ? [[flag.key, given[flag.key] as string]] : [])),
  );
}

/** The environment variables the kinds' runtimes read, in the table's order. */
export const KIND_ENVIRONMENT: ReadonlyArray<readonly [string, string]> = table.flatMap((s) => s.environment ?? []);
