import { boundLinkRate, formatMs, formatUs } from '../format.js';
import { kindMeasured, type TermWords } from '../kinds/index.js';
import type { ModeResult } from '../model/mode.js';
import type { OverlapLayout } from '../vocabulary.js';
import type { AdviceRecord, ModelAnalysis } from '../model/analysis.js';
import type { Bound } from './bound.js';
import { type GapPart, topCause } from './gap.js';

// The model's advice for one overlapped mode, as a value: the largest cause of the time it lost against the
// workload's ideal, why, the change that helps and what it is predicted to save. `run` stores it and `report` computes
// it again from the measured modes; the renderers print it. A change never names this layout, nor one the model
// predicts no faster: what it names is what the best-layout line names.

/** A layout the model predicts faster than this one by less than this share is the same layout to it. */
export const SAME_LAYOUT = 0.01;

/** What the advice reads of a mode's model besides its bound. */
export type AdviceModel = Pick<
  ModelAnalysis,
  'parts' | 'ops' | 'hostIssueMs' | 'kernelsChunkedMs' | 'idealMs' | 'floor' | 'gap' | 'serialisers'
>;

/** What the advice is given beyond the mode and its model: its bound, and the words of a kind whose term is in it. */
export interface AdviceContext {
  readonly bound: Bound;
  readonly linkGbPerSecond: number | null;
  /** The kind's words where its term is in the bound (a collective's buckets); null: chunks × streams. */
  readonly words: TermWords | null;
  /** Its words for what limits this layout, where its term does. */
  readonly limit: string | null;
}

/**
 * Whether the model's best layout is faster than this one by more than SAME_LAYOUT: only then does a change name
 * it. Where it is not, the best-layout line names this layout.
 */
export function bestIsBetter(floor: Pick<ModelAnalysis['floor'], 'ms'>, bound: Pick<Bound, 'ms'>): boolean {
  return floor.ms < bound.ms * (1 - SAME_LAYOUT);
}

/** The change to the model's best layout in the words of the config: chunks and streams, or the kind's (buckets). */
function layoutChange(own: OverlapLayout, floor: ModelAnalysis['floor'], words: TermWords | null): string | null {
  const { chunks, streams, topology } = own;
  // Serial as one chunk on one stream is this layout where it is one chunk on one stream.
  if (floor.chunks === chunks && (floor.streams === streams || words || chunks === 1)) return null;
  if (words) return words.change(chunks, floor.chunks);
  if (floor.limitedBy === 'serial') return `run it serially, as one chunk (now ${chunks})`;
  // Stage per stream runs every chunk on its own stream already: its streams are no count to change.
  const streamsDiffer = topology === 'chunk-per-stream' && floor.streams !== streams;
  const over = `${floor.streams} stream${floor.streams === 1 ? '' : 's'}`;
  if (floor.chunks !== chunks)
    return streamsDiffer
      ? `use ${floor.chunks} chunks × ${over} (now ${chunks} × ${streams})`
      : `use ${floor.chunks} chunks (now ${chunks})`;
  return streamsDiffer ? `use ${over} (now ${streams})` : null;
}

/** What removing the binding term would save in the bound: the bound less the next largest term. */
function termSaving(bound: Bound): number {
  const others = bound.terms.filter((t) => t.term !== bound.term).map((t) => t.ms);
  return Math.max(0, bound.ms - Math.max(0, ...others));
}

const clamp = (ms: number, most: number) => Math.max(0, Math.min(ms, most));

/** The advice for `mode`: null where nothing is lost against the ideal. */
export function adviceFor(mode: ModeResult, model: AdviceModel, context: AdviceContext): AdviceRecord | null {
  if (mode.role.kind !== 'overlapped') return null;
  const top = topCause(model.gap);
  if (!top) return null;
  const { bound, words } = context;
  const measured = mode.stats.median;
  const own = mode.role.layout;
  const layout = bestIsBetter(model.floor, bound) ? layoutChange(own, model.floor, words) : null;
  const { why, fix } = reasons(mode, own, model, context, top);
  const made = (
    code: AdviceRecord['code'],
    change: string,
    savingMs: number,
    to?: { chunks: number; streams: number },
  ): AdviceRecord => ({
    code,
    cause: top.cause,
    lostMs: top.ms,
    change,
    why,
    predictedMs: measured - savingMs,
    savingMs,
    ...(to ? { to } : {}),
  });
  // A change of the cause's own (a graph, more workers, streams of their own) where it has one; else the best layout.
  if (fix)
    return made(
      fix.code,
      fix.change,
      clamp(bound.term === fix.term ? termSaving(bound) : top.ms, measured - model.idealMs),
    );
  if (layout) {
    const { chunks, streams, ms, limitedBy } = model.floor;
    // Serial was measured: running serially saves what it measured less. A layout saves what the model predicts.
    return made('layout', layout, clamp(limitedBy === 'serial' ? measured - ms : bound.ms - ms, measured - ms), {
      chunks,
      streams,
    });
  }
  return { code: 'none', cause: top.cause, lostMs: top.ms, change: null, why, predictedMs: null, savingMs: 0 };
}

