import { formatBytes, formatMs, formatUs } from '../format.js';
import { median } from '../quantile.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import { kindModeLines } from '../kinds/index.js';
import type { DefaultStreamOp, IssueCostOp, LayoutVariant, OverlapLayout } from '../vocabulary.js';

// What the stream toolbox's variants showed, each against its twin (the same layout without the variant), in
// words every renderer prints alike. Drawn from the Result alone.

const layoutOf = (mode: ModeResult): OverlapLayout | null =>
  mode.role.kind === 'overlapped' ? mode.role.layout : null;

const sameLayout = (a: OverlapLayout, b: OverlapLayout) =>
  a.chunks === b.chunks &&
  a.streams === b.streams &&
  a.order === b.order &&
  a.topology === b.topology &&
  a.slots === b.slots &&
  a.issue === b.issue &&
  a.host === b.host &&
  sameOp(a.legacyOp, b.legacyOp) &&
  sameOp(a.perThreadOp, b.perThreadOp);

const sameOp = (a: DefaultStreamOp | undefined, b: DefaultStreamOp | undefined) =>
  a?.chunk === b?.chunk && a?.op === b?.op;

/** The mode whose layout is `mode`'s without `variant`. */
export function twinWithout(mode: ModeResult, variant: LayoutVariant, modes: readonly ModeResult[]): ModeResult | null {
  const layout = layoutOf(mode);
  if (!layout || layout[variant] === undefined) return null;
  const { [variant]: _dropped, ...rest } = layout;
  return (
    modes.find((m) => {
      const other = layoutOf(m);
      return m.device === mode.device && other !== null && sameLayout(other, rest as OverlapLayout);
    }) ?? null
  );
}

/** The host issue loop's median against the GPU's: above this share, issuing is what the rep waited for. */
const ISSUE_BOUND_SHARE = 0.8;

/** Which side limited a stream-issued mode: the host issuing it, or the GPU running it. */
export function limitingSide(mode: ModeResult): { side: 'host issue' | 'GPU'; issueMs: number } {
  const issueMs = mode.hostIssueMs.length ? median(mode.hostIssueMs) : 0;
  return { side: issueMs >= ISSUE_BOUND_SHARE * mode.stats.median ? 'host issue' : 'GPU', issueMs };
}

function graphLine(mode: ModeResult, modes: readonly ModeResult[]): string | null {
  const stream = twinWithout(mode, 'issue', modes);
  if (!stream) return null;
  const gain = stream.stats.median / mode.stats.median;
  const { side, issueMs } = limitingSide(stream);
  const setup = mode.graph;
  const saved = stream.stats.median - mode.stats.median;
  const once = setup
    ? `; capture ${formatMs(setup.captureMs)} and instantiate ${formatMs(setup.instantiateMs)}, once` +
      (saved > 0 ? ` (repaid after ${Math.ceil((setup.captureMs + setup.instantiateMs) / saved)} reps)` : '')
    : '';
  const why =
    side === 'host issue'
      ? `stream-issued, the host took ${formatMs(issueMs)} to issue a rep of ${formatMs(stream.stats.median)}: host issue limited it, and the graph removes that`
      : `stream-issued, issuing took ${formatMs(issueMs)} of ${formatMs(stream.stats.median)}: the GPU side limited it, which a graph does not change`;
  return `graph replay: ${formatMs(mode.stats.median)} vs ${formatMs(stream.stats.median)} stream-issued (${gain.toFixed(2)}×)${once}; ${why}`;
}

const DEFAULT_STREAM_WORDS = {
  legacyOp: { stream: 'legacy default stream', handle: 'cudaStreamLegacy' },
  perThreadOp: { stream: 'per-thread default stream', handle: 'cudaStreamPerThread' },
} as const;

/**
 * What one op on a default stream cost the layout against its twin without it. The two variants of one config get
 * one line each, in the same words, so the legacy stream's barrier and the per-thread stream's lack of one read side
 * by side.
 */
