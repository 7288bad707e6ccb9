import { gbPerSecond } from '../format.js';
import type { Bandwidth, PeerBandwidth } from '../result/probe.js';
import { RepGuard } from './guard.js';
import { DEFAULT_POLICY } from './policy.js';
import { measureSchedules } from './repeat.js';
import type { RepRunner } from './runner.js';
import { summarize } from './stats.js';

/**
 * Event-timed copy bandwidth of one host memory kind, from a runner over `bandwidthPlan`: H2D and D2H alone, and
 * (when the plan has it) both directions at once. Medians of `reps` copies after 2 warm-ups.
 */
export async function measureBandwidth(
  runner: RepRunner,
  bytes: number,
  hostMemory: Bandwidth['hostMemory'],
  reps: number,
  guard = new RepGuard(),
): Promise<Bandwidth[]> {
  const measured = await measureSchedules(runner, { ...DEFAULT_POLICY, warmup: 2, fixedReps: reps }, { guard });
  return measured.flatMap(({ schedule, gpuMs }): Bandwidth[] => {
    const { role } = schedule;
    const direction =
      role.kind === 'link'
        ? 'bidirectional'
        : role.kind === 'stage' && (role.stage === 'h2d' || role.stage === 'd2h')
          ? role.stage
          : null;
    if (!direction) return [];
    const stats = summarize(gpuMs);
    return [
      {
        bytes,
        hostMemory,
        direction,
        pieces: role.kind === 'link' ? role.copiesPerDirection : 1,
        streamsPerDirection: role.kind === 'link' ? role.streamsPerDirection : 1,
        samplesMs: gpuMs,
        stats,
        gbPerSecond: gbPerSecond(schedule.bytes.h2d + schedule.bytes.d2h, stats.median),
      },
    ];
  });
}

/**
 * Event-timed copies between two devices, from a runner over `peerBandwidthPlan`: each way alone and both ways at
 * once, medians of `reps` copies after 2 warm-ups. `path` says whether each direction went device to device.
 */
export async function measurePeerBandwidth(
  runner: RepRunner,
  bytes: number,
  reps: number,
  path: (from: number, to: number) => PeerBandwidth['path'],
  guard = new RepGuard(),
): Promise<PeerBandwidth[]> {
  const measured = await measureSchedules(runner, { ...DEFAULT_POLICY, warmup: 2, fixedReps: reps }, { guard });
  return measured.flatMap(({ schedule, gpuMs }): PeerBandwidth[] => {
    const { role } = schedule;
    if (role.kind !== 'peer') return [];
    const stats = summarize(gpuMs);
    const both = role.both === true;
    const direct = path(role.from, role.to) === 'peer' && (!both || path(role.to, role.from) === 'peer');
    return [
      {
        from: role.from,
        to: role.to,
        bytes,
        path: direct ? 'peer' : 'staged',
        samplesMs: gpuMs,
        stats,
        gbPerSecond: gbPerSecond(schedule.bytes.peer ?? 0, stats.median),
        bidirectional: both,
      },
    ];
  });
}
