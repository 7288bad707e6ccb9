import { KERNEL_STAGES } from '../kinds/index.js';
import type { DeviceFacts } from '../result/environment.js';
import type { Stats } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import { isCompared, isGating } from '../modes.js';
import { median } from '../quantile.js';
import { type ModeRole, sameRole } from '../vocabulary.js';
import {
  asRange,
  type ChangeRange,
  confirmWithClocks,
  isRegression,
  judge,
  type Measured,
  type OverallVerdict,
  overallVerdict,
  separateRunsRule,
  type Verdict,
  type VerdictRule,
  verdictReason,
} from './rule.js';
import { shiftInterval } from './shift.js';

// `compare`: two sets of Results, paired by config and mode, each pair judged by the one rule (rule.ts) on the
// Hodges–Lehmann interval of its two runs' samples (shift.ts), confirmed in clock-normalised time.

export type { OverallVerdict, Verdict, VerdictRule };

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
  /** The band δ the rule judged against (the rule's, repeated per pair as earlier documents had it). */
  readonly needed: number;
  /**
   * B/A − 1 in time: the Hodges–Lehmann estimate and its interval at the rule's confidence; null with too few samples.
   */
  readonly interval: ChangeRange | null;
  readonly verdict: Verdict;
  /** Why, in one line: the interval against the band, the clocks, or too few samples. */
  readonly reason: string;
  /** Clock-normalised time, where NVML read both sides' SM clocks and the mode runs kernels. */
  readonly clocks: ClockCheck | null;
}

export interface Comparison {
  /** The rule every pair was judged by: the band δ, the interval's confidence and method. */
  readonly rule: VerdictRule;
  /** The comparison's one verdict, from its gating pairs (rule.ts' `overallVerdict`). */
  readonly verdict: OverallVerdict;
  readonly pairs: readonly ModeComparison[];
  /** Configs and modes present on one side only. */
  readonly unpaired: readonly string[];
  readonly notes: readonly string[];
  /** Device fields that differ between the two sides ("name: A → B"); empty when the devices match. */
  readonly deviceDifferences: readonly string[];
}

/** B's samples against A's, two separate runs, by the one rule. */
export function verdict(
  baseline: readonly number[],
  candidate: readonly number[],
  rule: VerdictRule = separateRunsRule(),
): { verdict: Verdict; measured: Measured; reason: string } {
  const measured = shiftInterval(baseline, candidate, rule.confidence);
  const judged = judge(measured, rule);
  return { verdict: judged, measured, reason: verdictReason(measured, rule, judged) };
}

/** The change of the medians, (b − a) / a: what the tables have always printed beside the interval. */
export const medianChange = (baseline: Pick<Stats, 'median'>, candidate: Pick<Stats, 'median'>): number =>
  (candidate.median - baseline.median) / baseline.median;

/** Both sides' SM clocks while a mode ran, and what clock-normalised time made of the change. */
export interface ClockCheck {
  readonly baselineMHz: number;
  readonly candidateMHz: number;
  /** The change of the medians in time × clock (cycles): what is left once the clocks are taken out. */
  readonly change: number;
  /** The verdict in time was `slower` or `faster` and in cycles `same`: the clocks explain the change. */
  readonly explains: boolean;
}

/** The middle of the SM clock range read between a mode's reps; null where NVML gave none. */
const clockOf = (range: { min: number; max: number } | null): number | null =>
  range && range.min > 0 ? (range.min + range.max) / 2 : null;

/**
 * Copies leave the SMs idle (their clock reads low and does not set their pace): only modes that run kernels are
 * normalised.
 */
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
 * An interval moved by a constant in logs: the candidate's times all scaled by exp(by). Both estimators are
 * equivariant.
 */
function shifted(measured: Measured, by: number): Measured {
  if (!measured.interval) return measured;
  const { estimate, low, high } = measured.interval;
  return { interval: { estimate: estimate + by, low: low + by, high: high + by }, reason: null };
}

