import { clockNote } from './clocks.js';
import { boundLinkRate, formatMs, formatPercent, formatRate, formatTflops, gbPerSecond } from '../format.js';
import { kindMeasured } from '../kinds/index.js';
import type { ModeResult } from '../model/mode.js';
import type { ModelAnalysis } from '../model/analysis.js';
import type { RunResult } from '../result/schema.js';
import { serialMismatch } from '../result/likeness.js';
import { twinWithout } from './toolbox.js';
import type { DefaultStreamOp, ModeRole, OverlapLayout, StopRule } from '../vocabulary.js';

// Words every renderer uses for the same things, so the table, Markdown and HTML say them alike.

export const STOP_RULE_TEXT: Record<StopRule, string> = {
  'fixed-reps': 'the fixed rep count was reached',
  'noise-target': 'the noise fell under the target',
  'noise-stable': 'the noise stopped changing (above the target)',
  'max-time': 'the time budget ran out',
  'max-reps': 'the rep limit was reached',
  'clearly-slower': 'it was clearly slower than the best layout (a sweep stops those early)',
};

/** "2.12× ± 0.01" (95%: two standard errors), or "2.12×" when the uncertainty is unknown. */
export function formatSpeedup(summary: { speedup: number; speedupError: number | null }): string {
  const value = `${summary.speedup.toFixed(2)}×`;
  return summary.speedupError === null ? value : `${value} ± ${(2 * summary.speedupError).toFixed(2)}`;
}

/**
 * A mode's name in tables. Overlapped modes name what sets them apart from the other overlapped modes of the same
 * result (the order when only orders differ, the whole layout otherwise); the device is named when there are several.
 */
export function modeLabel(mode: ModeResult, result: Pick<RunResult, 'modes' | 'devices'>): string {
  const device = result.devices.length > 1 ? mode.device : null;
  const { role } = mode;
  if (role.kind !== 'overlapped') return roleLabel(role, device);
  const { layouts, shapes } = overlappedShapes(result.modes);
  const on = device === null ? '' : ` on GPU ${device}`;
  if (layouts < 2) return `overlapped${on}`;
  const sameShape = shapes.size === 1 && shapes.has(layoutShape(role.layout));
  return sameShape ? `overlapped (${role.layout.order})${on}` : `${roleLabel(role)}${on}`;
}

const layoutShape = (layout: OverlapLayout) =>
  roleLabel({ kind: 'overlapped', layout: { ...layout, order: 'depth-first' } });

const shapesOf = new WeakMap<readonly ModeResult[], { layouts: number; shapes: ReadonlySet<string> }>();

/**
 * How many overlapped modes a Result holds and their shapes (layouts but for the order), once per list of modes: a
 * table labels every mode, and reading every other mode for each made a report of 30,000 modes quadratic.
 */
function overlappedShapes(modes: readonly ModeResult[]): { layouts: number; shapes: ReadonlySet<string> } {
  const known = shapesOf.get(modes);
  if (known) return known;
  const layouts = modes.flatMap((m) => (m.role.kind === 'overlapped' ? [m.role.layout] : []));
  const found = { layouts: layouts.length, shapes: new Set(layouts.map(layoutShape)) };
  shapesOf.set(modes, found);
  return found;
}

const opWord = (op: DefaultStreamOp['op']) => (op === 'h2d' ? 'H2D' : op);

