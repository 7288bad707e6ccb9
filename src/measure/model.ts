import { gbPerSecond } from '../format.js';
import { median } from '../quantile.js';
import type { BufferRole, HostMemoryKind, OverlapLayout, StreamKind } from '../vocabulary.js';
import { type ClockMatch, clockFactor, clockMatch } from '../clocks.js';
import { KIND_TERMS, kindMeasured, MODEL_RESOURCES, type TermContext, termWords } from '../kinds/index.js';
import type { ModeResult } from '../model/mode.js';
import { serialMismatch } from '../result/likeness.js';
import type { ModelAnalysis, Serialiser } from '../model/analysis.js';
import { adviceFor, bestIsBetter, SAME_LAYOUT } from './advice.js';
import { type Bound, type DeviceParts, idealMs, issuedOps, layoutBound, type LayoutShape, syncOps } from './bound.js';
import { type KindTerms, predictedFloor } from './floor.js';
import { explainGap } from './gap.js';

// Every part comes from the modes measured beside the bounded one, never from it, and from the best of its samples
// (the minimum): noise only ever slows a rep, so noise in a part can lower the bound but never lift it.

/** What the model needs to know of the pipeline besides the modes. */
export interface PipelineFacts {
  readonly buffers: ReadonlyArray<{ readonly role: BufferRole; readonly hostMemory?: HostMemoryKind | 'device-only' }>;
  readonly kernels: number;
  readonly copyEngines: number;
  readonly gated: boolean;
  /** The most chunks the elements allow (floor search range). */
  readonly maxChunks: number;
  /** The items (or elements) the chunks cut: a collective's layers; absent: `maxChunks`. */
  readonly items?: number;
}

/** What the bounded layout's own streams are: their kinds, and whether one op runs on the legacy default stream. */
export interface LayoutStreams {
  readonly kinds: readonly StreamKind[];
  readonly legacyOp: boolean;
}

const fastest = (values: readonly number[]) => (values.length ? Math.min(...values) : 0);
const best = (mode: ModeResult | undefined) => (mode ? fastest(mode.samplesMs) : 0);

/**
 * Per op of a batch of small ops, from its fastest rep: GPU time (the fixed cost, behind the gate) and host issue time.
 */
function perOp(mode: ModeResult | undefined, batch: number): { gpuMs: number; hostMs: number } {
  if (!mode || batch <= 0) return { gpuMs: 0, hostMs: 0 };
  return { gpuMs: best(mode) / batch, hostMs: fastest(mode.hostIssueMs) / batch };
}

/** The host cost of the cheapest of an event record or a stream wait, from the issue-cost batches; 0 without them. */
function hostSyncMs(modes: readonly ModeResult[]): number {
  const costs = modes.flatMap((m) =>
    m.role.kind === 'issue-cost' &&
    m.role.op !== 'launch' &&
    m.role.op !== 'copy' &&
    m.issueCost &&
    m.hostIssueMs.length
      ? [fastest(m.hostIssueMs) / m.issueCost.opsPerRep]
      : [],
  );
  return costs.length ? Math.min(...costs) : 0;
}

/**
 * The least host cost per op that a loop measured apart from the bounded mode shows, counting every op it might have
 * issued (so the cost comes out low, never high): the kernels chunked (stream-issued) issue launches and their
 * streams' records and waits, the link copies and its records and waits. On the H200 the 200-launch batch behind the
 * gate cost 3.97 µs a launch while 1,024 launches over 4 streams cost 3.15 µs each: a batch alone is no floor.
 */
function loopHostPerOp(
  modes: readonly ModeResult[],
  kernels: number,
  copiesPerPiece: number,
): { launchMs: number; copyMs: number } {
  let launchMs = Infinity;
  let copyMs = Infinity;
  for (const m of modes) {
    if (!m.hostIssueMs.length) continue;
    if (m.role.kind === 'kernels-chunked' && (m.role.layout.issue ?? 'stream') === 'stream' && kernels > 0) {
      launchMs = Math.min(
        launchMs,
        fastest(m.hostIssueMs) / (m.role.layout.chunks * kernels + syncOps(m.role.layout.streams)),
      );
    }
    if (m.role.kind === 'link' && copiesPerPiece > 0) {
      // Two streams a direction: at most 4 streams forked and joined.
      copyMs = Math.min(copyMs, fastest(m.hostIssueMs) / (m.role.copiesPerDirection * copiesPerPiece + syncOps(4)));
    }
  }
  return { launchMs, copyMs };
}

