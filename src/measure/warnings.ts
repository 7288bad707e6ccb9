import { CLOCK_SPREAD, clockText } from '../clocks.js';
import { formatEfficiency, formatPercent, formatRatioBelowOne } from '../format.js';
import type { DeviceFacts } from '../result/environment.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import type { Warning, WarningCode } from '../result/warnings.js';
import { serialMismatch } from '../result/likeness.js';

/** Clock readings further apart than this, as a fraction of the highest, mean the GPU changed speed mid-run. */
const CLOCK_CHANGE = CLOCK_SPREAD;
/**
 * Efficiency above this says the measurement beat the bound. The bound's parts are each the fastest of their samples,
 * so noise can only lower it: a bound above a measurement is a defect of the model, not noise.
 */
export const ABOVE_BOUND = 1.01;

/** "the serial mode", "the overlapped mode (16 chunks over 4 streams, depth-first)". */
const named = (mode: ModeResult) =>
  mode.role.kind === 'overlapped' ? `the overlapped mode (${mode.description})` : `the ${mode.role.kind} mode`;

type Unwarned = Omit<RunResult, 'warnings'>;

/**
 * One function per code (hyperfine's `Warnings` are the model): the warning its rule gives, with what to do about it,
 * or null where the rule does not apply. Keyed by the closed list of codes, so a code without a rule, a rule without a
 * code, or a rule giving another rule's code does not compile.
 */
