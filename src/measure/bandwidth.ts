import type { CudaRuntime } from '../cuda/runtime.js';
import { Cleanup } from '../exec/cleanup.js';
import { PipelineSession } from '../exec/session.js';
import { BANDWIDTH_PIECES, bandwidthPlan } from '../plan/build.js';
import type { Bandwidth, DeviceFacts } from '../result.js';
import { gbPerSecond } from '../report/format.js';
import { DEFAULT_POLICY } from './policy.js';
import { measureSchedules } from './repeat.js';
import { summarize } from './stats.js';

const DIRECTION: Record<string, Bandwidth['direction']> = { h2d: 'h2d', d2h: 'd2h', bidirectional: 'bidirectional' };

/**
 * Event-timed copy bandwidth: pinned and pageable H2D and D2H of `bytes`, and for pinned memory both directions
 * at once, each direction split into BANDWIDTH_PIECES copies over 2 streams. Medians of `reps` copies after 2 warm-ups.
 */
export function measureBandwidth(rt: CudaRuntime, device: DeviceFacts, bytes: number, reps: number): Bandwidth[] {
  const results: Bandwidth[] = [];
  for (const hostMemory of ['pinned', 'pageable'] as const) {
    const plan = bandwidthPlan(bytes, hostMemory, device.index, hostMemory === 'pinned');
    const measured = Cleanup.use((cleanup) => {
      const session = PipelineSession.open(rt, plan, device, new Map());
      cleanup.push(() => session.close());
      return measureSchedules(session, { ...DEFAULT_POLICY, warmup: 2, fixedReps: reps });
    });
    for (const { schedule, gpuMs } of measured) {
      const stats = summarize(gpuMs);
      const moved = schedule.bytes.h2d + schedule.bytes.d2h;
      const link = schedule.kind === 'link';
      results.push({
        bytes, hostMemory, direction: DIRECTION[schedule.id] ?? 'h2d',
        pieces: link ? BANDWIDTH_PIECES : 1, streamsPerDirection: link ? 2 : 1,
        samplesMs: gpuMs, stats, gbPerSecond: gbPerSecond(moved, stats.median),
      });
    }
  }
  return results;
}