/** A mode's name from its role alone, for views that mix modes of several results (compare). */
export function roleLabel(role: ModeRole, device: number | null = null): string {
  const on = device === null ? '' : ` on GPU ${device}`;
  switch (role.kind) {
    case 'serial':
      return `serial${on}`;
    case 'overlapped': {
      const { layout } = role;
      const shape =
        layout.topology === 'stage-per-stream'
          ? `${layout.chunks} chunks, stage per stream`
          : `${layout.chunks}×${layout.streams}`;
      const variants = [
        layout.slots === undefined ? '' : `, ${layout.slots} slots`,
        layout.host === undefined ? '' : `, host ${layout.host}`,
        layout.legacyOp === undefined
          ? ''
          : `, chunk ${layout.legacyOp.chunk} ${opWord(layout.legacyOp.op)} on legacy default`,
        layout.perThreadOp === undefined
          ? ''
          : `, chunk ${layout.perThreadOp.chunk} ${opWord(layout.perThreadOp.op)} on per-thread default`,
        layout.issue === 'graph' ? ', graph replay' : '',
      ].join('');
      return `overlapped ${shape} ${layout.order}${variants}${on}`;
    }
    case 'stage':
      if (role.stage === 'collective')
        return `collective ${role.collective} alone${role.buckets === undefined ? '' : ` in ${role.buckets} bucket${role.buckets === 1 ? '' : 's'}`}${on}`;
      return `${role.stage === 'kernel' ? `kernel ${role.kernel}` : role.stage.toUpperCase()} alone${on}`;
    case 'link':
      return `H2D + D2H at once${on}`;
    case 'kernels-chunked':
      return `kernels chunked ${role.layout.chunks}×${role.layout.streams}, no copies${role.layout.issue === 'graph' ? ', graph replay' : ''}${on}`;
    case 'op-cost':
      return `${role.op === 'launch' ? 'small launches' : `small ${role.op.toUpperCase()} copies`} back to back${on}`;
    case 'issue-cost':
      return `${role.op} issue cost${on}`;
    case 'latency':
      return `${role.kernel} on an urgent stream beside the pipeline, ${role.priorities ? 'with priorities' : 'equal priorities'}${on}`;
    case 'split': {
      const gpus = `GPUs ${role.devices.join(', ')}`;
      return role.alone === undefined
        ? `split over ${gpus} at once, ${role.layout.chunks}×${role.layout.streams} each`
        : `GPU ${role.alone}'s share alone, ${role.layout.chunks}×${role.layout.streams}`;
    }
    case 'split-link':
      return role.alone === undefined
        ? `H2D + D2H at once on GPUs ${role.devices.join(', ')} together`
        : `H2D + D2H at once on GPU ${role.alone}, its share alone`;
    case 'cross-device':
      return `across GPU ${role.from} → ${role.to} (peer copy after ${role.after}), ${role.layout.chunks}×${role.layout.streams}`;
    case 'peer':
      return `peer copy GPU ${role.from} ${role.both ? '⇄' : '→'} ${role.to}${role.both ? ', both ways at once' : ' alone'}`;
  }
}

/**
 * The rate of a stage or link mode: a copy's GB/s, a GEMM's TFLOP/s, a kernel's GB/s over its buffers' bytes; empty
 * for the others, whose time is not one stage's.
 */
export function rateOf(mode: ModeResult): string {
  const throughput = mode.throughput;
  if (throughput?.tflops !== undefined) return formatTflops(throughput.tflops);
  if (throughput?.gbPerSecond !== undefined) return formatRate(throughput.gbPerSecond);
  const bytes = mode.bytes.h2d + mode.bytes.d2h;
  if (mode.role.kind === 'split-link') return bytes ? formatRate(gbPerSecond(bytes, mode.stats.median)) : '';
  if (mode.role.kind === 'peer')
    return mode.bytes.peer ? formatRate(gbPerSecond(mode.bytes.peer, mode.stats.median)) : '';
  return mode.role.kind === 'stage' || mode.role.kind === 'link'
    ? bytes
      ? formatRate(gbPerSecond(bytes, mode.stats.median))
      : ''
    : '';
}

/**
 * The modes of the mode table, model parts first. Issue-cost modes are host timings, reported per op on their own line.
 */
export function displayOrder(modes: readonly ModeResult[]): ModeResult[] {
  const rank = (m: ModeResult) =>
    ({
      'op-cost': 0,
      stage: 1,
      peer: 2,
      'kernels-chunked': 3,
      link: 4,
      'split-link': 5,
      serial: 6,
      overlapped: 7,
      latency: 8,
      split: 9,
      'cross-device': 10,
      'issue-cost': 11,
    })[m.role.kind];
  return modes.filter((m) => m.role.kind !== 'issue-cost').sort((a, b) => rank(a) - rank(b));
}

