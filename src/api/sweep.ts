import type { LoadedConfig } from '../config/types.js';
import type { KindFlagValues } from '../kinds/index.js';
import { type Setting, withSettings } from '../config/settings.js';
import { UsageError } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { resolveKernels, type ResolvedKernel } from '../kernels/resolve.js';
import { measureSchedule, type MeasuredSchedule } from '../measure/repeat.js';
import { buildRunResult, summaryOf } from '../measure/result.js';
import { bestOfSweep, raceLayouts, SWEEP_ROUNDS, type SweepProgress } from '../measure/sweep.js';
import { summarize } from '../measure/stats.js';
import { kernelRangeBytes, timelineReps } from '../measure/timeline.js';
import { buildLayoutsPlan, overDevices } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import type { SweepSection } from '../model/analysis.js';
import type { RunResult } from '../result/schema.js';
import type { IssueOrder } from '../vocabulary.js';
import { applyConnections, checkOneConnections, configDevices } from './run.js';
import { resultBasics, withSession } from './session.js';

export interface SweepAxes {
  readonly streams: readonly number[];
  readonly chunks: readonly number[];
  readonly orders: readonly IssueOrder[];
  /** Other scalars of the config and their values; every combination is a setting measured apart. */
  readonly sets: ReadonlyArray<{ readonly path: string; readonly values: ReadonlyArray<string | number> }>;
}

