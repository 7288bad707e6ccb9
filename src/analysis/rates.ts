import { UsageError } from '../errors.js';
import { loadDocument } from '../result/load.js';
import type { RunResult } from '../result/schema.js';
import type { LinkRates } from './metrics.js';
import type { GpuEvent } from '../traces/events.js';

// The link rates the floor divides bytes by: measured ones from a file when the user gives one (`probe --bandwidth
// --json`, or a Result's traced copies), else the trace's own fastest copies, which can only be as fast as the
// program made them: a trace that never copied at full speed gets a floor too low by as much.

export interface RatesSource {
  readonly source: 'trace' | 'probe' | 'result';
  /** The file the rates came from; null for the trace's own copies. */
  readonly file: string | null;
  /** Per device index; a device the file does not cover takes its first device's rates. */
  readonly byDevice: ReadonlyMap<number, LinkRates>;
}

/** How many of the fastest copies per direction give the trace's rate: enough that one odd copy does not set it. */
export const TOP_COPIES = 5;

/**
 * bytes / duration of the TOP_COPIES fastest pinned copies of each direction, summed; null where there is none. A copy
 * from pageable memory is staged by the driver at a fraction of the link's rate: it says nothing of the link.
 */
export function ratesFromCopies(
  copies: readonly (Pick<GpuEvent, 'direction' | 'bytes' | 'start' | 'end'> & {
    readonly hostMemory?: GpuEvent['hostMemory'];
  })[],
): LinkRates {
  const rate = (direction: 'h2d' | 'd2h'): number | null => {
    const timed = copies
      .filter(
        (c) =>
          c.direction === direction &&
          c.hostMemory !== 'pageable' &&
          c.bytes !== null &&
          c.bytes > 0 &&
          c.end > c.start,
      )
      .map((c) => ({ bytes: c.bytes!, ms: c.end - c.start }))
      .sort((a, b) => b.bytes / b.ms - a.bytes / a.ms)
      .slice(0, TOP_COPIES);
    if (!timed.length) return null;
    const bytes = timed.reduce((sum, c) => sum + c.bytes, 0);
    const ms = timed.reduce((sum, c) => sum + c.ms, 0);
    return bytes / ms / 1e6;
  };
  return { h2d: rate('h2d'), d2h: rate('d2h') };
}

/** The rates in a `probe --bandwidth --json` file (pinned copies, each direction alone) or a Result's traced copies. */
export function ratesFromFile(file: string): RatesSource {
  const document = loadDocument(file);
  if (document.kind === 'probe') {
    const byDevice = new Map<number, LinkRates>();
    for (const { facts, bandwidth } of document.probe.devices) {
      const pinned = (direction: 'h2d' | 'd2h') =>
        bandwidth?.find((b) => b.hostMemory === 'pinned' && b.direction === direction)?.gbPerSecond ?? null;
      if (bandwidth?.length) byDevice.set(facts.index, { h2d: pinned('h2d'), d2h: pinned('d2h') });
    }
    if (!byDevice.size)
      throw new UsageError(`--rates ${file}: the probe has no copy rates.`, {
        hint: 'Write it with `cuda-pipe probe --bandwidth --json <file>`.',
      });
    return { source: 'probe', file, byDevice };
  }
  if (document.kind === 'results') {
    const byDevice = new Map<number, LinkRates>(aloneRates(document.results));
    const ops = document.results.flatMap((r) => r.timeline?.reps.flatMap((rep) => rep.ops) ?? []);
    for (const device of new Set(ops.map((op) => op.device))) {
      if (byDevice.has(device)) continue;
      const copies = ops
        .filter((op) => op.device === device && (op.kind === 'h2d' || op.kind === 'd2h'))
        .map((op) => ({
          direction: op.kind as 'h2d' | 'd2h',
          bytes: op.bytes,
          start: op.engineStartMs ?? op.startMs,
          end: op.engineEndMs ?? op.endMs,
        }));
      const rates = ratesFromCopies(copies);
      if (rates.h2d !== null || rates.d2h !== null) byDevice.set(device, rates);
    }
    if (!byDevice.size)
      throw new UsageError(`--rates ${file}: the Result has no copies to take rates from, alone or traced.`, {
        hint: 'Pass a `cuda-pipe probe --bandwidth --json` file, or a Result run with tracing on.',
      });
    return { source: 'result', file, byDevice };
  }
  throw new UsageError(`--rates ${file}: an A/B document holds no copy rates.`, {
    hint: 'Pass a `cuda-pipe probe --bandwidth --json` file or a Result.',
  });
}

/**
 * Per device, each direction's rate from a Result's model parts where it has them: its H2D and D2H each timed alone
 * (the modes `run` measures for the bound), as a probe measures the link. A Result's traced copies ran side by side
 * with each other and with the other direction: timed one by one they look slower than the link (34.9 and 40.4 GB/s on
 * the traced balanced H200 Result, whose copies alone ran at 55.4 and 55.2), and the floor from them comes out too
 * high. A Result with pageable buffers is left out: its copies are staged by the driver and say nothing of the link.
 */
function aloneRates(results: readonly RunResult[]): Map<number, LinkRates> {
  const byDevice = new Map<number, { h2d: number | null; d2h: number | null }>();
  for (const result of results) {
    if (result.buffers.some((b) => b.hostMemory === 'pageable')) continue;
    for (const mode of result.modes) {
      const { role } = mode;
      if (role.kind !== 'stage' || (role.stage !== 'h2d' && role.stage !== 'd2h')) continue;
      const bytes = mode.bytes[role.stage];
      if (!(bytes > 0 && mode.stats.median > 0)) continue;
      const rates = byDevice.get(mode.device) ?? { h2d: null, d2h: null };
      rates[role.stage] = Math.max(rates[role.stage] ?? 0, bytes / mode.stats.median / 1e6);
      byDevice.set(mode.device, rates);
    }
  }
  return byDevice;
}

/** The rates a device's floor uses from a file: its own, else the file's first device's. */
export function ratesFor(source: RatesSource, device: number): LinkRates {
  return source.byDevice.get(device) ?? source.byDevice.values().next().value ?? { h2d: null, d2h: null };
}

/** Each direction's rate, a direction without one taking the other's; `borrowed` names the direction that did. */
export function pinnedRates(rates: LinkRates): LinkRates & { readonly borrowed: 'h2d' | 'd2h' | null } {
  if (rates.h2d === null && rates.d2h !== null) return { h2d: rates.d2h, d2h: rates.d2h, borrowed: 'h2d' };
  if (rates.d2h === null && rates.h2d !== null) return { h2d: rates.h2d, d2h: rates.h2d, borrowed: 'd2h' };
  return { ...rates, borrowed: null };
}
