import type { ResolvedKernel } from '../kernels/resolve.js';
import type { WorkOp } from '../kinds/index.js';
import type * as Model from '../model/schedule.js';

// A Plan is pure data: which buffers exist, and for every mode the ops in host issue order, each naming its stream.
// Device, stream and event identities are symbolic ("s0", "start"); exec/ binds them to handles. New schedules
// (a stage-per-stream topology, graph capture, host functions, priorities, several devices) are new builders over
// this same vocabulary. Its shape is the model's (model/schedule.ts), over the listed kinds' work ops.

export type { ChunkRange, EventId, EventSpec, Placement, Ring, StreamId, StreamSpec } from '../model/schedule.js';
export { scheduleDevices, scheduleOps, streamDevices } from '../model/schedule.js';
// The work ops are their stage kinds' own (src/kinds/<kind>/); the planner adds the ops that order and time them.
export type { WorkOp } from '../kinds/index.js';
export { isWorkOp } from '../kinds/index.js';

export type Op = Model.PlanOp<WorkOp>;
export type Schedule = Model.Schedule<WorkOp>;

/** What a plan keeps of a resolved kernel: enough to build launch records, nothing of its source text. */
export type PlanKernel = Pick<ResolvedKernel, 'label' | 'entry' | 'sourcePath' | 'block' | 'grid' | 'args'>;

export const planKernel = ({ label, entry, sourcePath, block, grid, args }: PlanKernel): PlanKernel => ({
  label,
  entry,
  sourcePath,
  block,
  grid,
  args,
});

export type Plan = Model.Plan<WorkOp, PlanKernel>;
