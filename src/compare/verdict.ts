import { KERNEL_STAGES } from '../kinds/index.js';
import type { DeviceFacts } from '../result/environment.js';
import type { Stats } from '../result/mode.js';
import type { RunResult } from '../result/schema.js';
import { isCompared, isGating } from '../modes.js';
import { type ModeRole, sameRole } from '../vocabulary.js';

export type Verdict = 'faster' | 'slower' | 'same' | 'noisy';

export interface ModeComparison {
  readonly config: string;
  readonly mode: string;
  readonly role: ModeRole;
  /** The device index the mode ran on (the same on both sides). */
  readonly device: number;
  /**
   * Whether this pair can fail the gate. The model's parts (small ops back to back, kernels chunked without copies)
   * are compared for information: they move with the GPU's state between runs more than the pipeline does, and a
   * pipeline that did not get slower has not regressed.
   */
  readonly gating: boolean;
  readonly baseline: Stats;
  readonly candidate: Stats;
  /** (candidate median − baseline median) / baseline median; positive is slower. */
  readonly change: number;
  /** The change that had to be reached to count (the threshold, or the noise rule's for these two runs). */
  readonly needed: number;
  readonly verdict: Verdict;
  /** Clock-normalised time, where NVML read both sides' SM clocks and the mode runs kernels. */
  readonly clocks: ClockCheck | null;
}

export interface Comparison {
  readonly rule: VerdictRule;
  readonly pairs: readonly ModeComparison[];
  /** Configs and modes present on one side only. */
  readonly unpaired: readonly string[];
  readonly notes: readonly string[];
  /** Device fields that differ between the two sides ("name: A → B"); empty when the devices match. */
  readonly deviceDifferences: readonly string[];
}

/**
 * How a change is judged between two separate runs. The noise rule (the default): a change counts when it is at
 * least `multiple` times the two runs' noise together (√(noise_a² + noise_b²), each the relative MAD noise of one
 * rep) and at least `floor`. `--threshold` replaces both with one fixed fraction.
 */
export type VerdictRule = { readonly kind: 'noise'; readonly floor: number; readonly multiple: number } | { readonly kind: 'threshold'; readonly threshold: number };

/**
 * Separate runs see what interleaved reps cancel (clocks, the GPU's state, another machine of the same model), so
 * their floor is twice `ab`'s; 3× the noise keeps a noisy copy mode from failing on its own scatter.
 */
export const NOISE_RULE: VerdictRule = { kind: 'noise', floor: 0.01, multiple: 3 };

export const thresholdRule = (threshold: number): VerdictRule => ({ kind: 'threshold', threshold });

/** The change two runs' medians must differ by to count, as a fraction. */
export function neededChange(baseline: Pick<Stats, 'relativeNoise'>, candidate: Pick<Stats, 'relativeNoise'>, rule: VerdictRule): number {
  if (rule.kind === 'threshold') return rule.threshold;
  return Math.max(rule.floor, rule.multiple * Math.hypot(baseline.relativeNoise, candidate.relativeNoise));
}

/**
 * Decides from both runs' spreads, never from the medians alone. When the slower median is less than the needed
 * change above the faster one, the runs are `same`. A larger change is `slower` or `faster` only when the middle
 * halves of the two runs do not overlap (the candidate's first quartile above the baseline's third, or its third
 * below the baseline's first); otherwise the runs are too noisy to tell: `noisy`.
 *
 * The needed change applies to the ratio of the larger median to the smaller, not to `change`: measured against the
 * baseline, a 4.9% speed-up from A to B is a 5.2% slow-down from B to A, and swapping the files must swap `faster`
 * and `slower`, never turn one into `same`.
 */
