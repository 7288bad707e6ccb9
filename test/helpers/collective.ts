import type { Nccl } from '../../src/kinds/collective/nccl.js';
import { collectiveCalls as callsOn } from '../../src/kinds/collective/calls.js';
import { openCommunicators } from '../../src/kinds/collective/communicators.js';
import { isCollectiveOp } from '../../src/kinds/collective/spec.js';
import { type Launch, type OpenContext, schedulesHolding } from '../../src/kinds/index.js';
import { type Schedule, streamDevices } from '../../src/plan/types.js';

/** A mode's collective figures, counted on its schedule's own device as the Result counts them. */
export const collectiveCalls = (schedule: Schedule) => callsOn(schedule, streamDevices(schedule));

/**
 * The collective kind's communicators for a plan as the planner makes it: opened with what exec/ would give its
 * runtime (the plan's devices, the schedules that hold collectives, its ring, how this process meets a launch, and
 * `--nccl-dir` as `dir`).
 */
export function openCommunicatorsOf(
  nccl: Nccl,
  rt: unknown,
  plan: {
    readonly devices: readonly number[];
    readonly device: { readonly ring?: { readonly slots: number } | null | undefined };
    readonly schedules: readonly {
      readonly description: string;
      readonly issue: 'stream' | 'graph';
      readonly body: readonly { readonly kind: string }[];
    }[];
  },
  launch: Launch & { readonly signal?: AbortSignal | undefined; readonly dir?: string | undefined },
  cleanup: { push(release: () => void): void },
) {
  return openCommunicators(nccl, {
    rt: rt as OpenContext['rt'],
    cleanup,
    devices: plan.devices,
    ops: plan.schedules.flatMap((s) => s.body).filter(isCollectiveOp),
    schedules: schedulesHolding('collective', plan.schedules),
    ring: plan.device.ring ?? null,
    launch,
    flags: { ncclDir: launch.dir },
    signal: launch.signal,
  });
}
