import { gbPerSecond } from '../format.js';
import type { Bandwidth } from '../result/probe.js';
import { RepGuard } from './guard.js';
import { DEFAULT_POLICY } from './policy.js';
import { measureSchedules } from './repeat.js';
import type { RepRunner } from './runner.js';
import { summarize } from './stats.js';

/**
 * Event-timed copy bandwidth of one host memory kind, from a runner over `bandwidthPlan`: H2D and D2H alone, and
 * (when the plan has it) both directions at once. Medians of `reps` copies after 2 warm-ups.
 */
export async function measureBandwidth(runner: RepRunner, bytes: number, hostMemory: Bandwidth['hostMemory'], reps: number, guard = new RepGuard()): Promise<Bandwidth[]> {
  const measured = await measureSchedules(runner, { ...DEFAULT_POLICY, warmup: 2, fixedReps: reps }, { guard });
  return measured.flatMap(({ schedule, gpuMs }): Bandwidth[] => {
    const { role } = schedule;
    const direction = role.kind === 'link' ? 'bidirectional' : role.kind === 'stage' && role.stage !== 'kernel' ? role.stage : null;
    if (!direction) return [];
    const stats = summarize(gpuMs);
    return [{
      bytes, hostMemory, direction,
      pieces: role.kind === 'link' ? role.copiesPerDirection : 1, streamsPerDirection: role.kind === 'link' ? role.streamsPerDirection : 1,
      samplesMs: gpuMs, stats, gbPerSecond: gbPerSecond(schedule.bytes.h2d + schedule.bytes.d2h, stats.median),
    }];
  });
}
