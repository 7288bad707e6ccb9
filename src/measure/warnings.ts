import { formatPercent } from '../format.js';
import type { ModeResult, RunResult, Warning } from '../result/schema.js';
import { serialMismatch } from '../result/likeness.js';

/** Clock readings further apart than this, as a fraction of the highest, mean the GPU changed speed mid-run. */
const CLOCK_CHANGE = 0.05;
/**
 * Efficiency above this says the measurement beat the bound. The bound's parts are each the fastest of their samples,
 * so noise can only lower it: a bound above a measurement is a defect of the model, not noise.
 */
export const ABOVE_BOUND = 1.01;

/** "the serial mode", "the overlapped mode (16 chunks over 4 streams, depth-first)". */
const named = (mode: ModeResult) => (mode.role.kind === 'overlapped' ? `the overlapped mode (${mode.description})` : `the ${mode.role.kind} mode`);

/** What limits or undermines this result, each with what to do about it (hyperfine's warnings are the model). */
export function runWarnings(result: Omit<RunResult, 'warnings'>): Warning[] {
  const warnings: Warning[] = [];
  for (const device of result.devices) {
    if (device.asyncEngineCount === 0) {
      warnings.push({
        code: 'no-copy-engine',
        message: `${device.name} reports no asynchronous copy engine: copies cannot overlap kernels.`,
        remedy: 'Overlap cannot help on this device; the serial time is the floor.',
      });
    } else if (device.asyncEngineCount === 1) {
      warnings.push({
        code: 'one-copy-engine',
        message: 'One copy engine: H2D and D2H cannot overlap each other, only kernels.',
        remedy: 'Try `--order breadth-first`, which keeps the single engine busy with one direction at a time.',
      });
    }
  }
  const pageable = result.buffers.filter((b) => b.hostMemory === 'pageable');
  if (pageable.length) {
    warnings.push({
      code: 'pageable-memory',
      message: `Pageable host memory (${pageable.map((b) => b.name).join(', ')}): copies are staged through a driver buffer and will not overlap compute.`,
      remedy: 'Use `hostMemory: pinned` (or `registered` for memory you already have).',
    });
  }
  const writeCombined = result.buffers.filter((b) => b.hostMemory === 'write-combined' && b.role !== 'in');
  if (writeCombined.length) {
    warnings.push({
      code: 'write-combined-output',
      message: `Write-combined host memory holds outputs (${writeCombined.map((b) => b.name).join(', ')}): the CPU reads it very slowly.`,
      remedy: 'Keep write-combined memory for inputs the GPU reads; use pinned memory for outputs.',
    });
  }
  if (result.verification.status === 'skipped') {
    warnings.push({ code: 'not-verified', message: 'Outputs were not verified (--no-verify): the overlapped figure may come from a wrong result.', remedy: 'Drop --no-verify.' });
  }
  const target = result.policy.maxNoise;
  // A sweep measures dozens of layouts, most of them stopped early on purpose: only its best speaks for the result.
  const sweepBest = result.sweep?.best.mode;
  const judged = result.modes.filter((m) => m.role.kind === 'serial' || (m.role.kind === 'overlapped' && (sweepBest === undefined || m.id === sweepBest)));
  for (const mode of judged) {
    if (mode.stats.n > 1 && mode.stats.relativeNoise > target) {
      const why = mode.stoppedBy === 'noise-stable' ? 'it stopped falling' : mode.stoppedBy === 'max-time' ? 'the time budget ran out' : `${mode.stats.n} reps were taken`;
      warnings.push({
        code: 'noisy',
        message: `Noise of ${named(mode)} is ${formatPercent(mode.stats.relativeNoise, 2)}, above the ${formatPercent(target, 2)} target (${why}).`,
        remedy: mode.stoppedBy === 'max-time' ? 'Raise --max-time.' : 'Keep other work off the GPU, the PCIe link and the host while measuring; --gate removes host issue jitter.',
      });
    }
    if (mode.stats.outliers.length) {
      warnings.push({
        code: 'outliers',
        message: `${mode.stats.outliers.length} of ${mode.stats.n} samples of ${named(mode)} are outliers (modified z-score above 3.5); they are kept in the statistics.`,
        remedy: 'Look for other processes using the GPU or the PCIe link, then re-run.',
      });
    }
  }
  const timeouts = result.modes.reduce((sum, m) => sum + m.gateTimeouts, 0);
  if (timeouts) {
    warnings.push({
      code: 'gate-timeout',
      message: `The gate timed out in ${timeouts} reps: those include host issue cost after all.`,
      remedy: "Use fewer chunks: a rep with many ops can fill the GPU's queue while the gate holds it.",
    });
  }
  const { clocks } = result;
  const others = clocks.sharing.otherProcesses;
  if (clocks.sharing.checked && others) {
    warnings.push({
      code: 'shared-gpu',
      message:
        `${others} other compute process${others === 1 ? ' was' : 'es were'} running on the GPU during the run: ` +
        'these figures are shared with them and will not repeat on an idle GPU.',
      remedy: 'Measure on an idle GPU: stop the other processes (nvidia-smi lists them) or pick a free device with --device.',
    });
  }
  if (clocks.checked && clocks.minMHz !== null && clocks.maxMHz !== null && (clocks.maxMHz - clocks.minMHz) / clocks.maxMHz > CLOCK_CHANGE) {
    warnings.push({
      code: 'clock-change',
      message: `The SM clock changed during the run (${clocks.minMHz} to ${clocks.maxMHz} MHz): power or thermal limits, or another process, moved it.`,
      remedy: 'Compare only runs whose clocks agree; let the GPU cool, and keep other work off it.',
    });
  }
  // Every layout, a sweep's too: a bound above any measurement is a defect wherever it shows.
  for (const mode of result.modes) {
    const analysis = mode.analysis;
    if (!analysis) continue;
    if (analysis.efficiency > ABOVE_BOUND) {
      warnings.push({
        code: 'above-bound',
        message:
          `${capitalise(named(mode))} measured faster than the model's bound ` +
          `(bound ${analysis.bound.ms.toFixed(3)} ms, limited by ${analysis.bound.limitedBy}; efficiency ${analysis.efficiency.toFixed(2)}): ` +
          "the bound is built to be a floor, so this is a defect in cuda-pipe's model, not a property of this config.",
        remedy: "Compare layouts by their measured times, not by the bound, and report the defect with this run's --json file.",
      });
    }
    if (analysis.speedup < 1 && judged.includes(mode) && !serialMismatch(mode, result.modes)) {
      warnings.push({
        code: 'slower-than-serial',
        message:
          `${capitalise(named(mode))} is slower than serial (${analysis.speedup.toFixed(2)}×)` +
          `${oneStream(mode) ? ': every stream is the per-thread default stream, so its streams are one stream and nothing overlaps' : ''}.`,
        remedy: slowerRemedy(mode),
      });
    }
  }
  return warnings;
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const oneStream = (mode: ModeResult) => mode.analysis?.model?.serialisers?.includes('per-thread default stream') ?? false;

/** What to change for a layout slower than serial: its one stream, its pageable memory, or its chunk count. */
function slowerRemedy(mode: ModeResult): string {
  const found = mode.analysis?.model?.serialisers;
  if (oneStream(mode)) return 'Use `streamKind: non-blocking` (or `blocking`): streams of their own are what lets chunks overlap.';
  if (found?.includes('pageable memory')) return 'Use `hostMemory: pinned`: copies from pageable memory are staged and do not overlap compute.';
  if (found?.includes('legacy default stream')) return 'Keep work off the legacy default stream: every op on it waits for, and holds up, the other blocking streams.';
  if (found === undefined) return 'Use fewer chunks (per-op costs dominate small chunks) or check that host memory is pinned.';
  const floor = mode.analysis?.model?.floor;
  const chunks = mode.role.kind === 'overlapped' ? mode.role.layout.chunks : 0;
  if (floor && floor.chunks < chunks) return `Use fewer chunks, about ${floor.chunks} (the model's best layout for this workload): per-op costs dominate small chunks.`;
  return 'Nothing in this config is known to run ops one after another, and the model does not explain the loss: `--timeline` shows where the streams waited.';
}
