import type { RunResult } from '../result/schema.js';
import type { TracedRep } from '../result/timeline.js';
import { causesOf } from './causes.js';
import type { Finding } from './document.js';
import { findingsOf } from './findings.js';
import { buildGraph } from './graph-edges.js';
import { deviceTimeline, stepMetrics } from './metrics.js';
import { pinnedRates, ratesFromCopies } from './rates.js';
import { eventsOfRep } from './rep-events.js';

// `run`'s findings: a Result's traced rep read by the same rules as `analyze` reads a user's trace (causes.ts), each
// credited with what the rep would save without its cause, and never more than the rep takes above `floorMs` (the
// mode's bound, where the report has one, when that is above the rep's own floor).

/** A traced rep's streams are the plan's, each named as it was made: a default stream is one the plan named so. */
const REP_DEFAULT_STREAM = 'as the trace names it';

/**
 * A traced rep as `run`'s findings read it: its device's timeline, its one step's window, the link's rates from every
 * traced copy of the device (pinned ones only, rates.ts) and that step's metrics, its floor among them.
 */
export function repStep(result: Pick<RunResult, 'buffers' | 'timeline'>, rep: TracedRep) {
  const memory = (name: string) => result.buffers.find((b) => b.name === name)?.hostMemory;
  const reps = result.timeline?.reps.filter((r) => r.device === rep.device) ?? [];
  const rates = pinnedRates(ratesFromCopies(reps.flatMap((r) => eventsOfRep(r, memory))));
  const timeline = deviceTimeline(eventsOfRep(rep, memory), []);
  const window = { name: rep.mode, start: 0, end: rep.totalMs, host: null };
  return { timeline, window, rates, step: stepMetrics(timeline, window, rates) };
}

export function repFindings(
  result: Pick<RunResult, 'buffers' | 'timeline'>,
  rep: TracedRep,
  floorMs: number | null = null,
): Finding[] {
  const { timeline, window, rates, step: measured } = repStep(result, rep);
  const step =
    floorMs !== null && floorMs > measured.floor.ms
      ? { ...measured, floor: { ...measured.floor, ms: floorMs } }
      : measured;
  const graph = buildGraph(timeline.events, [], { linkRates: rates, perOpMs: timeline.perOpMs });
  const causes = causesOf({ graph, pinned: rates, windows: [window], device: null });
  return findingsOf(
    { file: rep.mode, device: rep.device, rank: null },
    REP_DEFAULT_STREAM,
    { graph, causes, windows: [window], steps: [step] },
    rep.totalMs,
  );
}

/** What a config changes to remove each cause, in cuda-pipe's own terms (docs/reference/config.md). */
export const CONFIG_CHANGE: Readonly<Record<Finding['code'], string>> = {
  'pageable-copy': 'pin the host buffers (hostMemory: pinned)',
  'default-stream': 'move the work off the legacy default stream (streamKind: non-blocking)',
  'serialised-copies': 'drop the wait between the copy streams',
  'copy-on-compute-stream': 'give the copies streams of their own (topology: stage-per-stream)',
  'exposed-communication': 'start the collectives earlier (more buckets: pipeline.chunks)',
  'host-sync': 'remove the synchronize inside the rep',
  'host-bound': 'issue the rep as a CUDA graph (--mode graph)',
};
