import { chunkUnits } from '../chunking.js';
import { SMALL_OP_BATCH } from '../plan/part-schedules.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import type { WarningCode } from '../result/warnings.js';
import { modelAnalysis, type PipelineFacts, type StreamFacts } from './model.js';
import { analysisOf, summaryOf } from './result.js';
import { runWarnings } from './warnings.js';
import { bestOfSweep } from './sweep.js';
import { HOST_MEMORY_KINDS, type HostMemoryKind } from '../vocabulary.js';

const isHostMemory = (kind: string): kind is HostMemoryKind => (HOST_MEMORY_KINDS as readonly string[]).includes(kind);

// A Result's conclusions (each overlapped mode's bound, efficiency, best layout and advice, the headline's efficiency,
// the warnings that judge them) drawn again from what it measured, by the functions `run` drew them with: `report` and
// `merge` give a recorded Result today's conclusions, while every measurement stays as it was recorded.

/** What the model needs of the pipeline, from a Result instead of the plan: the same facts `run` took from the plan. */
export function resultFacts(
  result: Pick<RunResult, 'buffers' | 'kernels' | 'devices' | 'policy' | 'pipeline'>,
  device: number,
): PipelineFacts {
  return {
    buffers: result.buffers.map((b) => ({
      role: b.role,
      ...(isHostMemory(b.hostMemory) ? { hostMemory: b.hostMemory } : {}),
    })),
    kernels: result.kernels.length,
    copyEngines: result.devices.find((d) => d.index === device)?.asyncEngineCount ?? 0,
    gated: result.policy.gate,
    maxChunks: chunkUnits(result.pipeline.elements, result.pipeline.align),
    items: result.pipeline.items ?? result.pipeline.elements,
  };
}

/**
 * A layout's stream facts as its Result recorded them: its serialisers, and whether its streams were all one stream
 * (the per-thread default, or the legacy default where no single op was put on it). Null where they were not recorded.
 */
export function recordedStreams(mode: ModeResult): StreamFacts | null {
  const serialisers = mode.analysis?.model?.serialisers;
  if (serialisers === undefined || mode.role.kind !== 'overlapped') return null;
  const legacyAll = serialisers.includes('legacy default stream') && mode.role.layout.legacyOp === undefined;
  return { oneStream: serialisers.includes('per-thread default stream') || legacyAll, serialisers };
}

type SweepBest = NonNullable<RunResult['sweep']>['best'];

/** A sweep's best layout and ties, from its raced layouts' reps as `sweep` picks them; as recorded if none is found. */
function sweptBest(sweep: NonNullable<RunResult['sweep']>, modes: readonly ModeResult[]): SweepBest {
  const raced = sweep.points.flatMap((p) => modes.find((m) => m.id === p.mode) ?? []);
  if (!raced.length) return sweep.best;
  return bestOfSweep(raced.map((m) => ({ id: m.id, samplesMs: m.samplesMs, stats: m.stats })));
}

/** The codes of the warnings that judge a mode against its bound: drawn again with the conclusions. */
const JUDGING: readonly WarningCode[] = ['above-bound', 'slower-than-serial'];

/**
 * The Result with its conclusions drawn again from its modes. A mode whose model was not recorded (files from before
 * the model had its parts) keeps its analysis: its Result lacks what the model needs.
 */
export function concludeResult(result: RunResult): RunResult {
  const modes = result.modes.map((mode) => {
    const analysis = mode.analysis;
    if (mode.role.kind !== 'overlapped' || !analysis?.model) return mode;
    const serial = result.modes.find((m) => m.device === mode.device && m.role.kind === 'serial');
    const facts = resultFacts(result, mode.device);
    const analysed = serial ? modelAnalysis(mode, result.modes, facts, SMALL_OP_BATCH, recordedStreams(mode)) : null;
    if (!serial || !analysed) return mode;
    return {
      ...mode,
      analysis: analysisOf(mode, serial, analysed, result.modes, facts.copyEngines, analysis.chunkElements),
    };
  });
  const sweep = result.sweep ? { ...result.sweep, best: sweptBest(result.sweep, modes) } : null;
  // A sweep's headline is its best layout, picked again by today's ranking (a bimodal layout at its slower cluster).
  const headline = modes.find((m) => m.id === (sweep?.best.mode ?? result.summary.mode));
  const summary = headline?.analysis ? summaryOf(headline, headline.analysis) : result.summary;
  const concluded = { ...result, modes, summary, sweep };
  const judged = runWarnings(concluded).filter((w) => JUDGING.includes(w.code));
  return { ...concluded, warnings: [...result.warnings.filter((w) => !JUDGING.includes(w.code)), ...judged] };
}
