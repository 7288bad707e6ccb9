import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import { packageRoot } from '../../src/paths.js';
import { summarize } from '../../src/measure/stats.js';
import { bestOfSweep, raceLayouts, SWEEP_ROUNDS } from '../../src/measure/sweep.js';
import { FakeRunner } from './fake-runner.js';
import { tinySweepPlan } from './tiny-sweep.js';

/** The timed reps of a recorded Result's mode on device 0. */
export function recordedReps(file: string, id: string): number[] {
  const result = JSON.parse(readFileSync(file, 'utf8')) as {
    modes: { id: string; device: number; samplesMs: number[] }[];
  };
  const mode = result.modes.find((m) => m.id === id && m.device === 0);
  if (!mode) throw new Error(`${file} has no ${id} on device 0`);
  return mode.samplesMs;
}

/** The four-H200 Results of the data-parallel knobs (comm stream at low and high priority, 16 and 32 buckets). */
export const KNOBS = join(packageRoot(), 'docs', 'measurements', '2026-11-28-h200x4-ddp-knobs');

/** mulberry32: a seeded generator, so that each replayed race is the same at every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Replayed {
  /** Per race, the index of the pool whose layout the sweep picked. */
  readonly picks: number[];
  /** Per race, the reps each layout took. */
  readonly reps: number[][];
}

/**
 * Races two layouts as `sweep` does (raceLayouts, the default policy and rounds, bestOfSweep), each rep's GPU time
 * drawn at random from a pool of recorded reps: how often a sweep picks each, had it met those layouts. Seeds 1..n.
 */
export async function replayRaces(pools: readonly (readonly number[])[], races: number): Promise<Replayed> {
  const { plan, layouts } = tinySweepPlan();
  const picked: number[] = [];
  const reps: number[][] = [];
  for (let seed = 1; seed <= races; seed++) {
    const random = seeded(seed);
    const runner = new FakeRunner(plan.schedules, plan.buffers, {
      gpuMs: (s) => {
        const pool = pools[layouts.indexOf(s)] ?? [];
        return pool[Math.floor(random() * pool.length)] ?? 0;
      },
    });
    const raced = await raceLayouts(runner, layouts, DEFAULT_POLICY, { ...SWEEP_ROUNDS, budgetMs: 60_000 });
    const best = bestOfSweep(raced.map((m, i) => ({ id: String(i), samplesMs: m.gpuMs, stats: summarize(m.gpuMs) })));
    picked.push(Number(best.mode));
    reps.push(raced.map((m) => m.gpuMs.length));
  }
  return { picks: picked, reps };
}