/**
 * The verification's status in the words every renderer gives it. A config without an output buffer has nothing to
 * compare, and saying "passed" there would claim a comparison that never ran.
 */
export function verificationWords(verification: Pick<RunResult['verification'], 'status'>): string {
  return verification.status === 'nothing-compared' ? 'nothing compared (no output buffer)' : verification.status;
}

/** What the times include, and why the repetition stopped. */
export function timingLine(result: RunResult): string {
  const p = result.policy;
  const what = p.gate
    ? 'GPU time only (--gate held the streams until each rep was issued)'
    : 'GPU time including host issue cost (no --gate)';
  const stopped = stopReasons(result);
  const policy =
    p.fixedReps !== null
      ? `${p.fixedReps} reps per mode after ${p.warmup} warm-ups`
      : `after ${p.warmup} warm-ups, reps until noise ≤ ${formatPercent(p.maxNoise, 2)} (≥ ${p.minReps} reps, ≤ ${p.maxTimeMs / 1000} s a mode)`;
  // A mode where a kind measured work of its own (a host stage on workers) ends when that work does, which no CUDA
  // event sees: the rep loop takes the later of its end event and that work's end on the host clock.
  const measured = result.modes.map(kindMeasured).find((m) => m !== null);
  const events = measured ? `CUDA events, and ${measured.timing}` : 'CUDA events';
  return `timing: ${events}, ${what}; ${policy}; stopped because ${stopped}; noise is 1.4826·MAD/median`;
}

/**
 * Why the modes' reps stopped: the one rule, or each rule with the modes it stopped (named, up to 3), where it was
 * "the noise fell under the target / the noise stopped changing" with no word of which mode was which (issue 39).
 */
function stopReasons(result: RunResult): string {
  const byRule = new Map<StopRule, ModeResult[]>();
  for (const m of result.modes) byRule.set(m.stoppedBy, [...(byRule.get(m.stoppedBy) ?? []), m]);
  if (byRule.size === 1) return STOP_RULE_TEXT[[...byRule.keys()][0] as StopRule];
  const which = (modes: readonly ModeResult[]) =>
    modes.length <= 3 ? modes.map((m) => modeLabel(m, result)).join(', ') : `${modes.length} modes`;
  return [...byRule].map(([rule, modes]) => `${STOP_RULE_TEXT[rule]} for ${which(modes)}`).join(', and ');
}

/** One speedup and what it compares: `toMs` (this mode) against `fromMs` (the mode it replaces). */
export interface Comparison {
  /** "graph replay against stream issue, 1024×4 depth-first". */
  readonly what: string;
  readonly fromMs: number;
  readonly toMs: number;
}

export const comparisonText = (c: Comparison) =>
  `${c.what}: ${(c.fromMs / c.toMs).toFixed(2)}× (${formatMs(c.fromMs)} → ${formatMs(c.toMs)})`;

/**
 * The comparisons that answer a config's question, to lead its report: each graph replay against the same layout
 * stream-issued, and each layout with its host stage against the same layout without it. Empty for a config that asks
 * only whether overlap pays, which its speedups over serial answer.
 */
export function leadComparisons(result: Pick<RunResult, 'modes'>): Comparison[] {
  const found: Comparison[] = [];
  for (const mode of result.modes) {
    if (mode.role.kind !== 'overlapped') continue;
    const shape = `${mode.role.layout.chunks}×${mode.role.layout.streams} ${mode.role.layout.order}`;
    const stream = twinWithout(mode, 'issue', result.modes);
    if (stream)
      found.push({
        what: `graph replay against stream issue, ${shape}`,
        fromMs: stream.stats.median,
        toMs: mode.stats.median,
      });
    const without = mode.role.layout.issue === undefined ? twinWithout(mode, 'host', result.modes) : null;
    if (without)
      found.push({
        what: `with the host stage ${mode.role.layout.host ?? ''} against without it, ${shape}`,
        fromMs: without.stats.median,
        toMs: mode.stats.median,
      });
  }
  return found;
}