const RULES = {
  'no-copy-engine': (device: DeviceFacts) =>
    device.asyncEngineCount === 0
      ? {
          code: 'no-copy-engine',
          message: `${device.name} reports no asynchronous copy engine: copies cannot overlap kernels.`,
          remedy: 'Overlap cannot help on this device; the serial time is the floor.',
        }
      : null,
  'one-copy-engine': (device: DeviceFacts) =>
    device.asyncEngineCount === 1
      ? {
          code: 'one-copy-engine',
          message: 'One copy engine: H2D and D2H cannot overlap each other, only kernels.',
          remedy: 'Try `--order breadth-first`, which keeps the single engine busy with one direction at a time.',
        }
      : null,
  'pageable-memory': (result: Unwarned) => {
    const pageable = result.buffers.filter((b) => b.hostMemory === 'pageable');
    return pageable.length
      ? {
          code: 'pageable-memory',
          message: `Pageable host memory (${pageable.map((b) => b.name).join(', ')}): copies are staged through a driver buffer and will not overlap compute.`,
          remedy: 'Use `hostMemory: pinned` (or `registered` for memory you already have).',
        }
      : null;
  },
  'write-combined-output': (result: Unwarned) => {
    const writeCombined = result.buffers.filter((b) => b.hostMemory === 'write-combined' && b.role !== 'in');
    return writeCombined.length
      ? {
          code: 'write-combined-output',
          message: `Write-combined host memory holds outputs (${writeCombined.map((b) => b.name).join(', ')}): the CPU reads it very slowly.`,
          remedy: 'Keep write-combined memory for inputs the GPU reads; use pinned memory for outputs.',
        }
      : null;
  },
  'not-verified': (result: Unwarned) =>
    result.verification.status === 'skipped'
      ? {
          code: 'not-verified',
          message: 'Outputs were not verified (--no-verify): the overlapped figure may come from a wrong result.',
          remedy: 'Drop --no-verify.',
        }
      : null,
  noisy: (mode: ModeResult, target: number) => {
    if (!(mode.stats.n > 1 && mode.stats.relativeNoise > target)) return null;
    const why =
      mode.stoppedBy === 'noise-stable'
        ? 'it stopped falling'
        : mode.stoppedBy === 'max-time'
          ? 'the time budget ran out'
          : `${mode.stats.n} reps were taken`;
    return {
      code: 'noisy',
      message: `Noise of ${named(mode)} is ${formatPercent(mode.stats.relativeNoise, 2)}, above the ${formatPercent(target, 2)} target (${why}).`,
      remedy:
        mode.stoppedBy === 'max-time'
          ? 'Raise --max-time.'
          : 'Keep other work off the GPU, the PCIe link and the host while measuring; --gate removes host issue jitter.',
    };
  },
  outliers: (mode: ModeResult) =>
    mode.stats.outliers.length
      ? {
          code: 'outliers',
          message: `${mode.stats.outliers.length} of ${mode.stats.n} samples of ${named(mode)} are outliers (modified z-score above 3.5); they are kept in the statistics.`,
          remedy: 'Look for other processes using the GPU or the PCIe link, then re-run.',
        }
      : null,
  'gate-timeout': (result: Unwarned) => {
    const timeouts = result.modes.reduce((sum, m) => sum + m.gateTimeouts, 0);
    return timeouts
      ? {
          code: 'gate-timeout',
          message: `The gate timed out in ${timeouts} reps: those include host issue cost after all.`,
          remedy: "Use fewer chunks: a rep with many ops can fill the GPU's queue while the gate holds it.",
        }
      : null;
  },
  'shared-gpu': (result: Unwarned) => {
    const { sharing } = result.clocks;
    const others = sharing.otherProcesses;
    return sharing.checked && others
      ? {
          code: 'shared-gpu',
          message:
            `${others} other compute process${others === 1 ? ' was' : 'es were'} running on the GPU during the run: ` +
            'these figures are shared with them and will not repeat on an idle GPU.',
          remedy:
            'Measure on an idle GPU: stop the other processes (nvidia-smi lists them) or pick a free device with --device.',
        }
      : null;
  },
  'clock-change': (result: Unwarned) => {
    const { clocks } = result;
    return clocks.checked &&
      clocks.minMHz !== null &&
      clocks.maxMHz !== null &&
      (clocks.maxMHz - clocks.minMHz) / clocks.maxMHz > CLOCK_CHANGE
      ? {
          code: 'clock-change',
          message: `The SM clock changed during the run (${clocks.minMHz} to ${clocks.maxMHz} MHz): power or thermal limits, or another process, moved it.`,
          remedy: 'Compare only runs whose clocks agree; let the GPU cool, and keep other work off it.',
        }
      : null;
  },
  'above-bound': (mode: ModeResult) => {
    const analysis = mode.analysis;
    if (!analysis || !(analysis.efficiency > ABOVE_BOUND)) return null;
    const clocks = analysis.model?.clocks;
    const faster =
      `${capitalise(named(mode))} measured faster than the model's bound ` +
      `(bound ${analysis.bound.ms.toFixed(3)} ms, limited by ${analysis.bound.limitedBy}; efficiency ${formatEfficiency(analysis.efficiency)})`;
    // Clocks before blame: a bound whose kernel parts ran at another clock than the mode is no floor for it.
    if (clocks?.status === 'moving' && clocks.mode && clocks.parts) {
      return {
        code: 'above-bound',
        message:
          `${faster}, whose kernel parts ran at ${clockText(clocks.parts)} and this layout at ${clockText(clocks.mode)} (NVML): ` +
          'the comparison is not at matching clocks, so it says nothing of the model.',
        remedy:
          'Hold the SM clock still while measuring (nvidia-smi --lock-gpu-clocks, or let the GPU cool and keep other work off it), then re-run.',
      };
    }
    if (clocks?.status === 'unknown') {
      return {
        code: 'above-bound',
        message: `${faster}, and NVML did not read the SM clock of every part: a clock that moved between them cannot be told from a defect in cuda-pipe's model.`,
        remedy:
          "Run where NVML reads the SM clock (the driver's libnvidia-ml), or with the clocks locked (nvidia-smi --lock-gpu-clocks).",
      };
    }
    const matched = clocks?.status === 'rebuilt' ? ", even with its kernel parts put at this layout's SM clock" : '';
    return {
      code: 'above-bound',
      message: `${faster}${matched}: the bound is built to be a floor, so this is a defect in cuda-pipe's model, not a property of this config.`,
      remedy:
        "Compare layouts by their measured times, not by the bound, and report the defect with this run's --json file.",
    };
  },
  'slower-than-serial': (mode: ModeResult, judged: readonly ModeResult[], modes: readonly ModeResult[]) =>
    mode.analysis && mode.analysis.speedup < 1 && judged.includes(mode) && !serialMismatch(mode, modes)
      ? {
          code: 'slower-than-serial',
          message:
            `${capitalise(named(mode))} is slower than serial (${formatRatioBelowOne(mode.analysis.speedup)})` +
            `${oneStream(mode) ? ': every stream is the per-thread default stream, so its streams are one stream and nothing overlaps' : ''}.`,
          remedy: slowerRemedy(mode),
        }
      : null,
} satisfies { readonly [C in WarningCode]: (...args: never[]) => (Warning & { code: C }) | null };

