import { formatBytes } from '../format.js';
import type { Op, PlanKernel, Schedule } from './types.js';

/**
 * One op in words, for error messages and the printed plan: "kernel fma (fma_loop), chunk 3 of 16 (elements 0 to
 * 1023)", "H2D of "input", chunk 1 of 16 (16 MiB)".
 */
export function describeOp(op: Op, schedule: Pick<Schedule, 'ranges'>, kernels: readonly Pick<PlanKernel, 'label' | 'entry'>[]): string {
  const chunk = (c: number | null) => (c === null ? 'whole buffers' : `chunk ${c} of ${schedule.ranges.length}`);
  switch (op.kind) {
    case 'kernel': {
      const kernel = kernels.find((k) => k.label === op.kernel);
      return `kernel ${op.kernel}${kernel && kernel.entry !== op.kernel ? ` (${kernel.entry})` : ''}, ${chunk(op.chunk)} (elements ${op.first} to ${op.first + op.count - 1})`;
    }
    case 'copy':
      return `${op.direction.toUpperCase()} of "${op.buffer}", ${chunk(op.chunk)} (${formatBytes(op.bytes)})`;
    case 'peer':
      return `peer copy of "${op.buffer}" from GPU ${op.from} to GPU ${op.to}, ${chunk(op.chunk)} (${formatBytes(op.bytes)})`;
    case 'record':
      return `the record of event ${op.event}`;
    case 'wait':
      return `the wait on event ${op.event}`;
    case 'host':
      return `host function ${op.name}${op.chunk === null ? '' : `, ${chunk(op.chunk)}`}`;
    case 'gate':
      return 'the gate kernel';
    case 'empty':
      return 'an empty kernel';
  }
}

/** A mode in words, for messages: "the serial mode", "the overlapped mode (16 chunks over 4 streams, depth-first)". */
export function modeName(schedule: Pick<Schedule, 'role' | 'description'>): string {
  return schedule.role.kind === 'serial' ? 'the serial mode' : `the ${schedule.role.kind} mode (${schedule.description})`;
}
