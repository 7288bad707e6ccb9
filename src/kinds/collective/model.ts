import { splitRanges } from '../../chunking.js';
import { formatMs } from '../../format.js';
import type { Bound, BoundCandidate } from '../../model/bound.js';
import type { ModeResult } from '../../model/mode.js';
import type { Collective } from '../../vocabulary.js';
import type { KindTerm, TermContext, TermWords } from '../api/index.js';
import { callMs, type CollectiveSample, fitAlphaBeta, type StepBound, stepBound } from './buckets.js';

// The collective's term in the overlap bound (the contract's `term`): the bucket model of ./buckets.ts at a layout's
// chunk
// count, each chunk a bucket, from the collective alone as measured beside the layout. The same step the report's
// communication section gives, so that a Result has one bound and one efficiency.

const NAMES: Record<Collective, string> = {
  allreduce: 'all-reduce',
  reducescatter: 'reduce-scatter',
  allgather: 'all-gather',
};

/** The collective alone at one bucket count: its calls a rep, their per-rank bytes together, its fastest rep. */
export interface AloneSample extends CollectiveSample {
  readonly collective: Collective;
}

const fastest = (values: readonly number[]) => values.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);

/**
 * The collective alone, once per bucket count it was measured at, of the first collective found (a config runs
 * one). Files from before a mode carried its calls count one call over the whole buffer.
 */
export function aloneSamples(modes: readonly ModeResult[]): AloneSample[] {
  const samples: AloneSample[] = [];
  for (const m of modes) {
    if (m.role.kind !== 'stage' || m.role.stage !== 'collective' || !m.samplesMs.length) continue;
    const collective = m.collective?.collective ?? (m.role.collective as Collective);
    const sample = {
      collective,
      calls: m.collective?.calls ?? m.role.buckets ?? 1,
      bytes: m.collective?.bytes ?? m.bytes.collective ?? 0,
      ms: fastest(m.samplesMs),
    };
    if (sample.bytes > 0 && (!samples.length || samples[0]?.collective === collective)) samples.push(sample);
  }
  return samples;
}

/** Whether a mode runs collectives: the kind counts their bytes into its `bytes.collective`. */
export const holdsCollectives = (mode: Pick<ModeResult, 'bytes'>) => (mode.bytes.collective ?? 0) > 0;

/**
 * A call's least time over `bytes` that every sample allows, whatever its fixed cost α ≥ 0 and bandwidth: a sample
 * of B₀ calls taking A together has α·B₀ + β·S = A, so a call of x bytes takes at least A·x/S (α = 0) where x is at
 * most a sample call's size, and at least A/B₀ (β = 0) where it is larger.
 */
export function leastCallMs(samples: readonly AloneSample[], bytes: number): number {
  return samples.reduce((least, s) => Math.max(least, Math.min((s.ms * bytes) / s.bytes, s.ms / s.calls)), 0);
}

/**
 * What one call over `bytes` costs with the layers cut into `buckets` buckets: the collective alone at that bucket
 * count where it was measured (its calls share its fastest rep by bytes); at the layout's own count otherwise the
 * least every sample allows (a floor); at another count the α–β fit over two message sizes or more, never below that
 * floor; null where nothing predicts it (one message size: α cannot be told from the bandwidth).
 */
export function bucketCost(
  samples: readonly AloneSample[],
  buckets: number,
  own: boolean,
): ((bytes: number) => number) | null {
  const measured = samples.find((s) => s.calls === buckets);
  if (measured) return (bytes) => (measured.ms * bytes) / measured.bytes;
  if (own) return (bytes) => leastCallMs(samples, bytes);
  const [first] = samples;
  const fit = first ? fitAlphaBeta(first.collective, 1, samples) : null;
  return fit ? (bytes) => Math.max(callMs(fit, bytes), leastCallMs(samples, bytes)) : null;
}

/** The layout's chunk count, or null for a mode that is not a layout. */
const ownChunks = (mode: ModeResult) => (mode.role.kind === 'overlapped' ? mode.role.layout.chunks : null);

/**
 * The bucket model's step for `mode`'s workload cut into `chunks` buckets; null where the collective alone cannot say.
 */
export function bucketStep(mode: ModeResult, chunks: number, context: TermContext): StepBound | null {
  const samples = aloneSamples(context.modes);
  const [first] = samples;
  if (!first || !(context.items > 0)) return null;
  const buckets = splitRanges(context.items, chunks).length;
  const cost = bucketCost(samples, buckets, chunks === ownChunks(mode));
  return cost
    ? stepBound({ layers: context.items, computeMs: context.computeMs, gradientBytes: first.bytes }, chunks, cost)
    : null;
}

/**
 * The bound with the bucket model's step beside the GPU's terms: its collectives and compute as one term,
 * `communication`, whose time above the compute alone is the communication the compute does not hide. A mode without
 * collectives keeps the GPU's bound; one whose collective alone was not measured keeps it at its own chunk count and
 * predicts no other.
 */
export function bucketBound(gpu: Bound, mode: ModeResult, chunks: number, context: TermContext): Bound | null {
  if (!holdsCollectives(mode)) return gpu;
  const step = bucketStep(mode, chunks, context);
  if (!step) return chunks === ownChunks(mode) ? gpu : null;
  const term: BoundCandidate = { term: 'communication', steadyMs: step.ms, perOpMs: 0, fillDrainMs: 0, ms: step.ms };
  const terms = [...gpu.terms, term];
  return term.ms > gpu.ms ? { ...term, terms } : { ...gpu, terms };
}

const nameOf = (context: TermContext) => NAMES[aloneSamples(context.modes)[0]?.collective ?? 'allreduce'];
const buckets = (n: number) => `${n} bucket${n === 1 ? '' : 's'}`;

const words: TermWords = {
  holds: holdsCollectives,
  layout: buckets,
  change: (from, to) => `use ${buckets(to)}, pipeline.chunks ${to} (now ${from})`,
  limit(mode, chunks, context) {
    const step = bucketStep(mode, chunks, context);
    const name = nameOf(context);
    if (!step) return `the ${name}s (the collective alone was not measured)`;
    return step.limitedBy === 'compute'
      ? `the compute, then the last bucket's ${name} (${formatMs(step.lastCommMs)})`
      : `the ${name}s back to back (${formatMs(step.commMs)}) after the first bucket's compute`;
  },
  unpredicted(_mode, context) {
    const samples = aloneSamples(context.modes);
    const name = nameOf(context);
    if (!samples.length) return `the ${name} alone was not measured, so no other bucket count is predicted`;
    if (new Set(samples.map((s) => s.bytes / s.calls)).size > 1) return null;
    const [only] = samples;
    // One message size cannot tell a call's fixed cost from its bandwidth.
    return `the ${name} alone was measured in ${buckets(only?.calls ?? 1)} only: sweep pipeline.chunks to predict others`;
  },
  leavesOut: "NCCL's kernels sharing the SMs with the compute, which the bucket model leaves out",
};

/** The collective's term and words (the contract's `term`). */
export const bucketTerm: KindTerm = { bound: bucketBound, words };