/**
 * What a mode's speedup over serial compares, where that is not plain like with like; null where it is. `omit`: the
 * speedup says nothing and is left out. `brief`: the same in a few words, for the terminal's answer.
 */
export function serialCaveat(
  mode: ModeResult,
  result: Pick<RunResult, 'modes'>,
): { text: string; brief: string; omit: boolean } | null {
  const mismatch = serialMismatch(mode, result.modes);
  if (!mismatch) return null;
  if (mismatch.kind === 'without-stage') {
    return {
      omit: true,
      text: `no speedup over serial: serial runs the host stage ${mismatch.host} and this layout does not, so the figure would not compare like with like`,
      brief: `none: serial runs the host stage ${mismatch.host} and this layout does not`,
    };
  }
  return {
    omit: false,
    text: `nothing to overlap (no copies): serial launches each kernel once on the whole buffers, this layout once per chunk (${mismatch.chunks})`,
    brief: 'nothing to overlap',
  };
}

/** "bound 5.71 ms, limited by the link with both copy directions at once (98.1 GB/s at its fastest rep): ..." */
export function boundText(mode: ModeResult): string | null {
  const analysis = mode.analysis;
  if (!analysis || mode.role.kind !== 'overlapped') return null;
  const { bound } = analysis;
  const words = analysis.model?.words?.limit;
  const detail = words
    ? `${bound.limitedBy}, ${words}`
    : bound.limitedBy === 'link'
      ? `the link with both copy directions at once${boundLinkRate(bound) ? ` (${boundLinkRate(bound)})` : ''}: ` +
        `${formatMs(bound.steadyMs)}, plus ${formatMs(bound.fillDrainMs)} of fill and drain with one direction alone`
      : `${bound.limitedBy}: ${formatMs(bound.steadyMs)}, plus ${formatMs(bound.fillDrainMs)} of fill and drain over ${mode.role.layout.chunks} chunks`;
  return `bound: ${formatMs(bound.ms)}, limited by ${detail}; efficiency bound/measured ${analysis.efficiency.toFixed(2)}`;
}

/** The device line of a report: "NVIDIA H200 (sm_90, 132 SMs, 3 copy engines, PCIe gen5 x16)". */
export function deviceLine(result: RunResult): string {
  return result.devices
    .map((d) => {
      const link = d.pcie ? `, PCIe gen${d.pcie.generation ?? '?'} x${d.pcie.width}` : '';
      return `${result.devices.length > 1 ? `GPU ${d.index} ` : ''}${d.name} (sm_${d.computeCapability.major}${d.computeCapability.minor}, ${d.multiprocessors} SMs, ${d.asyncEngineCount} copy engines${link})`;
    })
    .join('; ');
}

/** "8 chunks × 4 streams", "8 chunks, stage per stream", or a kind's words ("8 buckets"). */
export function layoutWords(mode: ModeResult): string {
  if (mode.role.kind !== 'overlapped') return '';
  const words = mode.analysis?.model?.words;
  if (words) return words.layout;
  const { chunks, streams, topology } = mode.role.layout;
  return topology === 'stage-per-stream'
    ? `${chunks} chunks, stage per stream`
    : `${chunks} chunks × ${streams} streams`;
}

/** A bound's limit in words: a kind's where its term binds ("communication: the compute, then …"). */
export function limitWords(limitedBy: string, words: string | null | undefined): string {
  return words ? `${limitedBy}: ${words}` : limitedBy;
}

/**
 * The model's best layout for `mode`'s workload in words: this layout where no other is predicted faster, serial
 * where nothing beats it, else the layout; with what limits it, and why no other is predicted where a kind says so.
 */