/** The least positive of the candidates, 0 when there is none. */
const leastPositive = (...values: number[]) => {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  return positive.length ? Math.min(...positive) : 0;
};

/** The device's parts of the model, from the modes measured on it. */
export function deviceParts(modes: readonly ModeResult[], facts: PipelineFacts, smallOpBatch: number): DeviceParts {
  const stage = (stage: string) => modes.find((m) => m.role.kind === 'stage' && m.role.stage === stage);
  const opCost = (op: string) => modes.find((m) => m.role.kind === 'op-cost' && m.role.op === op);
  const link = modes.find((m) => m.role.kind === 'link');
  const h2d = stage('h2d');
  const d2h = stage('d2h');
  const launch = perOp(opCost('launch'), smallOpBatch);
  const up = perOp(opCost('h2d'), smallOpBatch);
  const down = perOp(opCost('d2h'), smallOpBatch);
  const h2dCopiesPerChunk = facts.buffers.filter((b) => b.role === 'in' || b.role === 'inout').length;
  const d2hCopiesPerChunk = facts.buffers.filter((b) => b.role === 'out' || b.role === 'inout').length;
  const loops = loopHostPerOp(modes, facts.kernels, h2dCopiesPerChunk + d2hCopiesPerChunk);
  return {
    h2dMs: best(h2d),
    d2hMs: best(d2h),
    kernelWholeMs: modes
      .filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel')
      .reduce((sum, m) => sum + best(m), 0),
    h2dBytes: h2d?.bytes.h2d ?? 0,
    d2hBytes: d2h?.bytes.d2h ?? 0,
    h2dCopiesPerChunk,
    d2hCopiesPerChunk,
    kernelsPerChunk: facts.kernels,
    linkMs: link ? best(link) : null,
    linkPieces: link?.role.kind === 'link' ? link.role.copiesPerDirection : 0,
    copyEngines: facts.copyEngines,
    h2dOpMs: up.gpuMs,
    d2hOpMs: down.gpuMs,
    launchOpMs: launch.gpuMs,
    hostCopyMs: leastPositive(up.hostMs, down.hostMs, loops.copyMs),
    hostLaunchMs: leastPositive(launch.hostMs, loops.launchMs),
    hostSyncMs: hostSyncMs(modes),
    gated: facts.gated,
  };
}

const SHARED_STREAMS: readonly StreamKind[] = ['per-thread-default', 'legacy-default'];

/** True when the layout's streams are all one stream: each the per-thread default, or each the legacy default. */
export function oneStream(streams: LayoutStreams): boolean {
  const [first] = streams.kinds;
  return (
    streams.kinds.length > 1 &&
    first !== undefined &&
    SHARED_STREAMS.includes(first) &&
    streams.kinds.every((k) => k === first)
  );
}

/** What in this layout runs ops one after another that the model takes as concurrent. */
export function serialisersOf(streams: LayoutStreams, buffers: PipelineFacts['buffers']): Serialiser[] {
  const found: Serialiser[] = [];
  if (oneStream(streams) && streams.kinds[0] === 'per-thread-default') found.push('per-thread default stream');
  if (streams.legacyOp || streams.kinds.includes('legacy-default')) found.push('legacy default stream');
  if (buffers.some((b) => b.hostMemory === 'pageable')) found.push('pageable memory');
  return found;
}

/** What the model needs of a layout's streams: whether they are all one stream, and what in it serialises ops. */
export interface StreamFacts {
  readonly oneStream: boolean;
  readonly serialisers: readonly Serialiser[];
}

