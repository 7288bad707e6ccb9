import { median } from '../quantile.js';
import { type CollectiveSide, collectiveSkew } from './collectives.js';
import {
  ANALYSIS_SCHEMA_ID,
  ANALYSIS_VERSION,
  type AnalysisDocument,
  type DeviceAnalysis,
  type Finding,
} from './document.js';
import { causesOf } from './causes.js';
import { findingsOf } from './findings.js';
import { deviceTimeline, type LinkRates, type StepMetrics, stepMetrics } from './metrics.js';
import type { GpuEvent, ParsedTrace } from '../traces/events.js';
import { type RatesSource, pinnedRates, ratesFor, ratesFromCopies } from './rates.js';
import { buildGraph } from './graph-edges.js';
import { stepWindows } from './steps.js';
import { traceFormat } from '../traces/formats/index.js';

// Parsed traces → the analysis document: per trace (one per rank), per device, per step. Pure: the command reads the
// files and writes the document.

/** Said wherever skew across ranks is measured: the traces' clocks are not aligned. */
export const CLOCK_NOTE =
  "collective skew compares the traces' times as written: Kineto's are each host's clock, so ranks of one host compare directly, and across hosts the skew includes the hosts' clock offset (nothing aligns them)";

export function analyzeTraces(
  traces: readonly ParsedTrace[],
  options: { readonly rates: RatesSource | null; readonly toolVersion: string },
): AnalysisDocument {
  const devices: DeviceAnalysis[] = [];
  const findings: Finding[] = [];
  const notes = new Set<string>();
  const sides: CollectiveSide[] = [];
  for (const trace of traces) {
    for (const note of trace.notes) notes.add(`${trace.file}: ${note}`);
    const byDevice = new Map<number, GpuEvent[]>();
    for (const e of trace.gpu) {
      const own = byDevice.get(e.device);
      if (own) own.push(e);
      else byDevice.set(e.device, [e]);
    }
    if (!byDevice.size) notes.add(`${trace.file}: no GPU events (kernels, copies, memsets): nothing to analyse`);
    for (const [device, events] of [...byDevice].sort(([a], [b]) => a - b)) {
      const timeline = deviceTimeline(events, trace.host);
      const measured: LinkRates = options.rates ? ratesFor(options.rates, device) : ratesFromCopies(events);
      // Pinned copies set the link's rate; a direction with none takes the other's (one link, about one rate each way).
      const rates = pinnedRates(measured);
      if (rates.borrowed && events.some((e) => e.direction === rates.borrowed))
        notes.add(
          `${trace.file}: GPU ${device} has no pinned ${rates.borrowed} copy to take its rate from: the other direction's rate stands in for it`,
        );
      const windows = stepWindows(trace, device, timeline.events);
      const steps = windows.map((w) => stepMetrics(timeline, w, rates));
      const kernels = events.filter((e) => e.kind === 'kernel' && e.communication);
      if (kernels.length) sides.push({ who: { file: trace.file, rank: trace.rank, device }, kernels, steps: windows });
      const analysis = deviceAnalysis(trace, device, steps, rates, options.rates);
      devices.push(analysis);
      if (mayHaveCauses(events, trace.host)) {
        const graph = buildGraph(timeline.events, trace.host, { linkRates: rates, perOpMs: timeline.perOpMs });
        const causes = causesOf({
          graph,
          pinned: rates,
          windows,
          device: trace.devices?.find((d) => d.index === device) ?? null,
        });
        findings.push(
          ...findingsOf(
            { file: trace.file, device, rank: trace.rank },
            traceFormat(trace.format).words.defaultStream,
            { graph, causes, windows, steps },
            analysis.stepMs,
          ),
        );
      }
    }
  }
  if (!options.rates && devices.length)
    notes.add(
      "link rates are each trace's fastest pinned copies (--rates not given): where they never ran at the link's full rate, the rate is too low and the floor too high; pass --rates with a `cuda-pipe probe --bandwidth --json` file",
    );
  // Sides in the order the devices are listed: by rank, as below.
  sides.sort((a, b) => (a.who.rank ?? Number.POSITIVE_INFINITY) - (b.who.rank ?? Number.POSITIVE_INFINITY));
  const collectives = collectiveSkew(sides);
  if (collectives?.kind === 'measured') notes.add(CLOCK_NOTE);
  // One trace per rank, given in any order (a shell glob sorts rank10 before rank2): listed by rank, stably, so
  // traces without one keep the order given, after those with one.
  const byRank = (a: { rank: number | null }, b: { rank: number | null }) =>
    (a.rank ?? Number.POSITIVE_INFINITY) - (b.rank ?? Number.POSITIVE_INFINITY);
  devices.sort(byRank);
  findings.sort(byRank);
  return {
    schema: ANALYSIS_SCHEMA_ID,
    version: ANALYSIS_VERSION,
    tool: { name: 'cuda-pipe', version: options.toolVersion },
    devices,
    findings,
    notes: [...notes],
    ...(collectives ? { collectives } : {}),
  };
}