function defaultStreamLine(
  mode: ModeResult,
  result: RunResult,
  variant: keyof typeof DEFAULT_STREAM_WORDS,
): string | null {
  const layout = layoutOf(mode);
  const moved = layout?.[variant];
  if (!layout || !moved) return null;
  const without = twinWithout(mode, variant, result.modes);
  if (!without) return null;
  const lost = mode.stats.median - without.stats.median;
  const serial = result.modes.find((m) => m.role.kind === 'serial' && m.device === mode.device);
  const saved = serial ? serial.stats.median - without.stats.median : null;
  const share = saved && saved > 0 ? ` (${((100 * lost) / saved).toFixed(0)}% of what overlap saved)` : '';
  const speedups =
    serial && mode.analysis && without.analysis
      ? `; speedup over serial ${without.analysis.speedup.toFixed(2)}× → ${mode.analysis.speedup.toFixed(2)}×`
      : '';
  const words = DEFAULT_STREAM_WORDS[variant];
  return (
    `${words.stream}: chunk ${moved.chunk}'s ${moved.op === 'h2d' ? 'H2D' : moved.op} on ${words.handle} made the ${layout.order} layout ` +
    `${formatMs(without.stats.median)} → ${formatMs(mode.stats.median)}: ${lost > 0 ? `${formatMs(lost)} of overlap lost${share}` : 'no overlap lost'}${speedups}`
  );
}

/** The urgent kernels' latency with and without priorities, and what they cost the pipeline beside them. */
function latencyLine(result: RunResult): string | null {
  const latency = result.modes.filter((m) => m.role.kind === 'latency' && m.latency);
  const withP = latency.find((m) => m.role.kind === 'latency' && m.role.priorities);
  const without = latency.find((m) => m.role.kind === 'latency' && !m.role.priorities);
  if (!withP?.latency || !without?.latency || withP.role.kind !== 'latency') return null;
  const alone = result.modes.find((m) => m.role.kind === 'overlapped' && m.device === withP.device);
  const stats = (l: NonNullable<ModeResult['latency']>) => `median ${formatUs(l.medianMs)}, p99 ${formatUs(l.p99Ms)}`;
  const background = alone
    ? `; the pipeline ${formatMs(alone.stats.median)} alone, ${formatMs(withP.stats.median)} beside them with priorities ` +
      `(${(100 * (withP.stats.median / alone.stats.median - 1)).toFixed(1)}%), ${formatMs(without.stats.median)} without`
    : '';
  return (
    `latency of ${withP.role.kernel} on the urgent stream over ${withP.latency.n} launches: ${stats(withP.latency)} with priorities, ` +
    `${stats(without.latency)} without${background}`
  );
}

function memoryLine(result: RunResult): string | null {
  const memory = result.deviceMemory;
  if (!memory || (memory.budgetBytes === null && memory.ring === null)) return null;
  const hostBytes = result.buffers.filter((b) => b.role !== 'scratch').reduce((sum, b) => sum + b.bytes, 0);
  return (
    `device memory: ${memory.budgetBytes === null ? 'no budget' : `budget ${formatBytes(memory.budgetBytes)}`}; ` +
    `allocated ${formatBytes(memory.askedBytes)} (cudaMemGetInfo saw ${formatBytes(memory.measuredBytes)} go)` +
    (memory.ring ? ` for a ring of ${memory.ring.slots} slots of ${memory.ring.slotElements} elements` : '') +
    `, streaming ${formatBytes(hostBytes)} of host buffers`
  );
}

/** Every toolbox line the result calls for, in mode order. */
export function toolboxLines(result: RunResult): string[] {
  const lines: string[] = [];
  for (const mode of result.modes) {
    if (mode.role.kind !== 'overlapped') continue;
    lines.push(
      ...[
        mode.role.layout.issue ? graphLine(mode, result.modes) : null,
        ...kindModeLines(mode, result, { twinWithout: (m, variant) => twinWithout(m, variant, result.modes) }),
        defaultStreamLine(mode, result, 'perThreadOp'),
        defaultStreamLine(mode, result, 'legacyOp'),
      ].filter((line): line is string => line !== null),
    );
  }
  return [...lines, ...[latencyLine(result), memoryLine(result)].filter((line): line is string => line !== null)];
}

/** What events cost the host in this run, per op, beside the pipeline that issues them. */
export function eventCostLines(result: RunResult): string[] {
  const costs = result.modes.flatMap((m) =>
    m.role.kind === 'issue-cost' && m.issueCost ? [{ op: m.role.op, ...m.issueCost }] : [],
  );
  if (!costs.length) return [];
  const names: Record<IssueCostOp, string> = {
    'record-timing': 'record with timing',
    'record-untimed': 'record without timing',
    wait: 'cross-stream wait',
    launch: 'launch',
    copy: 'small copy',
  };
  return [
    `events cost the host (median µs per op, ${costs[0]?.opsPerRep ?? 0} a batch): ` +
      costs.map((c) => `${names[c.op]} ${c.hostUsPerOp.toFixed(2)} µs`).join(', '),
  ];
}
