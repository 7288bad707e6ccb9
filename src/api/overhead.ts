import { join } from 'node:path';
import { withDevicePlan } from '../exec/open.js';
import type { WaitStrategy } from '../exec/wait.js';
import { findKernel, readKernelSource } from '../kernels/catalog.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import { RepGuard } from '../measure/guard.js';
import { DEFAULT_POLICY } from '../measure/policy.js';
import { measureSchedules } from '../measure/repeat.js';
import { summarize } from '../measure/stats.js';
import { issuedOpCount, overheadPlan } from '../plan/overhead.js';
import { builtinKernelsDir } from '../paths.js';
import type { Stats } from '../model/mode.js';
import type { IssueCostOp } from '../vocabulary.js';

export interface OverheadRow {
  readonly op: IssueCostOp;
  readonly opsPerBatch: number;
  readonly batches: number;
  /** Host time per issued op (a host timer around the issue loop). */
  readonly hostUsPerOp: Stats;
  /** GPU time the batch's events span, per op. */
  readonly gpuUsPerOp: Stats;
}

export interface OverheadReport {
  readonly device: string;
  readonly batch: number;
  readonly rows: readonly OverheadRow[];
}

const BATCH = 500;

/**
 * Host cost per op of the timed loop: batches of tiny launches, 4-byte copies, event records (timed and not) and
 * cross-stream waits.
 */
export async function measureOverhead(options: {
  device: number;
  ops: number;
  wait: WaitStrategy;
  signal?: AbortSignal;
  timeoutMs?: number;
}): Promise<OverheadReport> {
  const source = readKernelSource(join(builtinKernelsDir(), 'scale.cu'));
  const kernel: ResolvedKernel = {
    label: 'copy32',
    entry: 'copy32',
    sourcePath: source.path,
    sourceText: source.text,
    signature: findKernel(source, 'copy32', source.path),
    options: [],
    block: 256,
    grid: 'cover',
    args: [
      { kind: 'buffer', buffer: 'src' },
      { kind: 'buffer', buffer: 'dst' },
      { kind: 'chunk-elements', type: 'uint64' },
    ],
  };
  const plan = overheadPlan(kernel, BATCH, options.device);
  const reps = Math.max(3, Math.ceil(options.ops / BATCH));
  const outcome = await withDevicePlan(plan, [kernel], { wait: options.wait }, (runner) =>
    measureSchedules(
      runner,
      { ...DEFAULT_POLICY, warmup: 2, fixedReps: reps },
      { guard: new RepGuard({ signal: options.signal, timeoutMs: options.timeoutMs }) },
    ),
  );
  const rows = outcome.value.flatMap(({ schedule, hostIssueMs, gpuMs }): OverheadRow[] => {
    if (schedule.role.kind !== 'issue-cost') return [];
    const ops = issuedOpCount(schedule);
    return [
      {
        op: schedule.role.op,
        opsPerBatch: ops,
        batches: hostIssueMs.length,
        hostUsPerOp: summarize(hostIssueMs.map((ms) => (ms * 1000) / ops)),
        gpuUsPerOp: summarize(gpuMs.map((ms) => (ms * 1000) / ops)),
      },
    ];
  });
  return { device: outcome.device.name, batch: BATCH, rows };
}