/**
 * Whether any rule of causes.ts could find evidence: host calls, a copy, work on the default stream, a collective.
 * Kernels on streams of their own with no host calls can hold none, and are spared the replay graph.
 */
function mayHaveCauses(events: readonly GpuEvent[], host: ParsedTrace['host']): boolean {
  return host.length > 0 || events.some((e) => e.kind === 'memcpy' || e.defaultStream || e.communication);
}

function deviceAnalysis(
  trace: ParsedTrace,
  device: number,
  steps: readonly StepMetrics[],
  rates: LinkRates,
  source: RatesSource | null,
): DeviceAnalysis {
  const mid = (pick: (s: StepMetrics) => number) => (steps.length ? median(steps.map(pick)) : 0);
  const stepMs = mid((s) => s.ms);
  const floorMs = mid((s) => s.floor.ms);
  // Each share over all steps: the overlapped time summed over the first party's time summed.
  const pooled = (share: (s: StepMetrics) => number | null, partyMs: (s: StepMetrics) => number): number | null => {
    let party = 0;
    let overlapped = 0;
    for (const s of steps) {
      const value = share(s);
      if (value === null) continue;
      party += partyMs(s);
      overlapped += value * partyMs(s);
    }
    return party > 0 ? overlapped / party : null;
  };
  const h2dMs = (s: StepMetrics) => s.busy.h2d * s.ms;
  const d2hMs = (s: StepMetrics) => s.busy.d2h * s.ms;
  const commWithCompute = pooled(
    (s) => s.overlap.commWithCompute,
    (s) => s.commMs,
  );
  return {
    file: trace.file,
    format: trace.format,
    device,
    rank: trace.rank,
    steps: [...steps],
    stepMs,
    exposedCopyMs: mid((s) => s.exposedCopyMs),
    exposedCommMs: mid((s) => s.exposedCommMs),
    idleMs: mid((s) => s.idleMs),
    hostWaitMs: mid((s) => s.hostWaitMs),
    kernelWaitMs: mid((s) => s.kernelWaitMs),
    syncWaitMs: mid((s) => s.syncWaitMs),
    otherIdleMs: mid((s) => s.otherIdleMs),
    floorMs,
    efficiency: stepMs > 0 ? floorMs / stepMs : 0,
    overlap: {
      h2dWithKernel: pooled((s) => s.overlap.h2dWithKernel, h2dMs),
      d2hWithKernel: pooled((s) => s.overlap.d2hWithKernel, d2hMs),
      h2dWithD2h: pooled(
        (s) => s.overlap.h2dWithD2h,
        (s) => Math.min(h2dMs(s), d2hMs(s)),
      ),
      copyWithKernel: pooled(
        (s) => s.overlap.copyWithKernel,
        (s) => s.copyMs,
      ),
      ...(commWithCompute === null ? {} : { commWithCompute }),
    },
    rates: {
      h2dGbPerSecond: rates.h2d,
      d2hGbPerSecond: rates.d2h,
      source: source?.source ?? 'trace',
      file: source?.file ?? null,
    },
  };
}