/** A layout's stream facts from its streams' kinds (at run time, from the schedule). */
export function streamFacts(streams: LayoutStreams, buffers: PipelineFacts['buffers']): StreamFacts {
  return { oneStream: oneStream(streams), serialisers: serialisersOf(streams, buffers) };
}

/**
 * The kernel parts of a bound (each kernel alone, the kernels chunked as the layout runs them), whose SM clock counts.
 */
const kernelParts = (modes: readonly ModeResult[], chunked: ModeResult | undefined) => [
  ...modes.filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel'),
  ...(chunked ? [chunked] : []),
];

/**
 * The device's parts at the bounded mode's SM clock: where every kernel part ran at a clock apart from the mode's
 * (`rebuilt`), each kernel's time is put at the mode's, as a floor (its fewest cycles at the mode's highest clock).
 */
function atModeClock(parts: DeviceParts, modes: readonly ModeResult[], clocks: ClockMatch): DeviceParts {
  if (clocks.status !== 'rebuilt') return parts;
  const kernels = modes.filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel');
  return { ...parts, kernelWholeMs: kernels.reduce((sum, m) => sum + best(m) * clockFactor(clocks, m.smClockMHz), 0) };
}

/**
 * Another layout of the same variants on the mode's device at `at`'s chunks (and streams, where they are a count of
 * their own: not for stage per stream, nor where a kind's words count chunks alone) that was measured no faster than
 * `mode`, whose layout is `own`; null where none was.
 */
function measuredNoFaster(
  mode: ModeResult,
  own: OverlapLayout,
  modes: readonly ModeResult[],
  at: { chunks: number; streams: number },
  chunksAlone: boolean,
): ModeResult | null {
  const sameVariants = (l: OverlapLayout) =>
    l.order === own.order &&
    l.topology === own.topology &&
    l.issue === own.issue &&
    l.host === own.host &&
    l.slots === own.slots &&
    !l.legacyOp &&
    !l.perThreadOp;
  const found = modes.find(
    (m) =>
      m.device === mode.device &&
      m.id !== mode.id &&
      m.role.kind === 'overlapped' &&
      sameVariants(m.role.layout) &&
      m.role.layout.chunks === at.chunks &&
      (chunksAlone || own.topology === 'stage-per-stream' || m.role.layout.streams === at.streams),
  );
  return found && found.stats.median >= mode.stats.median * (1 - SAME_LAYOUT) ? found : null;
}

/**
 * The model's bound for one overlapped mode, the workload's floor, the gap split into causes and the advice. The
 * bound is built from the other modes of the mode's device only: the stages, the link and the small ops apart from any
 * layout, and the kernels chunked as this layout runs them and issued the same way (a graph replay against the
 * kernels replayed as a graph), with each kind's term beside them (the CPU stage, a collective's buckets); the kernel
 * parts at the mode's SM clock where they ran at another. Streams that are all one stream count as one.
 */
