import { CONFIG_CHANGE, repFindings } from '../analysis/rep-findings.js';
import type { Finding } from '../analysis/document.js';
import { formatMs } from '../format.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';

// Why a layout lost time, as `analyze` would say it of the mode's traced rep: the same rules (src/analysis/), each
// cause credited with what the rep would save without it, within the rep's time above the mode's bound. The layout
// model's change (labels.ts) says what another layout would do; these say what the trace shows.

/**
 * The findings of the mode's traced rep on its own device (its first, for a mode spanning devices); none without one.
 */
export function traceFindings(result: Pick<RunResult, 'buffers' | 'timeline'>, mode: ModeResult): Finding[] {
  const rep =
    result.timeline?.reps.find((r) => r.mode === mode.id && r.device === mode.device) ??
    result.timeline?.reps.find((r) => r.mode === mode.id);
  if (!rep) return [];
  return repFindings(result, rep, mode.analysis?.bound.ms ?? null);
}

/** At most three findings in a line: each code and what removing it saves. */
export function whyText(findings: readonly Finding[]): string | null {
  if (!findings.length) return null;
  const named = findings.slice(0, 3).map((f) => `${f.code} ${formatMs(f.ms)}`);
  return `${named.join(', ')} (the traced rep replayed without each cause: what it would save)`;
}

/**
 * The change to make: the layout model's where it names one; else the trace's largest finding, in the config's terms,
 * with what it would save; else the model's words for what was lost.
 */
export function changeWithFindings(mode: ModeResult, findings: readonly Finding[], layoutChange: string): string {
  const advice = mode.analysis?.model?.advice;
  const top = findings[0];
  if ((advice?.change && advice.predictedMs !== null) || !top) return layoutChange;
  const lost = advice ? `; the layout model names none (lost to ${advice.cause}: ${formatMs(advice.lostMs)})` : '';
  return `${CONFIG_CHANGE[top.code]}: saves ${formatMs(top.ms)} in the traced rep${lost}`;
}
