import type { BufferRole } from '../vocabulary.js';
import type { ModeResult, ModelAnalysis } from '../result/schema.js';
import { type Bound, type DeviceParts, idealMs, issuedOps, layoutBound, type LayoutShape } from './bound.js';
import { workloadFloor } from './floor.js';
import { explainGap } from './gap.js';

/** What the model needs to know of the pipeline besides the modes. */
export interface PipelineFacts {
  readonly buffers: ReadonlyArray<{ readonly role: BufferRole }>;
  readonly kernels: number;
  readonly copyEngines: number;
  readonly gated: boolean;
  /** The most chunks the elements allow (floor search range). */
  readonly maxChunks: number;
}

const median = (mode: ModeResult | undefined) => mode?.stats.median ?? 0;
const medianOf = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** Per op of a batch of small ops: GPU time (the fixed cost, behind the gate) and host issue time. */
function perOp(mode: ModeResult | undefined, batch: number): { gpuMs: number; hostMs: number } {
  if (!mode || batch <= 0) return { gpuMs: 0, hostMs: 0 };
  return { gpuMs: mode.stats.median / batch, hostMs: medianOf(mode.hostIssueMs) / batch };
}

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
  const copies = [up, down].filter((c) => c.hostMs > 0);
  return {
    h2dMs: median(h2d), d2hMs: median(d2h),
    kernelWholeMs: modes.filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel').reduce((sum, m) => sum + m.stats.median, 0),
    h2dBytes: h2d?.bytes.h2d ?? 0, d2hBytes: d2h?.bytes.d2h ?? 0,
    h2dCopiesPerChunk: facts.buffers.filter((b) => b.role === 'in' || b.role === 'inout').length,
    d2hCopiesPerChunk: facts.buffers.filter((b) => b.role === 'out' || b.role === 'inout').length,
    kernelsPerChunk: facts.kernels,
    linkMs: link ? link.stats.median : null,
    linkPieces: link?.role.kind === 'link' ? link.role.copiesPerDirection : 0,
    copyEngines: facts.copyEngines,
    h2dOpMs: up.gpuMs, d2hOpMs: down.gpuMs, launchOpMs: launch.gpuMs,
    hostCopyMs: copies.length ? copies.reduce((s, c) => s + c.hostMs, 0) / copies.length : 0,
    hostLaunchMs: launch.hostMs,
    gated: facts.gated,
  };
}

/**
 * The model's bound for one overlapped mode, the workload's floor, and the gap split into causes. The host's
 * per-op costs are scaled so that they predict this layout's measured issue time, then used for the other layouts.
 */
export function modelAnalysis(mode: ModeResult, modes: readonly ModeResult[], facts: PipelineFacts, smallOpBatch: number): { bound: Bound; model: ModelAnalysis } | null {
  if (mode.role.kind !== 'overlapped') return null;
  const { chunks, streams } = mode.role.layout;
  const onDevice = modes.filter((m) => m.device === mode.device);
  const chunked = onDevice.find((m) => m.role.kind === 'kernels-chunked' && m.role.layout.chunks === chunks && m.role.layout.streams === streams);
  const raw = deviceParts(onDevice, facts, smallOpBatch);
  const hostIssueMs = medianOf(mode.hostIssueMs);
  const layout: LayoutShape = { chunks, streams, kernelsChunkedMs: chunked ? chunked.stats.median : null, hostIssueMs };
  const ops = issuedOps(raw, layout);
  const predictedIssue = (ops.copies + ops.sync) * raw.hostCopyMs + ops.launches * raw.hostLaunchMs;
  const scale = predictedIssue > 0 && hostIssueMs > 0 ? hostIssueMs / predictedIssue : 1;
  const parts: DeviceParts = { ...raw, hostCopyMs: raw.hostCopyMs * scale, hostLaunchMs: raw.hostLaunchMs * scale };
  const bound = layoutBound(parts, layout);
  const floor = workloadFloor(parts, layout, facts.maxChunks);
  const ideal = idealMs(parts);
  return {
    bound,
    model: {
      parts, kernelsChunkedMs: layout.kernelsChunkedMs, hostIssueMs, ops, idealMs: ideal,
      floor: { chunks: floor.chunks, streams: floor.streams, ms: floor.bound.ms, limitedBy: floor.bound.term },
      gap: explainGap(mode.stats.median, bound, ideal),
    },
  };
}