export function modelAnalysis(
  mode: ModeResult,
  modes: readonly ModeResult[],
  facts: PipelineFacts,
  smallOpBatch: number,
  layoutStreams: StreamFacts | LayoutStreams | null = null,
): { bound: Bound; model: ModelAnalysis } | null {
  if (mode.role.kind !== 'overlapped') return null;
  const streams = layoutStreams && 'kinds' in layoutStreams ? streamFacts(layoutStreams, facts.buffers) : layoutStreams;
  const own = mode.role.layout;
  const { chunks, topology } = own;
  const issue = own.issue ?? 'stream';
  const onDevice = modes.filter((m) => m.device === mode.device && m.id !== mode.id);
  const chunked = onDevice.find(
    (m) =>
      m.role.kind === 'kernels-chunked' &&
      m.role.layout.chunks === chunks &&
      m.role.layout.streams === own.streams &&
      (m.role.layout.issue ?? 'stream') === issue,
  );
  const clocks = clockMatch(
    mode.smClockMHz,
    kernelParts(onDevice, chunked).map((m) => m.smClockMHz),
  );
  const parts = atModeClock(deviceParts(onDevice, facts, smallOpBatch), onDevice, clocks);
  // Stage per stream puts each stage, not each chunk, on a stream: no stream runs a chunk's stages in sequence.
  const independent = topology === 'stage-per-stream' ? chunks : streams?.oneStream ? 1 : own.streams;
  const kernelsChunkedMs = chunked ? best(chunked) * clockFactor(clocks, chunked.smClockMHz) : null;
  const layout: LayoutShape = { chunks, streams: independent, issue, kernelsChunkedMs };
  const context: TermContext = {
    modes: onDevice,
    computeMs: MODEL_RESOURCES.filter((r) => r.estimate === 'alone').reduce(
      (sum, r) => sum + r.measured(parts).wholeMs,
      0,
    ),
    items: facts.items ?? facts.maxChunks,
  };
  // Each kind with a term of its own beside the GPU's adds it (the CPU stage from what the mode measured; a
  // collective's buckets from the collective alone); at the mode's own chunk count every kind gives one.
  const terms: KindTerms = (gpu, at) =>
    KIND_TERMS.reduce<Bound | null>((b, term) => (b ? term.bound(b, mode, at, context) : null), gpu);
  const gpu = layoutBound(parts, layout);
  const bound = terms(gpu, chunks) ?? gpu;
  // Serial runs the host stage a layout without it lacks: its time bounds nothing of that layout.
  const serial =
    serialMismatch(mode, modes)?.kind === 'without-stage' ? undefined : onDevice.find((m) => m.role.kind === 'serial');
  const here = { chunks, streams: own.streams, bound };
  const found = predictedFloor(parts, layout, facts.maxChunks, serial ? best(serial) : null, terms) ?? here;
  // A layout the model predicts no faster than this one is this one, and so is one this Result measured no faster (a
  // sweep's): the best-layout line and the advice name it.
  const overruled = bestIsBetter(found.bound, bound)
    ? measuredNoFaster(mode, own, modes, found, termWords(mode) !== null)
    : null;
  // A host stage on the JS thread has no term: the model predicts its GPU's side alone, no layout to change to.
  const unmodelled = own.host !== undefined && !kindMeasured(mode);
  const floor = bestIsBetter(found.bound, bound) && !overruled && !unmodelled ? found : here;
  // The ideal is what no layout can beat: never above the workload's floor, which is never above serial.
  const ideal = Math.min(idealMs(parts, kernelsChunkedMs), floor.bound.ms);
  const words = termWords(mode);
  const limitWords = (b: Bound, at: number) =>
    words && b.term === 'communication' ? words.limit(mode, at, context) : null;
  const model: ModelAnalysis = {
    parts,
    kernelsChunkedMs,
    hostIssueMs: mode.hostIssueMs.length ? median(mode.hostIssueMs) : 0,
    ops: issuedOps(parts, layout),
    idealMs: ideal,
    floor: {
      chunks: floor.chunks,
      streams: floor.streams,
      ms: floor.bound.ms,
      limitedBy: floor.bound.term,
      ...(overruled
        ? {
            overruled: {
              chunks: found.chunks,
              streams: found.streams,
              predictedMs: found.bound.ms,
              measuredMs: overruled.stats.median,
            },
          }
        : {}),
    },
    gap: explainGap(mode.stats.median, bound, ideal),
    statistic: 'min',
    ...(streams ? { serialisers: [...streams.serialisers] } : {}),
    clocks,
    ...(words
      ? {
          words: {
            layout: words.layout(chunks),
            best: words.layout(floor.chunks),
            limit: limitWords(bound, chunks),
            bestLimit: limitWords(floor.bound, floor.chunks),
            unpredicted: words.unpredicted(mode, context),
            ...(overruled ? { overruled: words.layout(found.chunks) } : {}),
          },
        }
      : {}),
  };
  const link = onDevice.find((m) => m.role.kind === 'link');
  const linkGbPerSecond = link ? gbPerSecond(link.bytes.h2d + link.bytes.d2h, link.stats.min) : null;
  return {
    bound,
    model: {
      ...model,
      advice: adviceFor(mode, model, { bound, linkGbPerSecond, words, limit: model.words?.limit ?? null }),
    },
  };
}
