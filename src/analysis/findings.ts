import { formatMs, formatRate } from '../format.js';
import type { Cause } from './causes.js';
import type { Finding, FindingCode } from './document.js';
import type { StepMetrics } from './metrics.js';
import { type Edit, opEnd, opStart, type ReplayGraph } from './graph.js';
import { replay } from './replay.js';
import { type StepWindow, stepMembers } from './steps.js';

// Findings as counterfactuals: each cause's milliseconds are what the step would save without it, the step replayed
// with the cause's edit (causes.ts, replay.ts), never the time its ops took. Causes are not counted twice: they are
// applied one after another, the narrow causes first (a pageable copy, a synchronize, a wait) and host-bound last (a
// CUDA graph would also hide what the narrow fixes remove), and each is credited with what it saves on top of those
// before it, so the credits add up to what removing them all saves. No step is credited with more than it takes
// above its floor. A finding is listed when its mean saving is at least LEAST_SHARE of the median step: smaller ones
// are within what a profiler's own timing moves.

export const LEAST_SHARE = 0.005;

/** What the findings of one device are made from. */
export interface DeviceEvidence {
  readonly graph: ReplayGraph;
  readonly causes: readonly Cause[];
  readonly windows: readonly StepWindow[];
  /** The steps' metrics, in the windows' order: their time and floor. */
  readonly steps: readonly StepMetrics[];
}

/** The order causes are applied in: the narrowest change first, the broadest (a CUDA graph) last. */
const PRIORITY: readonly FindingCode[] = [
  'pageable-copy',
  'host-sync',
  'default-stream',
  'serialised-copies',
  'copy-on-compute-stream',
  'exposed-communication',
  'host-bound',
];

/** A cause's saving in each step, once attributed and capped. */
export interface Attribution {
  readonly cause: Cause;
  /** Per step, ms saved: attributed in order, capped by what the step takes above its floor. */
  readonly savedMs: readonly number[];
}

/** Each cause's saving per step, largest first, the credits adding up to the saving of all of them together. */
export function attribute(evidence: DeviceEvidence): Attribution[] {
  const { graph, causes, windows, steps } = evidence;
  if (!causes.length || !windows.length) return [];
  const members = stepMembers(graph.ops, windows);
  const spans = (edit: Edit) => stepSpans(replay(graph, edit), members);
  const base = spans({});
  const order = causes
    .map((_, i) => i)
    .sort((a, b) => PRIORITY.indexOf(causes[a]!.code) - PRIORITY.indexOf(causes[b]!.code) || a - b);
  const headroom = steps.map((s) => Math.max(0, s.ms - s.floor.ms));
  let applied: Edit = {};
  let previous = base;
  const out: Attribution[] = [];
  for (const i of order) {
    applied = combine(applied, causes[i]!.edit);
    const now = spans(applied);
    const savedMs = diff(previous, now).map((ms, s) => {
      const credited = Math.min(Math.max(0, ms), headroom[s]!);
      headroom[s] = headroom[s]! - credited;
      return credited;
    });
    previous = now;
    out.push({ cause: causes[i]!, savedMs });
  }
  return out;
}

/** The findings of one device: the attributed causes worth listing, with their sentences, largest first. */
/**
 * `defaultStream`: how the trace's format tells the legacy default stream, in words (its row's
 * `words.defaultStream`), said where a finding rests on it.
 */
export function findingsOf(
  place: Pick<Finding, 'file' | 'device' | 'rank'>,
  defaultStream: string,
  evidence: DeviceEvidence,
  medianStepMs: number,
): Finding[] {
  return attribute(evidence)
    .flatMap(({ cause, savedMs }): Finding[] => {
      const found = savedMs.filter((ms) => ms > 0).length;
      const ms = mean(savedMs);
      if (!found || !(ms >= LEAST_SHARE * medianStepMs) || !(ms > 0)) return [];
      const label = labelOf(evidence.graph, cause.ops);
      return [
        {
          code: cause.code,
          ...place,
          ms,
          steps: found,
          label,
          message: sentence(cause, formatMs(ms), label, defaultStream),
        },
      ];
    })
    .sort((a, b) => b.ms - a.ms);
}

/** Each step's span in a replay: its first op's start to its last op's end. */
function stepSpans(time: Float64Array, members: readonly (readonly number[])[]): number[] {
  return members.map((ops) => {
    if (!ops.length) return 0;
    let start = Number.POSITIVE_INFINITY;
    let end = Number.NEGATIVE_INFINITY;
    for (const i of ops) {
      start = Math.min(start, time[opStart(i)]!);
      end = Math.max(end, time[opEnd(i)]!);
    }
    return end - start;
  });
}