export interface SweepOptions {
  readonly verify: boolean;
  readonly gate: boolean;
  readonly wait: WaitStrategy;
  /** The values of the kinds' own flags (`KIND_FLAGS`, as the command was given them), handed to their runtimes. */
  readonly kindFlags?: KindFlagValues | undefined;
  /** Host time for each setting's race of layouts. */
  readonly budgetMs: number;
  /** Drop no layout early: every one runs until the noise rule or the budget stops it. */
  readonly exhaustive: boolean;
  readonly onProgress?: (progress: SweepProgress & { readonly setting: number; readonly settings: number }) => void;
  /** Aborted by Ctrl-C or SIGTERM: the sweep stops at the next rep boundary. */
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** Who chose the device (a launcher's local rank), for the words of a device that does not exist. */
  readonly deviceOrigin?: string | undefined;
}

/** Every combination of the non-layout axes' values (one empty combination when there are none). */
export function settingCombinations(sets: SweepAxes['sets']): Setting[][] {
  return sets.reduce<Setting[][]>(
    (combos, axis) => combos.flatMap((combo) => axis.values.map((value) => [...combo, { path: axis.path, value }])),
    [[]],
  );
}

/**
 * Measures every layout of the axes for each setting of the other axes: kernels compiled and buffers allocated once
 * per setting, the serial baseline and the model's parts once, every layout verified, then the layouts raced so
 * that clearly slower ones stop early. One Result per setting, each with its sweep section and a traced rep of
 * its best layout.
 */
export async function sweepConfig(loaded: LoadedConfig, axes: SweepAxes, options: SweepOptions): Promise<RunResult[]> {
  const combos = settingCombinations(axes.sets);
  // Every setting of every axis is checked (its config, its kernels' arguments, its plan) before anything is
  // measured: a bad last value must not cost the minutes the first settings take.
  const configs = combos.map((settings) => withSettings(loaded, settings));
  checkOneConnections(configs, 'the settings of this sweep');
  if (configs[0]) applyConnections(configs[0]);
  const prepared = configs.map((config) => prepareSetting(config, axes, options));
  const results: RunResult[] = [];
  for (const [index, setting] of prepared.entries()) {
    const settings = combos[index] ?? [];
    results.push(
      await sweepSetting(setting, axes, settings, options, (p) =>
        options.onProgress?.({ ...p, setting: index, settings: combos.length }),
      ),
    );
  }
  return results;
}

export interface PreparedSetting {
  readonly loaded: LoadedConfig;
  readonly kernels: ResolvedKernel[];
  readonly plan: Plan;
  /** What the Result says of how the devices were chosen. */
  readonly notes: readonly string[];
}

/**
 * What a setting needs before a device: its config checked for a sweep, its kernels resolved, its plan built. Over
 * several devices a config with a collective stage is data-parallel as `run` plans it (every layout, the serial
 * baseline and the collective alone replicated on each device, each bucket's calls grouped across them), so the
 * race finds the bucket count of the whole step; `count` counts the machine's devices for `devices: all`.
 */
export function prepareSetting(
  loaded: LoadedConfig,
  axes: SweepAxes,
  options: Pick<SweepOptions, 'gate'>,
  count?: () => number,
): PreparedSetting {
  const { config } = loaded;
  const devices = configDevices(loaded, count);
  if (config.deviceMemory !== null) {
    throw new UsageError(
      `${loaded.locate(['deviceMemory'])}: a sweep cannot keep a device-memory budget yet: its ring of device slots is sized for one layout.`,
      {
        hint: 'Sweep without deviceMemory, or run each layout with `cuda-pipe run --chunks N --streams M`.',
      },
    );
  }
  const kernels = resolveKernels(config, loaded.locate);
  const layouts = axes.streams.flatMap((streams) => axes.chunks.map((chunks) => ({ chunks, streams })));
  const plan = buildLayoutsPlan(config, kernels, layouts, axes.orders, { gate: options.gate });
  if (!devices || devices.length <= 1) {
    const notes =
      devices?.length === 1
        ? [`devices: all found one device here, so this is a one-device sweep on device ${devices[0]}.`]
        : [];
    return { loaded, kernels, plan, notes };
  }
  const spanned = overDevices(plan, config, devices);
  if (!spanned) {
    // A split's shares and links are planned for one layout (plan/devices.ts); racing them per layout is not built.
    throw new UsageError(
      `${loaded.locate(['devices'])}: a sweep spans devices ${devices.join(', ')} only data-parallel, for a config with a collective stage (such as configs/ddp.yaml); ` +
        `${config.name} has none, so the devices would split its input, which a sweep does not race.`,
      {
        hint: 'Sweep on one device (leave out devices, or --device N) to find the layout, then `cuda-pipe run --devices ...` with it to see how the split scales.',
      },
    );
  }
  return { loaded, kernels, plan: spanned, notes: [] };
}

async function sweepSetting(
  prepared: PreparedSetting,
  axes: SweepAxes,
  settings: readonly Setting[],
  options: SweepOptions,
  onProgress: (p: SweepProgress) => void,
): Promise<RunResult> {
  const { loaded, kernels, plan } = prepared;
  const started = performance.now();
  const outcome = await withSession(loaded, plan, kernels, options, async ({ runner, context, guard, policy }) => {
    const overlapped = plan.schedules.filter((s) => s.role.kind === 'overlapped');
    const base: MeasuredSchedule[] = [];
    for (const schedule of plan.schedules.filter((s) => s.role.kind !== 'overlapped')) {
      base.push(await measureSchedule(runner, schedule, policy, { smClock: context.smClock, guard }));
    }
    const raced = await raceLayouts(runner, overlapped, policy, {
      ...SWEEP_ROUNDS,
      smClock: context.smClock,
      budgetMs: options.budgetMs,
      exhaustive: options.exhaustive,
      onProgress,
      guard,
    });
    const best = bestOfSweep(raced.map((m) => ({ id: m.schedule.id, samplesMs: m.gpuMs, stats: summarize(m.gpuMs) })));
    runner.restoreInputs();
    const bestSchedule = overlapped.find((s) => s.id === best.mode);
    if (!bestSchedule) throw new Error(`the sweep's best layout ${best.mode} is not in its plan`);
    // Data-parallel, the best layout spans the devices: one rep per device, each from its own start.
    const traced = timelineReps(
      await guard.trace(runner, bestSchedule),
      kernelRangeBytes(plan),
      () => context.device.streamPriority,
    );
    return { measured: [...base.slice(0, 1), ...raced, ...base.slice(1)], best, traced };
  });
  const {
    verification,
    measured: { measured, best, traced },
  } = outcome.value;
  const sweep: SweepSection = {
    axes: [
      { name: 'streams', values: [...axes.streams] },
      { name: 'chunks', values: [...axes.chunks] },
      { name: 'order', values: [...axes.orders] },
      ...axes.sets.map((s) => ({ name: s.path, values: [...s.values] })),
    ],
    settings: Object.fromEntries(settings.map((s) => [s.path, s.value])),
    points: plan.schedules.flatMap((s) =>
      s.role.kind === 'overlapped'
        ? [{ mode: s.id, chunks: s.role.layout.chunks, streams: s.role.layout.streams, order: s.role.layout.order }]
        : [],
    ),
    best,
    budgetMs: options.budgetMs,
    elapsedMs: performance.now() - started,
  };
  const built = buildRunResult({
    ...resultBasics(loaded, plan, outcome, options.gate),
    devices: outcome.devices,
    peers: outcome.peers,
    measured,
    verification,
    traced,
    sweep,
  });
  // As run attaches them: a collective's communicator gives the sweep's best layout its communication section and
  // bucket model.
  const result = {
    ...built,
    ...outcome.kinds.sections,
    notes: [...built.notes, ...prepared.notes, ...outcome.kinds.notes],
  };
  // The headline of a sweep is its best layout, not the first one measured.
  const headline = result.modes.find((m) => m.id === best.mode);
  return headline?.analysis ? { ...result, summary: summaryOf(headline, headline.analysis) } : result;
}
