import { hostname } from 'node:os';
import { cliIo } from './io.js';
import { join } from 'node:path';
import { rankLabel, runIdentity } from '../api/identity.js';
import { checkConfigKernels, type ConfigKernelCheck } from '../api/kernels.js';
import { configDevices, runConfig, planConfig } from '../api/run.js';
import { loadConfigFile } from '../config/load.js';
import type { Overrides } from '../config/types.js';
import { type ExitCode, UsageError } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { builtinConfigsDir } from '../paths.js';
import { renderHostMemoryTable } from '../report/host-memory.js';
import { planPieces } from '../report/plan.js';
import type { Plan } from '../plan/types.js';
import { fitLines, outputColumns, paragraphColumns } from '../report/width.js';
import type { RunResult } from '../result/schema.js';
import type { HostMemoryKind } from '../vocabulary.js';
import { kindFlagValues, preflight } from '../kinds/index.js';
import { withInterrupts } from './interrupt.js';
import { rankDevice } from './launcher.js';
import { checkOutputs, OUTPUT_FLAGS, writeRunOutputs } from './outputs.js';
import { nextTurn, writeInTurns } from './turns.js';

export interface RunFlags extends Omit<Overrides, 'hostMemory'> {
  hostMemory?: HostMemoryKind[];
  dryRun?: boolean;
  ops?: boolean;
  arch?: string;
  verify: boolean;
  tracing: boolean;
  gate?: boolean;
  wait: WaitStrategy;
  json?: string;
  md?: string;
  svg?: string;
  html?: string;
  trace?: string;
  csv?: string;
  bmf?: string;
  gab?: string;
  timeline?: boolean;
  timeout?: number;
}

export async function runCommand(configArg: string | undefined, flags: RunFlags): Promise<ExitCode> {
  const path = configArg ?? join(builtinConfigsDir(), 'balanced.yaml');
  const { hostMemory: kinds, ...overrides } = flags;
  const identity = runIdentity(process.env, hostname());
  const chosen = rankDevice(path, overrides, identity, process.env);
  // One config per host memory kind asked for, each a run of its own; without the flag, the config's own kinds.
  const loads = (kinds ?? [undefined]).map((hostMemory) =>
    loadConfigFile(path, { ...overrides, hostMemory, ...(chosen ? { device: chosen.device } : {}) }),
  );
  const gate = flags.gate ?? false;
  if (flags.dryRun) {
    const ignored = [
      ...OUTPUT_FLAGS.filter((flag) => flags[flag] !== undefined),
      ...(flags.timeline ? ['timeline'] : []),
    ];
    if (ignored.length) {
      throw new UsageError(
        `${ignored.map((f) => `--${f}`).join(', ')} cannot go with --dry-run: a dry run measures nothing, so there is no Result to write or draw.`,
        {
          hint: 'Drop --dry-run to measure, or the output flags to see the plan.',
        },
      );
    }
    // Every plan checked (its modules, its kernels compiled) before the first is written; a turn of the event loop
    // after each slice of the work (planning, compiling off the JS thread, a few thousand lines written) lets a
    // signal end it at once.
    const views: Array<{ plan: Plan; kernels: string }> = [];
    for (const loaded of loads) {
      const { plan, kernels } = planConfig(loaded, { gate, devices: configDevices(loaded) });
      await nextTurn();
      // A run checks its modules as its workers start; a dry run starts none, so it checks them here.
      preflight(plan);
      views.push({ plan, kernels: kernelsLine(await checkConfigKernels(kernels, flags.arch)) });
    }
    // Each piece's lines wrapped as they are written, at the terminal's width or COLUMNS (issue 39: 213 columns at
    // 100); into a pipe without COLUMNS a line per paragraph, for grep, and no width measured for tens of MB of ops.
    const out = cliIo().stdout;
    const columns = paragraphColumns(out);
    const fit = (piece: string) => (Number.isFinite(columns) ? fitLines(piece, columns) : piece);
    const pieces = function* () {
      for (const [i, { plan, kernels }] of views.entries()) {
        if (i) yield '';
        const view = { ops: flags.ops ?? false, kernels, rank: rankLabel(identity) };
        for (const piece of planPieces(plan, view)) yield fit(piece);
      }
    };
    await writeInTurns(out, pieces());
    return 0;
  }
  for (const flag of ['ops', 'arch'] as const) {
    if (flags[flag] !== undefined)
      throw new UsageError(`--${flag} only applies with --dry-run: a run compiles for its device and prints no plan.`);
  }
  if (!flags.tracing) {
    const pictures = [
      ...(flags.timeline ? ['--timeline'] : []),
      ...(flags.svg ? ['--svg'] : []),
      ...(flags.trace ? ['--trace'] : []),
    ];
    if (pictures.length) {
      throw new UsageError(
        `${pictures.join(', ')} ${pictures.length === 1 ? 'draws' : 'draw'} the traced reps, which --no-tracing skips.`,
        {
          hint: 'Drop --no-tracing to record them.',
        },
      );
    }
  }
  checkOutputs(flags);
  const rank = identity.rank === null ? '' : ` on device ${loads[0]?.config.device ?? 0} as ${rankLabel(identity)}`;
  const results = await withInterrupts(async (signal) => {
    const done: RunResult[] = [];
    for (const loaded of loads) {
      const result = await runConfig(loaded, {
        verify: flags.verify,
        gate,
        trace: flags.tracing,
        wait: flags.wait,
        signal,
        timeoutMs: seconds(flags.timeout),
        kindFlags: kindFlagValues(flags),
        deviceOrigin: chosen?.origin,
        // One line on stderr, so that whoever waits for the run (a person, a test sending it a signal) sees it start.
        onMeasuring: () =>
          cliIo().stderr.write(`measuring ${loaded.config.name}${rank} (Ctrl-C stops after the current rep)\n`),
      });
      done.push(chosen ? { ...result, notes: [...result.notes, chosen.note] } : result);
    }
    return done;
  });
  await writeRunOutputs(results, flags, { table: true, gantt: flags.timeline ?? false });
  if (kinds && kinds.length > 1)
    cliIo().stdout.write('\n' + renderHostMemoryTable(results, outputColumns(cliIo().stdout)) + '\n');
  return results.some((r) => r.verification.status === 'failed') ? 1 : 0;
}

const seconds = (value: number | undefined) => (value === undefined ? undefined : value * 1000);

/** The dry run's line about its compile check. */
export function kernelsLine(check: ConfigKernelCheck): string {
  if (check.checked === 'nothing') return 'no kernel sources to compile: every compute step is a library call';
  if (!check.checked)
    return `kernels not compiled, so not checked: ${check.reason} (\`cuda-pipe kernels --check\` compiles them where NVRTC is installed)`;
  const sources = `${check.sources} kernel source${check.sources === 1 ? '' : 's'}`;
  return `${sources} compiled for ${check.arch} (${check.why}) with NVRTC ${check.nvrtc}${check.cached ? `, ${check.cached} from the cache` : ''}`;
}