/**
 * What limits or undermines this result, each with what to do about it. Listed device by device, then the run's
 * memory and verification, then mode by mode, as they always were, so that a re-run lists its warnings in the same
 * order.
 */
export function runWarnings(result: Unwarned): Warning[] {
  // A sweep measures dozens of layouts, most of them stopped early on purpose: only its best speaks for the result.
  const sweepBest = result.sweep?.best.mode;
  const judged = result.modes.filter(
    (m) =>
      m.role.kind === 'serial' || (m.role.kind === 'overlapped' && (sweepBest === undefined || m.id === sweepBest)),
  );
  const found: Array<Warning | null> = [
    ...result.devices.flatMap((device) => [RULES['no-copy-engine'](device), RULES['one-copy-engine'](device)]),
    RULES['pageable-memory'](result),
    RULES['write-combined-output'](result),
    RULES['not-verified'](result),
    ...judged.flatMap((mode) => [RULES.noisy(mode, result.policy.maxNoise), RULES.outliers(mode)]),
    RULES['gate-timeout'](result),
    RULES['shared-gpu'](result),
    RULES['clock-change'](result),
    // Every layout, a sweep's too: a bound above any measurement is a defect wherever it shows.
    ...result.modes.flatMap((mode) => [
      RULES['above-bound'](mode),
      RULES['slower-than-serial'](mode, judged, result.modes),
    ]),
  ];
  return found.filter((w) => w !== null);
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A mode measured faster than its bound, and what that says given the clocks: the `above-bound` warning, or null. */
export const aboveBound = (mode: ModeResult): Warning | null => RULES['above-bound'](mode);

const oneStream = (mode: ModeResult) =>
  mode.analysis?.model?.serialisers?.includes('per-thread default stream') ?? false;

/** What to change for a layout slower than serial: its one stream, its pageable memory, or its chunk count. */
function slowerRemedy(mode: ModeResult): string {
  const found = mode.analysis?.model?.serialisers;
  if (oneStream(mode))
    return 'Use `streamKind: non-blocking` (or `blocking`): streams of their own are what lets chunks overlap.';
  if (found?.includes('pageable memory'))
    return 'Use `hostMemory: pinned`: copies from pageable memory are staged and do not overlap compute.';
  if (found?.includes('legacy default stream'))
    return 'Keep work off the legacy default stream: every op on it waits for, and holds up, the other blocking streams.';
  if (found === undefined)
    return 'Use fewer chunks (per-op costs dominate small chunks) or check that host memory is pinned.';
  const floor = mode.analysis?.model?.floor;
  const chunks = mode.role.kind === 'overlapped' ? mode.role.layout.chunks : 0;
  if (floor && floor.chunks < chunks)
    return `Use fewer chunks, about ${floor.chunks} (the model's best layout for this workload): per-op costs dominate small chunks.`;
  return 'Nothing in this config is known to run ops one after another, and the model does not explain the loss: `--timeline` shows where the streams waited.';
}