export function bestLayoutText(mode: ModeResult): string | null {
  const model = mode.analysis?.model;
  if (!model || mode.role.kind !== 'overlapped') return null;
  const { floor, words } = model;
  const { layout } = mode.role;
  const limit = `limited by ${limitWords(floor.limitedBy, words?.bestLimit)}`;
  // A host stage on the JS thread has no term: what the model predicts is the GPU's side alone, no layout's time.
  if (layout.host !== undefined && !kindMeasured(mode))
    return `not predicted: the model has no term for the host stage ${layout.host} on the JS thread`;
  const unpredicted = words?.unpredicted ? `; ${words.unpredicted}` : '';
  if (floor.limitedBy === 'serial' && floor.chunks === 1) {
    return `serial${words ? ` (${words.best})` : ''}, ${formatMs(floor.ms)} measured: no layout the model predicts beats it`;
  }
  if (floor.chunks === layout.chunks && floor.streams === layout.streams) {
    const over = floor.overruled;
    // What limits it is the line above's: this layout's bound.
    const why = over
      ? `the model predicts ${words?.overruled ?? `${over.chunks} chunks × ${over.streams} streams`} faster (${formatMs(over.predictedMs)}), but it was measured at ${formatMs(over.measuredMs)}`
      : `none predicted faster${unpredicted}`;
    return `this layout (${layoutWords(mode)}), ${formatMs(floor.ms)} predicted; ${why}`;
  }
  const at = words?.best ?? `${floor.chunks} chunks × ${floor.streams} streams`;
  return `about ${at}, ${formatMs(floor.ms)} predicted (${limit}${unpredicted})`;
}

/**
 * The model's verdict on an overlapped mode in two lines: its floor next to the workload's, and the largest cause of
 * the time lost against the workload's ideal with the change that would help.
 */
export function modelLines(mode: ModeResult): string[] {
  const model = mode.analysis?.model;
  const analysis = mode.analysis;
  if (!model || !analysis || mode.role.kind !== 'overlapped') return [];
  // Results from before the parts were taken at their fastest rep had medians, and no statistic to say.
  // A kind's own term is the one part a layout's own reps give (a host stage's tasks run nowhere else).
  const measured = kindMeasured(mode);
  const statistic =
    model.statistic !== 'min'
      ? ''
      : measured
        ? ` (every GPU part at its fastest rep, measured apart; ${measured.statistic})`
        : ' (every part at its fastest rep, none from this layout)';
  const lines = [
    `floor: this layout ${formatMs(mode.stats.median)}, its floor ${formatMs(analysis.bound.ms)}${statistic}; the workload's floor ${bestLayoutText(mode)}; ideal ${formatMs(model.idealMs)}`,
  ];
  const clocks = clockNote(mode);
  if (clocks) lines.push(`clocks: ${clocks}`);
  const advice = model.advice;
  if (!advice) return lines;
  lines.push(
    `lost against the ideal at ${layoutWords(mode)}: ${model.gap
      .filter((p) => p.ms > 0)
      .map((p) => `${p.cause} ${formatMs(p.ms)}`)
      .join(', ')}; ` +
      `most from ${advice.cause}: ${advice.why}` +
      (advice.change && advice.predictedMs !== null
        ? `; ${advice.change}, ${formatMs(advice.predictedMs)} predicted (${savesText(advice)})`
        : ''),
  );
  return lines;
}

/**
 * What a change saves: a layout's is the model's prediction for it; another change's the most it can save (the term
 * it removes), such as more workers, whose count the model does not know.
 */
const savesText = (advice: NonNullable<ModelAnalysis['advice']>) =>
  advice.code === 'layout' ? `saves ${formatMs(advice.savingMs)}` : `saves up to ${formatMs(advice.savingMs)}`;

/** The change line's text: the change with what it is predicted to save, or why none is named. */
export function changeText(mode: ModeResult): string {
  const model = mode.analysis?.model;
  if (!model) return 'none named without the model';
  const advice = model.advice;
  if (advice === undefined) return 'none drawn for this Result (`cuda-pipe report` draws it from the modes)';
  if (advice === null) return 'none: this layout loses nothing against the ideal';
  const lost = `lost to ${advice.cause}: ${formatMs(advice.lostMs)}`;
  if (!advice.change || advice.predictedMs === null) return `none the model names; ${lost} (--verbose says why)`;
  return `${advice.change}: ${savesText(advice)}; ${lost}`;
}