interface Fix {
  readonly code: Exclude<AdviceRecord['code'], 'layout' | 'none'>;
  readonly change: string;
  /** The bound's term the change removes: where it binds, the change saves what the bound has above the next term. */
  readonly term: Bound['term'];
}

/** Why the cause costs what it does, and the change of its own that removes it, where it has one. */
function reasons(
  mode: ModeResult,
  layout: OverlapLayout,
  model: AdviceModel,
  context: AdviceContext,
  top: GapPart,
): { why: string; fix: Fix | null } {
  const { parts, ops } = model;
  const copyUs = ops.copies ? (parts.h2dOpMs + parts.d2hOpMs) / 2 : 0;
  const issued = ops.copies + ops.launches + ops.sync;
  switch (top.cause) {
    case 'per-op cost':
      return {
        why: `${ops.copies} copies × ${formatUs(copyUs)} + ${ops.launches} launches × ${formatUs(parts.launchOpMs)} of fixed cost on the GPU`,
        fix: null,
      };
    case 'host issue':
      return {
        why:
          `the host took ${formatMs(model.hostIssueMs)} to issue ${issued} ops ` +
          `(${formatUs(model.hostIssueMs / Math.max(1, issued))} each; --gate leaves issue out of the figure)`,
        fix:
          layout.issue === 'graph'
            ? null
            : { code: 'graph', change: 'issue it as a CUDA graph (pipeline.mode: graph)', term: 'host issue' },
      };
    case 'CPU stage':
      return kindMeasured(mode)?.limits ?? { why: 'the host stage takes longer than the GPU side', fix: null };
    case 'fill and drain':
      return { why: 'the first and last chunks run with the pipeline half empty', fix: null };
    case 'shared link': {
      const rate = boundLinkRate(context);
      return {
        why: `both copy directions share the PCIe link${rate ? `, ${rate}` : ''}: that is this workload's limit, whatever the layout`,
        fix: null,
      };
    }
    case 'kernels not concurrent':
      return {
        why: `the kernels chunked over ${layout.streams} streams take ${formatMs(model.kernelsChunkedMs ?? 0)} against ${formatMs(parts.kernelWholeMs)} on whole buffers`,
        fix: null,
      };
    case 'one direction at a time':
      return {
        why: 'one copy direction carries most of the bytes; overlap cannot hide the larger direction',
        fix: null,
      };
    case 'too few streams':
      return model.serialisers?.includes('per-thread default stream')
        ? {
            why: `every stream is the per-thread default stream, so the ${layout.streams} streams are one and the chunks run one after another`,
            fix: { code: 'stream-kind', change: 'use `streamKind: non-blocking`', term: 'streams' },
          }
        : { why: 'each stream runs its chunks one after another', fix: null };
    case 'exposed communication':
      return {
        why: `the communication the compute does not hide: ${context.limit ?? 'the collectives after the compute'}`,
        fix: null,
      };
    case 'serialisation and effects the model does not capture':
      return { why: unexplained(mode, layout.host, model, context.words), fix: null };
  }
}

/**
 * What the time the model does not explain may be: the serialising features this layout has, what a kind's term
 * leaves out, or, where it has none, what the model leaves out. Files from before the model recorded them get the
 * general list.
 */
function unexplained(mode: ModeResult, host: string | undefined, model: AdviceModel, words: TermWords | null): string {
  const found = model.serialisers;
  const timeline = '`--timeline` shows where the streams waited';
  if (found === undefined) {
    return `time the model does not explain: look for ops on the legacy default stream, pageable memory or synchronous calls (${timeline})`;
  }
  // Where the bound has a kind's term for the host stage, what it leaves out is the kind's to say, not the stage.
  const unmodelled = `the host stage ${host}, which the model leaves out (it has the GPU's stages only)`;
  const stage = host === undefined ? (words?.leavesOut ?? null) : (kindMeasured(mode)?.leavesOut ?? unmodelled);
  if (found.length) {
    return (
      `time the model does not explain: this layout has ${found.join(' and ')}, which ${found.length > 1 ? 'run' : 'runs'} ops one after another` +
      `${stage ? `, and ${stage}` : ''}; ${timeline}`
    );
  }
  return (
    `time the model does not explain: this config has no legacy default stream, pageable memory or synchronous call, so it is ${stage ? `${stage}, ` : ''}` +
    `kernels and copies contending for memory and the engines, the GPU's scheduling of the streams, or noise (${timeline})`
  );
}
