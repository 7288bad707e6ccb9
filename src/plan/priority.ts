import type { PrioritySpec } from '../config/toolbox.js';
import { UsageError } from '../errors.js';
import type { Plan } from './types.js';

/** The device's stream priorities: `greatest` is the highest (numerically lowest), `least` the lowest. */
export interface PriorityRange {
  readonly least: number;
  readonly greatest: number;
}

/** A config's priority as the number cudaStreamCreateWithPriority takes on a device with this range. */
export function resolvePriority(spec: PrioritySpec, range: PriorityRange): number {
  if (spec.level === 'high') return range.greatest;
  if (spec.level === 'low') return range.least;
  return spec.level;
}

/**
 * Every numeric priority of the plan against the device's range: a usage error naming the config's place and the
 * range, raised as soon as the device is known and before anything is allocated.
 */
export function checkPriorities(plan: Pick<Plan, 'schedules'>, range: PriorityRange, device: number): void {
  for (const schedule of plan.schedules) {
    for (const stream of schedule.streams) {
      const { priority } = stream;
      if (typeof priority?.level !== 'number' || (priority.level >= range.greatest && priority.level <= range.least))
        continue;
      throw new UsageError(
        `${priority.where}: stream priority ${priority.level} is outside device ${device}'s range, ` +
          `${range.greatest} (highest) to ${range.least} (lowest).`,
        { hint: 'Use a number in that range, or high or low.' },
      );
    }
  }
}
