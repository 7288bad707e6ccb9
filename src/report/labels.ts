import { formatMs, formatPercent, formatRate, gbPerSecond } from '../format.js';
import type { ModeResult, RunResult } from '../result/schema.js';
import type { ModeRole, StopRule } from '../vocabulary.js';

// Words every renderer uses for the same things, so the table, Markdown and HTML say them alike.

export const STOP_RULE_TEXT: Record<StopRule, string> = {
  'fixed-reps': 'the fixed rep count was reached',
  'noise-target': 'the noise fell under the target',
  'noise-stable': 'the noise stopped changing (above the target)',
  'max-time': 'the time budget ran out',
  'max-reps': 'the rep limit was reached',
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
  const layouts = result.modes.flatMap((m) => (m.role.kind === 'overlapped' ? [m.role.layout] : []));
  const on = device === null ? '' : ` on GPU ${device}`;
  if (layouts.length < 2) return `overlapped${on}`;
  const shape = (l: typeof role.layout) => roleLabel({ kind: 'overlapped', layout: { ...l, order: 'depth-first' } });
  const sameShape = layouts.every((l) => shape(l) === shape(role.layout));
  return sameShape ? `overlapped (${role.layout.order})${on}` : `${roleLabel(role)}${on}`;
}

/** A mode's name from its role alone, for views that mix modes of several results (compare). */
export function roleLabel(role: ModeRole, device: number | null = null): string {
  const on = device === null ? '' : ` on GPU ${device}`;
  switch (role.kind) {
    case 'serial':
      return `serial${on}`;
    case 'overlapped': {
      const { layout } = role;
      const shape = layout.topology === 'stage-per-stream' ? `${layout.chunks} chunks, stage per stream` : `${layout.chunks}×${layout.streams}`;
      const variants = [
        layout.slots === undefined ? '' : `, ${layout.slots} slots`, layout.host === undefined ? '' : `, host ${layout.host}`,
        layout.legacyOp === undefined ? '' : `, chunk ${layout.legacyOp.chunk} ${layout.legacyOp.op} on legacy default`,
        layout.issue === 'graph' ? ', graph replay' : '',
      ].join('');
      return `overlapped ${shape} ${layout.order}${variants}${on}`;
    }
    case 'stage':
      return `${role.stage === 'kernel' ? `kernel ${role.kernel}` : role.stage.toUpperCase()} alone${on}`;
    case 'link':
      return `H2D + D2H at once${on}`;
    case 'issue-cost':
      return `${role.op} issue cost${on}`;
    case 'latency':
      return `${role.kernel} on an urgent stream beside the pipeline, ${role.priorities ? 'with priorities' : 'equal priorities'}${on}`;
  }
}

/** The copy rate of a stage or link mode; empty for the others, whose time is not a copy's. */
export function rateOf(mode: ModeResult): string {
  const bytes = mode.bytes.h2d + mode.bytes.d2h;
  return mode.role.kind === 'stage' || mode.role.kind === 'link' ? (bytes ? formatRate(gbPerSecond(bytes, mode.stats.median)) : '') : '';
}

export function displayOrder(modes: readonly ModeResult[]): ModeResult[] {
  const rank = (m: ModeResult) => ({ stage: 0, link: 1, serial: 2, overlapped: 3, latency: 4, 'issue-cost': 5 })[m.role.kind];
  return [...modes].sort((a, b) => rank(a) - rank(b));
}

/** What the times include, and why the repetition stopped. */
export function timingLine(result: RunResult): string {
  const p = result.policy;
  const what = p.gate ? 'GPU time only (--gate held the streams until each rep was issued)' : 'GPU time including host issue cost (no --gate)';
  const rules = [...new Set(result.modes.map((m) => m.stoppedBy))].map((r) => STOP_RULE_TEXT[r]);
  const policy = p.fixedReps !== null
    ? `${p.fixedReps} reps per mode after ${p.warmup} warm-ups`
    : `after ${p.warmup} warm-ups, reps until noise ≤ ${formatPercent(p.maxNoise, 2)} (≥ ${p.minReps} reps, ≤ ${p.maxTimeMs / 1000} s a mode)`;
  return `timing: CUDA events, ${what}; ${policy}; stopped because ${rules.join(' / ')}; noise is 1.4826·MAD/median`;
}

/** "bound 5.71 ms, limited by the link with both copy directions at once (98.1 GB/s): ..." */
export function boundText(mode: ModeResult): string | null {
  const analysis = mode.analysis;
  if (!analysis || mode.role.kind !== 'overlapped') return null;
  const { bound } = analysis;
  const detail = bound.limitedBy === 'link'
    ? `the link with both copy directions at once${bound.linkGbPerSecond ? ` (${formatRate(bound.linkGbPerSecond)})` : ''}: ` +
      `${formatMs(bound.steadyMs)}, plus ${formatMs(bound.fillDrainMs)} of fill and drain with one direction alone`
    : `${bound.limitedBy}: ${formatMs(bound.steadyMs)}, plus ${formatMs(bound.fillDrainMs)} of fill and drain over ${mode.role.layout.chunks} chunks`;
  return `bound: ${formatMs(bound.ms)}, limited by ${detail}; efficiency bound/measured ${analysis.efficiency.toFixed(2)}`;
}

/** The device line of a report: "NVIDIA H200 (sm_90, 132 SMs, 3 copy engines, PCIe gen5 x16)". */
export function deviceLine(result: RunResult): string {
  return result.devices.map((d) => {
    const link = d.pcie ? `, PCIe gen${d.pcie.generation ?? '?'} x${d.pcie.width}` : '';
    return `${d.name} (sm_${d.computeCapability.major}${d.computeCapability.minor}, ${d.multiprocessors} SMs, ${d.asyncEngineCount} copy engines${link})`;
  }).join('; ');
}