/**
 * The verdict in time, confirmed in clock-normalised time where NVML read both sides' SM clocks, as nvbench's robust
 * compare does: the candidate's times are scaled by candidate clock / baseline clock (the same cycles at the
 * baseline's clock), and the same rule judges them (rule.ts' `confirmWithClocks`).
 */
export function clockConfirmedVerdict(
  baseline: readonly number[],
  candidate: readonly number[],
  clocks: { baseline: number; candidate: number } | null,
  rule: VerdictRule = separateRunsRule(),
): { verdict: Verdict; interval: ChangeRange | null; reason: string; clocks: ClockCheck | null } {
  const inTime = verdict(baseline, candidate, rule);
  const interval = inTime.measured.interval && asRange(inTime.measured.interval);
  if (!clocks) return { verdict: inTime.verdict, interval, reason: inTime.reason, clocks: null };
  const scale = clocks.candidate / clocks.baseline;
  // A difference of logs, not the log of the ratio: swapping the sides negates it exactly.
  const cycles = judge(shifted(inTime.measured, Math.log(clocks.candidate) - Math.log(clocks.baseline)), rule);
  const confirmed = confirmWithClocks(inTime.verdict, cycles);
  const [a, b] = [median(baseline), median(candidate)];
  const reason =
    confirmed.verdict === inTime.verdict
      ? inTime.reason
      : `${inTime.reason} in time, ${cycles} in clock-normalised time (SM clock ${clocks.baseline.toFixed(0)} → ${clocks.candidate.toFixed(0)} MHz)`;
  return {
    verdict: confirmed.verdict,
    interval,
    reason,
    clocks: {
      baselineMHz: clocks.baseline,
      candidateMHz: clocks.candidate,
      change: (b * scale - a) / a,
      explains: confirmed.clocksExplain,
    },
  };
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
export function compareResults(
  baseline: readonly RunResult[],
  candidate: readonly RunResult[],
  rule: VerdictRule = separateRunsRule(),
): Comparison {
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
      notes.push(
        `${cand.config.name}: the config changed since the baseline (hash ${base.config.hash} → ${cand.config.hash}).`,
      );
    }
    if (base.policy.gate !== cand.policy.gate) {
      notes.push(`${cand.config.name}: one side excludes host issue cost (--gate) and the other does not.`);
    }
    for (const d of devicesDifferences(base.devices, cand.devices)) differences.add(d);
    const same = (a: RunResult['modes'][number], b: RunResult['modes'][number]) =>
      a.device === b.device && sameRole(a.role, b.role);
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
        change: medianChange(baseMode.stats, mode.stats),
        needed: rule.band,
        ...clockConfirmedVerdict(baseMode.samplesMs, mode.samplesMs, modeClocks(baseMode, mode), rule),
      });
    }
    for (const mode of base.modes.filter(compared)) {
      if (!cand.modes.some((m) => same(m, mode))) unpaired.push(`${base.config.name} ${mode.id}: not in the candidate`);
    }
  }
  for (const base of baseline) if (!used.has(base)) unpaired.push(`${base.config.name}: no candidate`);
  return {
    rule,
    verdict: overallVerdict(pairs.filter((p) => p.gating).map((p) => p.verdict)),
    pairs,
    unpaired,
    notes,
    deviceDifferences: [...differences],
  };
}

function modeClocks(
  base: RunResult['modes'][number],
  cand: RunResult['modes'][number],
): { baseline: number; candidate: number } | null {
  const [b, c] = [clockOf(base.smClockMHz), clockOf(cand.smClockMHz)];
  return b !== null && c !== null && runsKernels(cand.role) ? { baseline: b, candidate: c } : null;
}

const compared = (mode: RunResult['modes'][number]) => isCompared(mode.role);

export { isGating };

/** True when a gating pair got slower (the verdict `slower` or `mixed`): what `compare` and the perf gate exit 1 on. */
export function hasRegression(comparison: Pick<Comparison, 'verdict'>): boolean {
  return isRegression(comparison.verdict);
}
