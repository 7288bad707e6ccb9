import { hostname } from 'node:os';
import { cliIo } from './io.js';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { runIdentity } from '../api/identity.js';
import { checkOneConnections } from '../api/run.js';
import { prepareSetting, settingCombinations, type SweepAxes, sweepConfig } from '../api/sweep.js';
import { MAX_PLAN_CHUNKS, MAX_SWEEP_CHUNKS } from '../chunking.js';
import { loadConfigFile } from '../config/load.js';
import { MAX_SWEEP_VALUES } from '../config/schema.js';
import { settingValue, withSettings } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { kindFlagValues } from '../kinds/index.js';
import { chunkCandidates } from '../measure/floor.js';
import { builtinConfigsDir } from '../paths.js';
import { renderSweepPlan } from '../report/sweep-plan.js';
import { fitLines, outputColumns } from '../report/width.js';
import type { Plan } from '../plan/types.js';
import { withInterrupts } from './interrupt.js';
import { rankDevice } from './launcher.js';
import { checkOutputs, OUTPUT_FLAGS, writeRunOutputs } from './outputs.js';
import type { SweepFlags } from './sweep-flags.js';
import { type ConnectionsPart, connectionsParts, sweepInProcesses } from './sweep-processes.js';
import { nextTurn } from './turns.js';

const DEFAULT_STREAMS = [1, 2, 4, 8];
const DEFAULT_BUDGET_S = 40;