function diff(before: readonly number[], after: readonly number[]): number[] {
  return before.map((b, s) => b - after[s]!);
}

function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

/** Two edits as one: both sets of dropped edges and added ones; where both set a duration or weight, the second's. */
export function combine(a: Edit, b: Edit): Edit {
  const maps = <K, V>(x?: ReadonlyMap<K, V>, y?: ReadonlyMap<K, V>) => new Map([...(x ?? []), ...(y ?? [])]);
  return {
    opDuration: maps(a.opDuration, b.opDuration),
    callDuration: maps(a.callDuration, b.callDuration),
    weight: maps(a.weight, b.weight),
    dropped: new Set([...(a.dropped ?? []), ...(b.dropped ?? [])]),
    added: [...(a.added ?? []), ...(b.added ?? [])],
  };
}

/** The label most of the cause's ops carry: the PyTorch op or range they come from. */
function labelOf(graph: ReplayGraph, ops: readonly number[]): string | null {
  const counts = new Map<string, number>();
  for (const i of ops) {
    const label = graph.ops[i]?.label;
    if (label) counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [label, count] of counts) if (best === null || count > counts.get(best)!) best = label;
  return best;
}

const FROM = (label: string | null) => (label ? ` (${label})` : '');

const times = (count: number) => (count === 1 ? 'once' : `${count} times`);

/** A finding's sentence: what was seen, what the step would save, and the change in the program's own terms. */
function sentence(cause: Cause, ms: string, label: string | null, defaultStream: string): string {
  const { facts } = cause;
  const streams = facts.streams.join(', ');
  const say: Readonly<Record<FindingCode, () => string>> = {
    'pageable-copy': () =>
      `${facts.count} cop${facts.count === 1 ? 'y' : 'ies'} from or to pageable host memory${FROM(label)} ran at ${formatRate(facts.observedGbPerSecond ?? 0)} ` +
      `and held the host until done; from pinned memory (at ${formatRate(facts.rateGbPerSecond ?? 0)}) the step would take ${ms} less. ` +
      'Pin the host tensors (tensor.pin_memory(), DataLoader(pin_memory=True)) and copy with non_blocking=True.',
    'default-stream': () =>
      `Work on the legacy default stream (${defaultStream})${FROM(label)} and on stream${facts.streams.length > 1 ? 's' : ''} ${streams}, which ` +
      'never ran beside it and so synchronise with it (created without cudaStreamNonBlocking, as CUDA C++ and CuPy make them), waited for each other ' +
      `${times(facts.count)}; with that work on a non-blocking stream (torch.cuda.Stream(), cudaStreamCreateWithFlags(…, cudaStreamNonBlocking)) the step would take ${ms} less.`,
    'serialised-copies': () =>
      `Copies of one direction on streams ${streams}${FROM(label)} waited for each other ${times(facts.count)} while the link had room; ` +
      `overlapped as far as the link allows, the step would take ${ms} less. Look for a wait between the copy streams (wait_stream, an event) that the data does not need.`,
    'copy-on-compute-stream': () =>
      `${facts.count} cop${facts.count === 1 ? 'y' : 'ies'} on stream ${streams}${FROM(label)}, which also runs the compute, hold the kernels around them; ` +
      `on a stream of their own (torch.cuda.Stream() with non_blocking=True, then compute_stream.wait_stream(copy_stream) and tensor.record_stream) ` +
      `the step would take ${ms} less.`,
    'exposed-communication': () =>
      `NCCL communication${FROM(label)} runs with no computation beside it; started earlier (DDP's buckets, bucket_cap_mb), the step would take ${ms} less.`,
    'host-sync': () =>
      `${facts.count === 1 ? 'A synchronize' : `${facts.count} synchronizes`} in the middle of a step${FROM(label)} (.item(), .cpu(), torch.cuda.synchronize()) ` +
      `${facts.count === 1 ? 'stops' : 'stop'} the host ` +
      `until the GPU drains, then the GPU waits for the host; without ${facts.count === 1 ? 'it' : 'them'} the step would take ${ms} less. ` +
      "Keep the value on the GPU, or read it back once at the step's end.",
    'host-bound': () =>
      `The GPU waits for its launches${FROM(label)}: ${facts.count} launch call${facts.count === 1 ? '' : 's'} issue the work one by one; issued at once from a CUDA graph ` +
      `(torch.cuda.graphs, torch.compile(mode="reduce-overhead")) the step would take ${ms} less.`,
  };
  return say[cause.code]();
}
