import { type DescribeContext, describeWorkOp } from '../kinds/index.js';
import { isWorkOp, type Op, type PlanKernel, type Schedule } from './types.js';

/**
 * One op in words, for error messages and the printed plan: "kernel fma (fma_loop), chunk 3 of 16 (elements 0 to
 * 1023)", "H2D of "input", chunk 1 of 16 (16 MiB)".
 */
export function describeOp(
  op: Op,
  schedule: Pick<Schedule, 'ranges'>,
  kernels: readonly Pick<PlanKernel, 'label' | 'entry'>[],
): string {
  if (isWorkOp(op)) return describeWorkOp(op, describeContext(schedule, kernels));
  switch (op.kind) {
    case 'record':
      return `the record of event ${op.event}`;
    case 'wait':
      return `the wait on event ${op.event}`;
    case 'gate':
      return 'the gate kernel';
    case 'empty':
      return 'an empty kernel';
  }
}

/** What a stage kind needs to describe its op in a schedule: the kernels' entries, and chunks in words. */
export const describeContext = (
  schedule: Pick<Schedule, 'ranges'>,
  kernels: readonly Pick<PlanKernel, 'label' | 'entry'>[],
): DescribeContext => ({
  kernels,
  chunk: (c) => (c === null ? 'whole buffers' : `chunk ${c} of ${schedule.ranges.length}`),
});

/** A mode in words, for messages: "the serial mode", "the overlapped mode (16 chunks over 4 streams, depth-first)". */
export function modeName(schedule: Pick<Schedule, 'role' | 'description'>): string {
  return schedule.role.kind === 'serial'
    ? 'the serial mode'
    : `the ${schedule.role.kind} mode (${schedule.description})`;
}