export async function sweepCommand(configArg: string | undefined, flags: SweepFlags): Promise<0 | 1> {
  const path = configArg ?? join(builtinConfigsDir(), 'balanced.yaml');
  // Under a launcher each rank sweeps on the GPU of its local rank, as `run` does; a config over several devices
  // drives them all from one process.
  const identity = runIdentity(process.env, hostname());
  const chosen = rankDevice(path, { device: flags.device, devices: flags.devices }, identity, process.env);
  const loaded = loadConfigFile(path, { device: chosen?.device ?? flags.device, devices: flags.devices });
  const fromConfig = loaded.config.sweep;
  const maxChunks = Math.min(64, Math.ceil(loaded.config.elements / loaded.config.pipeline.align));
  const axes: SweepAxes = {
    streams: flags.streams ?? fromConfig?.streams ?? DEFAULT_STREAMS,
    chunks: flags.chunks ?? fromConfig?.chunks ?? chunkCandidates(maxChunks),
    orders: flags.order ?? fromConfig?.order ?? ['depth-first'],
    sets: flags.set.length
      ? flags.set.map(parseSetFlag)
      : Object.entries(fromConfig?.set ?? {}).map(([path, values]) => ({ path, values })),
  };
  checkSweepSize(axes);
  // Each setting's config, validated once for the checks, the dry run's plans and the start line's.
  const combos = settingCombinations(axes.sets);
  const configs = combos.map((combo) => withSettings(loaded, combo));
  // Several values of pipeline.connections are raced in a process each (./sweep-processes.ts), except under a
  // launcher, whose ranks meet in one process each.
  const parts = connectionsParts(configs);
  if (parts && identity.rank !== null) checkOneConnections(configs, `the settings of rank ${identity.rank}'s sweep`);
  const budgetS = flags.maxTime ?? fromConfig?.maxTime ?? DEFAULT_BUDGET_S;
  if (flags.dryRun) {
    const ignored = OUTPUT_FLAGS.filter((flag) => flags[flag as keyof SweepFlags] !== undefined);
    if (ignored.length) {
      throw new UsageError(
        `${ignored.map((f) => `--${f}`).join(', ')} cannot go with --dry-run: a dry run measures nothing, so there is no Result to write.`,
        {
          hint: 'Drop --dry-run to sweep, or the output flags to preview the layouts.',
        },
      );
    }
    // Each setting checked and planned as the sweep would before measuring, without opening a device, with a turn of
    // the event loop after each, so that a signal ends the dry run at once.
    const settings = [];
    for (const [i, config] of configs.entries()) {
      settings.push({
        settings: combos[i] ?? [],
        plan: prepareSetting(config, axes, { gate: flags.gate ?? false }).plan,
      });
      await nextTurn();
    }
    const columns = outputColumns(cliIo().stdout);
    const processes = parts ? [fitLines(partsLine(parts), columns)] : [];
    cliIo().stdout.write(
      `${[renderSweepPlan({ settings, budgetS, exhaustive: flags.exhaustive ?? false }, columns), ...processes].join('\n')}\n`,
    );
    return 0;
  }
  // A clash between outputs fails before the sweep measures for minutes, not after.
  checkOutputs(flags);
  const budgetMs = budgetS * 1000;
  // Planned as the sweep will plan them, so that a bad setting fails before this line promises a sweep, and the line
  // can count the layouts.
  const plans = configs.map((config) => prepareSetting(config, axes, { gate: flags.gate ?? false }).plan);
  cliIo().stderr.write(
    fitLines(sweepStartLine(plans.length, layoutCount(plans[0]), budgetS), outputColumns(cliIo().stderr)) + '\n',
  );
  if (parts) {
    cliIo().stderr.write(`${fitLines(partsLine(parts), outputColumns(cliIo().stderr))}\n`);
    const results = await withInterrupts((signal) => sweepInProcesses(path, flags, axes, parts, combos, signal));
    await writeRunOutputs(results, flags, { table: true, gantt: false, sweep: true });
    return results.some((r) => r.verification.status === 'failed') ? 1 : 0;
  }
  const bar = cliIo().stderr.isTTY
    ? new cliProgress.SingleBar(
        {
          format:
            'sweep {setting} [{bar}] {value}/{total} layouts settled | {duration_formatted} elapsed, at most {left} s left (--max-time)',
          stream: process.stderr,
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let started = -1;
  let printedMs = -Infinity;
  const results = await withInterrupts((signal) =>
    sweepConfig(loaded, axes, {
      verify: flags.verify,
      gate: flags.gate ?? false,
      wait: flags.wait,
      kindFlags: kindFlagValues(flags),
      deviceOrigin: chosen?.origin,
      budgetMs,
      exhaustive: flags.exhaustive ?? false,
      signal,
      onProgress: (p) => {
        const left = raceLeftS(p.elapsedMs, budgetMs).toFixed(0);
        if (!bar) {
          // A log gets a line a setting's start and then one every few seconds, not one a round.
          if (started !== p.setting || p.elapsedMs - printedMs >= PROGRESS_EVERY_MS || p.done === p.total) {
            cliIo().stderr.write(progressLine(p, budgetMs) + '\n');
            printedMs = p.elapsedMs;
            started = p.setting;
          }
          return;
        }
        if (started !== p.setting) {
          if (started >= 0) bar.stop();
          bar.start(p.total, p.done, { setting: `${p.setting + 1}/${p.settings}`, left });
          started = p.setting;
        }
        bar.update(p.done, { left });
      },
    }),
  );
  bar?.stop();
  if (chosen)
    for (const [i, result] of results.entries()) results[i] = { ...result, notes: [...result.notes, chosen.note] };
  // The documents a sweep can be written as: the Results, the heat map as Markdown, the chart, the HTML report.
  await writeRunOutputs(results, flags, { table: true, gantt: false, sweep: true });
  return results.some((r) => r.verification.status === 'failed') ? 1 : 0;
}

/** How a sweep over several values of pipeline.connections runs them: a cuda-pipe process a value. */
function partsLine(parts: readonly ConnectionsPart[]): string {
  const each = parts.map((p) => `${p.connections} (${p.settings.length} setting${p.settings.length === 1 ? '' : 's'})`);
  return `pipeline.connections takes ${parts.length} values, and CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once a process: each runs in a cuda-pipe process of its own, one after another: ${each.join(', ')}.`;
}

/** Without a terminal for the bar, a progress line at most this often. */
const PROGRESS_EVERY_MS = 5000;

/** Seconds the race of a setting can still take: the budget bounds it, whatever the layouts do. */
export const raceLeftS = (elapsedMs: number, budgetMs: number): number => Math.max(0, budgetMs - elapsedMs) / 1000;

/** The layouts a plan races: its overlapped schedules on its first device. */
const layoutCount = (plan: Plan | undefined): number =>
  plan?.schedules.filter((s) => s.role.kind === 'overlapped' && s.device === plan.devices[0]).length ?? 0;

/** What the sweep will spend its time on, before it starts: the estimate a user waits against. */
export function sweepStartLine(settings: number, layouts: number, budgetS: number): string {
  const each = settings === 1 ? 'the setting' : `each of ${settings} settings`;
  return (
    `sweep: ${each} measures serial and the model's parts, races its ${layouts} layouts for at most ${budgetS} s (--max-time), ` +
    `then traces the best; the races take at most ${settings * budgetS} s`
  );
}

/** One progress line for a log: the layouts settled, the time taken and the most the race can still take. */
export function progressLine(
  p: { setting: number; settings: number; done: number; total: number; elapsedMs: number },
  budgetMs: number,
): string {
  const setting = p.settings > 1 ? ` setting ${p.setting + 1}/${p.settings}` : '';
  return `sweep${setting}: ${p.done}/${p.total} layouts settled after ${(p.elapsedMs / 1000).toFixed(1)} s; at most ${raceLeftS(p.elapsedMs, budgetMs).toFixed(0)} s left (--max-time)`;
}

/** Settings a sweep may measure (the product of its --set lists): each one is a sweep of every layout. */
export const MAX_SWEEP_SETTINGS = 256;

/**
 * A sweep's axes within bounds before anything is checked or planned: every setting is checked and planned up front,
 * so 8,000 values of one --set took the heap, and each axis value multiplies the layouts.
 */
export function checkSweepSize(axes: SweepAxes): void {
  const lists: Array<[string, number]> = [
    ['--streams', axes.streams.length],
    ['--chunks', axes.chunks.length],
    ...axes.sets.map((set): [string, number] => [`--set ${set.path}`, set.values.length]),
  ];
  const long = lists.find(([, length]) => length > MAX_SWEEP_VALUES);
  if (long)
    throw new UsageError(`${long[0]} lists ${long[1]} values; a sweep axis lists at most ${MAX_SWEEP_VALUES}.`, {
      hint: 'Sweep a coarser grid first, then a narrower one around the best value.',
    });
  const settings = axes.sets.reduce((product, set) => product * set.values.length, 1);
  if (settings > MAX_SWEEP_SETTINGS) {
    throw new UsageError(
      `the --set lists make ${settings} settings (${axes.sets.map((set) => set.values.length).join(' × ')}); a sweep measures at most ${MAX_SWEEP_SETTINGS}.`,
      {
        hint: 'Sweep fewer values, or one path at a time.',
      },
    );
  }
  checkSweepChunks(axes, settings);
}

/**
 * The chunks a sweep plans, bounded before anything is planned: each setting's plan holds every stream count's
 * layouts of every chunk count, and every setting is planned before the first is measured.
 */
function checkSweepChunks(axes: SweepAxes, settings: number): void {
  const hint =
    "Sweep fewer or smaller chunk counts: past a few thousand, issuing a chunk's ops costs more than overlapping them saves.";
  const huge = axes.chunks.find((chunks) => chunks > MAX_PLAN_CHUNKS);
  if (huge !== undefined)
    throw new UsageError(`--chunks ${huge}: ${huge} chunks is more than the ${MAX_PLAN_CHUNKS} a plan may hold.`, {
      hint,
    });
  const perPlan = axes.chunks.reduce((sum, chunks) => sum + chunks, 0) * axes.streams.length;
  if (perPlan > MAX_PLAN_CHUNKS) {
    throw new UsageError(
      `--chunks ${axes.chunks.join(',')} over ${axes.streams.length} stream counts make ${perPlan} chunks in each setting's plan, more than the ${MAX_PLAN_CHUNKS} a plan may hold.`,
      { hint },
    );
  }
  if (perPlan * settings > MAX_SWEEP_CHUNKS) {
    throw new UsageError(
      `${settings} settings of ${perPlan} chunks each make ${perPlan * settings} chunks to plan, more than the ${MAX_SWEEP_CHUNKS} a sweep may plan.`,
      { hint },
    );
  }
}

/** `--set kernels[0].args[3].int32=530,1060` → the path and its values. */
export function parseSetFlag(text: string): { path: string; values: Array<string | number> } {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq === text.length - 1) {
    throw new UsageError(
      `--set ${text}: expected PATH=VALUE[,VALUE...], such as kernels[0].args[3].int32=530,1060 or hostMemory=pinned,pageable.`,
    );
  }
  return {
    path: text.slice(0, eq),
    values: text
      .slice(eq + 1)
      .split(',')
      .map(settingValue),
  };
}
