import { formatBytes, formatMs, formatPercent, formatRate, formatUs } from '../../format.js';
import type { ModeResult } from '../../model/mode.js';
import type { Collective } from '../../vocabulary.js';
import type { ReportContext, ReportSection, ResultSections, ResultView, TermContext } from '../api/index.js';
import type { resultSection } from './result.js';
import { type CollectiveBandwidth, type CommOp, collectiveBandwidth, commOverlap } from './analysis.js';
import { fitAlphaBeta } from './buckets.js';
import { aloneSamples, bucketStep } from './model.js';

// What a run with collectives adds to every report: the collective alone and its bandwidths, how much of each
// device's communication the compute hid, and the bucket model's bound against the measured step. Drawn from the
// Result alone; a Result without a communicator gets no line.

type CommResult = ResultView & ResultSections<typeof resultSection>;

const COLLECTIVE_NAMES: Record<Collective, string> = {
  allreduce: 'all-reduce',
  reducescatter: 'reduce-scatter',
  allgather: 'all-gather',
};

/** Indented lines under a heading; empty for a run without collectives. */
export function commLines(result: CommResult, context: ReportContext): string[] {
  const communicator = result.communicator;
  if (!communicator) return [];
  const ranks = communicator.ranks;
  const alone = aloneModes(result.modes);
  const lines = [
    `communication: NCCL ${communicator.version}, ${ranks} rank${ranks === 1 ? '' : 's'}, this process drives GPU${communicator.localDevices.length === 1 ? '' : 's'} ${communicator.localDevices.join(', ')}, NVLink multicast ${communicator.nvls}${ctasText(communicator.ctas)}:`,
  ];
  for (const mode of alone) {
    const c = mode.collective;
    if (!c) continue;
    const bw = collectiveBandwidth(c.collective, c.bytes / c.calls, ranks, mode.stats.median / c.calls);
    lines.push(
      `  ${COLLECTIVE_NAMES[c.collective]} alone: ${c.calls} call${c.calls === 1 ? '' : 's'} of ${formatBytes(c.bytes / c.calls)} per rank, ${formatMs(mode.stats.median / c.calls)} each (median rep ${formatMs(mode.stats.median)}): ${bandwidthText(bw, ranks)}`,
    );
  }
  if (!alone.length) lines.push('  the collective alone: not measured');
  lines.push(...overlapLines(result, context), ...modelLines(result, alone[0], ranks));
  return lines;
}

const ctasText = (ctas: number | undefined): string =>
  ctas === undefined ? '' : `, ${ctas} CTA${ctas === 1 ? '' : 's'} a collective (collective.ctas)`;

/**
 * Modes that ran collectives without the compute: they carry their collectives and are neither serial nor overlapped.
 */
function aloneModes(modes: readonly ModeResult[]): ModeResult[] {
  return modes.filter((m) => m.collective !== undefined && m.role.kind !== 'serial' && m.role.kind !== 'overlapped');
}

function bandwidthText(bw: CollectiveBandwidth, ranks: number): string {
  return `algbw ${formatRate(bw.algGbPerSecond)}, busbw ${formatRate(bw.busGbPerSecond)}${ranks === 1 ? ' (one rank: nothing crosses a link)' : ''}`;
}

/** Per overlapped mode with a traced rep: each device's communication, the part exposed, and the overlap fraction. */
function overlapLines(result: CommResult, context: ReportContext): string[] {
  const reps = result.timeline?.reps ?? [];
  const lines: string[] = [];
  for (const mode of result.modes.filter((m) => m.role.kind === 'overlapped')) {
    // The schema's op kinds are the stage table's; the analysis reads any kind as a string.
    const ops: CommOp[] = reps.filter((r) => r.mode === mode.id).flatMap((r) => r.ops);
    const { perDevice, total } = commOverlap(ops, context);
    if (!perDevice.length) continue;
    const device = (d: (typeof perDevice)[number]) =>
      `GPU ${d.device} ${formatMs(d.commMs)} communicating, ${formatMs(d.exposedMs)} exposed, ${d.overlap === null ? '–' : formatPercent(d.overlap, 1)} overlapped`;
    lines.push(
      `  ${context.modeLabel(mode)}, traced rep: ${perDevice.map(device).join('; ')}` +
        (perDevice.length > 1 && total.overlap !== null
          ? `; all ${formatMs(total.exposedMs)} exposed, ${formatPercent(total.overlap, 1)} overlapped`
          : ''),
    );
  }
  if (!lines.length)
    lines.push('  exposed communication: no traced rep with collectives (run without --no-tracing to see it)');
  return lines;
}

