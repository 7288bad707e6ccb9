import { type ClockRange, clockText } from '../clocks.js';
import { formatMs } from '../format.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';

// What the SM clock NVML read says about a Result's conclusions: whether a bound's kernel parts ran at the clock of
// the layout they bound, and whether a kernel alone slower than serial, which runs the same kernels and more, is the
// clock's doing. Clocks before blame: neither the model nor the GPU is blamed for what a clock explains.

/**
 * Where the bound's kernel parts ran at another SM clock than `mode`: what NVML read, and what the model made of it;
 * null where the clocks match or nothing could be said.
 */
export function clockNote(mode: ModeResult): string | null {
  const clocks = mode.analysis?.model?.clocks;
  if (!clocks?.mode || !clocks.parts) return null;
  const read = `kernel parts at ${brief(clocks.parts)}, this layout at ${brief(clocks.mode)}`;
  // Rebuilt: each part's time × its clock / the layout's highest, a floor at the layout's clock (cycles = time × MHz).
  if (clocks.status === 'rebuilt') return `${read}: the bound puts the parts at ${clocks.mode.max} MHz`;
  if (clocks.status === 'moving') return `${read}: moving, so not matched`;
  return null;
}

/** "1515 MHz", "1305–1560 MHz": short enough for the answer's line. */
const brief = (range: ClockRange) => (range.min === range.max ? `${range.min} MHz` : `${range.min}–${range.max} MHz`);

/** The efficiency's word on the clocks, for the answer's line: the parts put at the layout's clock, or not matched. */
export function clockSuffix(mode: ModeResult): string {
  const clocks = mode.analysis?.model?.clocks;
  if (clocks?.status === 'rebuilt' && clocks.mode) return `, parts put at ${clocks.mode.max} MHz`;
  return clocks?.status === 'moving' ? ', clocks not matched' : '';
}

const fastest = (mode: ModeResult) => mode.samplesMs.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);

/**
 * For each device whose kernels alone took longer at their fastest than serial at its fastest (serial runs the same
 * kernels, and copies besides): the kernels' time at serial's clock, cycles = time × MHz, and whether the clock
 * explains it: surely (even at the clocks least in its favour), perhaps (at some clocks NVML read), or not, with what
 * else may. Empty where no kernel alone is slower than serial.
 */
export function aloneSlowerLines(result: Pick<RunResult, 'modes' | 'devices'>): string[] {
  return result.modes.flatMap((serial) => {
    if (serial.role.kind !== 'serial') return [];
    const kernels = result.modes.filter(
      (m) => m.device === serial.device && m.role.kind === 'stage' && m.role.stage === 'kernel' && m.samplesMs.length,
    );
    const aloneMs = kernels.reduce((sum, m) => sum + fastest(m), 0);
    const serialMs = fastest(serial);
    if (!kernels.length || !(aloneMs > serialMs)) return [];
    const names = kernels
      .map((m) => (m.role.kind === 'stage' && m.role.stage === 'kernel' ? m.role.kernel : ''))
      .join(' + ');
    const on = result.devices.length > 1 ? ` on GPU ${serial.device}` : '';
    const clocks = kernels.map((m) => m.smClockMHz);
    const at = serial.smClockMHz;
    const head = `kernel ${names} alone${on} (${formatMs(aloneMs)}${rangeText(clocks)}) is slower than serial (${formatMs(serialMs)}${at ? ` at ${clockText(at)}` : ''}), which runs the same kernels and more`;
    if (!at || clocks.some((c) => c === null))
      return [`${head}; NVML did not read every clock, so whether the clock explains it is not known`];
    const known = clocks as ClockRange[];
    // The kernels' cycles at serial's clock: fewest at their lowest clock and serial's highest, most the other way.
    const least = kernels.reduce((sum, m, i) => sum + (fastest(m) * (known[i] as ClockRange).min) / at.max, 0);
    const most = kernels.reduce((sum, m, i) => sum + (fastest(m) * (known[i] as ClockRange).max) / at.min, 0);
    const atSerial = least === most ? formatMs(least) : `${formatMs(least)} to ${formatMs(most)}`;
    const scaled = `at serial's clock they would take ${atSerial} (cycles = time × MHz)`;
    if (most <= serialMs) return [`${head}: ${scaled}, so the clock explains it`];
    if (least <= serialMs) return [`${head}: ${scaled}, so the clock may explain it`];
    return [
      `${head}: ${scaled}, still slower, so the clock does not explain it: serial's kernels may find their inputs in L2 ` +
        "after its copies, or the GPU's boost may have differed within a reading",
    ];
  });
}

const rangeText = (clocks: readonly (ClockRange | null)[]) => {
  const known = clocks.filter((c): c is ClockRange => c !== null);
  if (known.length < clocks.length || !known.length) return '';
  return ` at ${clockText({ min: Math.min(...known.map((c) => c.min)), max: Math.max(...known.map((c) => c.max)) })}`;
};