export function verdict(baseline: Stats, candidate: Stats, rule: VerdictRule = NOISE_RULE): { verdict: Verdict; change: number } {
  const change = (candidate.median - baseline.median) / baseline.median;
  const ratio = Math.max(baseline.median, candidate.median) / Math.min(baseline.median, candidate.median);
  if (!(ratio >= 1 + neededChange(baseline, candidate, rule))) return { verdict: 'same', change };
  if (change > 0 && candidate.q1 > baseline.q3) return { verdict: 'slower', change };
  if (change < 0 && candidate.q3 < baseline.q1) return { verdict: 'faster', change };
  return { verdict: 'noisy', change };
}

/** Both sides' SM clocks while a mode ran, and what clock-normalised time made of the change. */
export interface ClockCheck {
  readonly baselineMHz: number;
  readonly candidateMHz: number;
  /** The change in time × clock (cycles): what is left once the clocks are taken out. */
  readonly change: number;
  /** The verdict in time was `slower` or `faster` and in cycles `same`: the clocks explain the change. */
  readonly explains: boolean;
}

/** The middle of the SM clock range read between a mode's reps; null where NVML gave none. */
const clockOf = (range: { min: number; max: number } | null): number | null => (range && range.min > 0 ? (range.min + range.max) / 2 : null);

/** Copies leave the SMs idle (their clock reads low and does not set their pace): only modes that run kernels are normalised. */
export function runsKernels(role: ModeRole): boolean {
  switch (role.kind) {
    case 'stage':
      return KERNEL_STAGES.includes(role.stage);
    case 'op-cost':
      return role.op === 'launch';
    case 'link':
    case 'split-link':
    case 'peer':
    case 'issue-cost':
      return false;
    default:
      return true;
  }
}

/**
 * The verdict in time, confirmed in clock-normalised time where NVML read both sides' SM clocks, as nvbench's robust
 * compare does: the candidate's times are scaled by candidate clock / baseline clock (the same cycles at the
 * baseline's clock). A `slower` or `faster` that is `same` in cycles becomes `same`, and says the clocks explain it;
 * one that is `noisy` in cycles becomes `noisy`.
 */
export function clockConfirmedVerdict(
  baseline: Stats,
  candidate: Stats,
  clocks: { baseline: number; candidate: number } | null,
  rule: VerdictRule = NOISE_RULE,
): { verdict: Verdict; change: number; clocks: ClockCheck | null } {
  const inTime = verdict(baseline, candidate, rule);
  if (!clocks) return { ...inTime, clocks: null };
  const scale = clocks.candidate / clocks.baseline;
  const cycles = verdict(baseline, { ...candidate, median: candidate.median * scale, q1: candidate.q1 * scale, q3: candidate.q3 * scale }, rule);
  const moved = inTime.verdict === 'slower' || inTime.verdict === 'faster';
  const explains = moved && cycles.verdict === 'same';
  const confirmed: Verdict = !moved || cycles.verdict === inTime.verdict ? inTime.verdict : explains ? 'same' : 'noisy';
  return { verdict: confirmed, change: inTime.change, clocks: { baselineMHz: clocks.baseline, candidateMHz: clocks.candidate, change: cycles.change, explains } };
}

const DEVICE_FIELDS: ReadonlyArray<[string, (d: DeviceFacts) => string]> = [
  ['name', (d) => d.name],
  ['compute capability', (d) => `${d.computeCapability.major}.${d.computeCapability.minor}`],
  ['multiprocessors', (d) => String(d.multiprocessors)],
  ['memory', (d) => String(d.memoryBytes)],
  ['copy engines', (d) => String(d.asyncEngineCount)],
  ['PCIe link', (d) => (d.pcie ? `gen${d.pcie.generation ?? '?'} x${d.pcie.width}` : 'unknown')],
];

export function deviceDifferences(a: DeviceFacts, b: DeviceFacts): string[] {
  return DEVICE_FIELDS.flatMap(([field, read]) => (read(a) === read(b) ? [] : [`${field}: ${read(a)} → ${read(b)}`]));
}

