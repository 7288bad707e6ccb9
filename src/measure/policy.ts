import type { StopRule } from '../vocabulary.js';
import { relativeMadNoise } from './stats.js';

/**
 * When to stop repeating a mode, after nvbench's stdrel criterion: warm up by count and by time, then repeat until
 * the relative noise is under a target after a minimum number of samples, or until the noise estimate itself has
 * stopped moving (more samples will not bring it down), or until the time budget runs out.
 */
export interface RepetitionPolicy {
  readonly warmup: number;
  /** Keep warming up until this much host time has passed, whatever the count. */
  readonly warmupMs: number;
  /** An exact number of timed reps, bypassing the noise rule; null for the adaptive policy. */
  readonly fixedReps: number | null;
  readonly minReps: number;
  readonly maxReps: number;
  /** Relative noise target, as a fraction (0.005 is 0.5%). */
  readonly maxNoise: number;
  /** Host-time budget for one mode's timed reps. */
  readonly maxTimeMs: number;
}

export const DEFAULT_POLICY: RepetitionPolicy = {
  warmup: 3,
  warmupMs: 0,
  fixedReps: null,
  minReps: 10,
  maxReps: 2000,
  maxNoise: 0.005,
  maxTimeMs: 3000,
};

/** The noise estimate counts as stable when it moved less than this fraction over the last window of samples. */
const STABLE_WINDOW = 16;
const STABLE_SPREAD = 0.05;

/** Decides, sample by sample, whether a mode has been measured enough. Holds the history of noise estimates. */
export class StoppingCriterion {
  private readonly noiseHistory: number[] = [];

  constructor(private readonly policy: RepetitionPolicy) {}

  /** Call after each timed sample; returns the rule that stops, or null to go on. */
  check(samples: readonly number[], elapsedMs: number): StopRule | null {
    const { policy } = this;
    const n = samples.length;
    if (policy.fixedReps !== null) return n >= policy.fixedReps ? 'fixed-reps' : null;
    const noise = relativeMadNoise(samples);
    this.noiseHistory.push(noise);
    if (n >= policy.maxReps) return 'max-reps';
    if (n >= policy.minReps && noise <= policy.maxNoise) return 'noise-target';
    if (n >= Math.max(policy.minReps, STABLE_WINDOW) && this.stable()) return 'noise-stable';
    if (elapsedMs >= policy.maxTimeMs && n >= Math.min(policy.minReps, 3)) return 'max-time';
    return null;
  }

  private stable(): boolean {
    const window = this.noiseHistory.slice(-STABLE_WINDOW);
    const max = Math.max(...window);
    const min = Math.min(...window);
    const last = window[window.length - 1] ?? 0;
    return last > 0 && (max - min) / last < STABLE_SPREAD;
  }
}

/** The config's `repetitions` (percent and seconds, as users write them) as a policy. */
export function policyFromConfig(r: {
  warmup: number;
  warmupTime: number;
  reps?: number | undefined;
  minReps: number;
  maxReps: number;
  maxNoise: number;
  maxTime: number;
}): RepetitionPolicy {
  return {
    warmup: r.warmup,
    warmupMs: r.warmupTime,
    fixedReps: r.reps ?? null,
    minReps: Math.min(r.minReps, r.maxReps),
    maxReps: r.maxReps,
    maxNoise: r.maxNoise / 100,
    maxTimeMs: r.maxTime * 1000,
  };
}