/**
 * The bucket model for the headline mode, as the overlap bound has it (./model.ts): the kernels alone as the backward
 * pass's compute (at the layout's clock, as its model took them), the collective alone's fastest rep as the
 * collectives' rate (noise lowers the bound, never lifts it), the headline's chunks as buckets.
 */
function modelLines(result: CommResult, alone: ModeResult | undefined, ranks: number): string[] {
  const headline = result.modes.find((m) => m.id === result.summary.mode);
  const c = alone?.collective;
  if (!alone || !c || headline?.role.kind !== 'overlapped') return [];
  const modes = result.modes.filter((m) => m.device === headline.device && m.id !== headline.id);
  const kernels = modes.filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel');
  if (!kernels.length || !(c.bytes > 0)) return ['  bucket model: needs the kernels alone and the collective alone'];
  const context: TermContext = {
    modes,
    computeMs:
      headline.analysis?.model?.parts.kernelWholeMs ?? kernels.reduce((sum, m) => sum + Math.min(...m.samplesMs), 0),
    items: result.pipeline.items ?? result.pipeline.elements,
  };
  const bound = bucketStep(headline, headline.role.layout.chunks, context);
  if (!bound) return ['  bucket model: needs the kernels alone and the collective alone'];
  const measured = headline.stats.median;
  const name = COLLECTIVE_NAMES[c.collective];
  const limit =
    bound.limitedBy === 'compute'
      ? `the compute, then the last bucket's ${name} (${formatMs(bound.lastCommMs)})`
      : `the ${name}s back to back after the first bucket`;
  const lines = [
    `  bucket model: ${context.items} ${result.pipeline.items === undefined ? 'elements' : 'layers'} computing ${formatMs(context.computeMs)} (kernels alone), ${bound.buckets} buckets of ${formatBytes(bound.bucketBytes)}, ` +
      `${name}s ${formatMs(bound.commMs)} at the collective alone's rate: bound ${formatMs(bound.ms)} (limited by ${limit}) against ${formatMs(measured)} measured, efficiency ${(bound.ms / measured).toFixed(2)}`,
  ];
  lines.push(beyondComputeLine(headline, context.computeMs));
  const samples = aloneSamples(modes);
  const model = fitAlphaBeta(c.collective, ranks, samples);
  if (!model) {
    lines.push(
      `  best bucket size: the ${name} alone at one message size cannot tell its per-call cost from its bandwidth; sweep the bucket size to find it`,
    );
    return lines;
  }
  const sizes = new Set(samples.map((sample) => sample.bytes / sample.calls)).size;
  lines.push(
    `  ${name} α ${formatUs(model.alphaMs)} a call, ${formatRate(model.gbPerSecond)} ${ranks > 1 ? 'bus' : 'algorithm'} bandwidth, fitted over ${sizes} message sizes: ` +
      'the best layout above predicts the bucket counts not measured with it',
  );
  return lines;
}

/**
 * What the step takes beyond its compute alone, from the timed reps (their median and middle half), not from the one
 * traced rep: the communication the compute did not hide and the compute's slowdown beside it, which the traced rep
 * alone cannot part from noise (four runs of 32 buckets on two H200s, their medians within 0.5% of each other, traced
 * 0.367 to 0.631 ms of communication exposed: docs/measurements/2026-11-28-h200x2-ddp-knobs/).
 */
function beyondComputeLine(headline: ModeResult, computeMs: number): string {
  const { median, q1, q3 } = headline.stats;
  const beyond = median - computeMs;
  return (
    `  beyond the compute alone: ${formatMs(beyond)} a step (${formatPercent(beyond / median, 1)}), the median of ${headline.samplesMs.length} timed reps ` +
    `(middle half ${formatMs(q1 - computeMs)} to ${formatMs(q3 - computeMs)}): the communication the compute did not hide, and the compute's slowdown beside it`
  );
}

/** The collective's section of every report (the contract's `report`). */
export const commSection: ReportSection = { id: 'communication', title: 'Communication', lines: commLines };