/** Differences between two runs' devices, paired by index; a device on one side only is a difference too. */
export function devicesDifferences(a: readonly DeviceFacts[], b: readonly DeviceFacts[]): string[] {
  const indexes = [...new Set([...a, ...b].map((d) => d.index))].sort((x, y) => x - y);
  return indexes.flatMap((index) => {
    const left = a.find((d) => d.index === index);
    const right = b.find((d) => d.index === index);
    if (!left || !right) return [`device ${index}: ${left ? left.name : 'absent'} → ${right ? right.name : 'absent'}`];
    const prefix = a.length > 1 || b.length > 1 ? `device ${index} ` : '';
    return deviceDifferences(left, right).map((d) => prefix + d);
  });
}

/**
 * Pairs results by config hash, then (for a config that changed since the baseline) by config name, and within a
 * pair, modes by role and device.
 */
export function compareResults(baseline: readonly RunResult[], candidate: readonly RunResult[], rule: VerdictRule = NOISE_RULE): Comparison {
  const pairs: ModeComparison[] = [];
  const unpaired: string[] = [];
  const notes: string[] = [];
  const differences = new Set<string>();
  const used = new Set<RunResult>();
  for (const cand of candidate) {
    // Merged files of a launch hold the same config once per rank: rank pairs with rank where both have one.
    const base =
      baseline.find((b) => !used.has(b) && b.config.hash === cand.config.hash && b.run.rank === cand.run.rank) ??
      baseline.find((b) => !used.has(b) && b.config.hash === cand.config.hash) ??
      baseline.find((b) => !used.has(b) && b.config.name === cand.config.name);
    if (!base) {
      unpaired.push(`${cand.config.name}: no baseline`);
      continue;
    }
    used.add(base);
    if (base.config.hash !== cand.config.hash) {
      notes.push(`${cand.config.name}: the config changed since the baseline (hash ${base.config.hash} → ${cand.config.hash}).`);
    }
    if (base.policy.gate !== cand.policy.gate) {
      notes.push(`${cand.config.name}: one side excludes host issue cost (--gate) and the other does not.`);
    }
    for (const d of devicesDifferences(base.devices, cand.devices)) differences.add(d);
    const same = (a: RunResult['modes'][number], b: RunResult['modes'][number]) => a.device === b.device && sameRole(a.role, b.role);
    for (const mode of cand.modes.filter(compared)) {
      const baseMode = base.modes.find((m) => same(m, mode));
      if (!baseMode) {
        unpaired.push(`${cand.config.name} ${mode.id}: not in the baseline`);
        continue;
      }
      pairs.push({
        config: cand.run.rank === null ? cand.config.name : `${cand.config.name} rank ${cand.run.rank}`,
        mode: mode.id,
        role: mode.role,
        device: mode.device,
        gating: isGating(mode.role),
        baseline: baseMode.stats,
        candidate: mode.stats,
        needed: neededChange(baseMode.stats, mode.stats, rule),
        ...clockConfirmedVerdict(baseMode.stats, mode.stats, modeClocks(baseMode, mode), rule),
      });
    }
    for (const mode of base.modes.filter(compared)) {
      if (!cand.modes.some((m) => same(m, mode))) unpaired.push(`${base.config.name} ${mode.id}: not in the candidate`);
    }
  }
  for (const base of baseline) if (!used.has(base)) unpaired.push(`${base.config.name}: no candidate`);
  return { rule, pairs, unpaired, notes, deviceDifferences: [...differences] };
}

function modeClocks(base: RunResult['modes'][number], cand: RunResult['modes'][number]): { baseline: number; candidate: number } | null {
  const [b, c] = [clockOf(base.smClockMHz), clockOf(cand.smClockMHz)];
  return b !== null && c !== null && runsKernels(cand.role) ? { baseline: b, candidate: c } : null;
}

const compared = (mode: RunResult['modes'][number]) => isCompared(mode.role);

export { isGating };

/** True when a gating pair got slower: what `compare` and the perf gate exit 1 on. */
export function hasRegression(comparison: Pick<Comparison, 'pairs'>): boolean {
  return comparison.pairs.some((p) => p.gating && p.verdict === 'slower');
}
