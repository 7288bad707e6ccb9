import { join } from 'node:path';
import { runPipeline } from '../exec/run-pipeline.js';
import { findKernel, readKernelSource } from '../kernels/catalog.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import { DEFAULT_POLICY } from '../measure/policy.js';
import { measureSchedules } from '../measure/repeat.js';
import { summarize } from '../measure/stats.js';
import { overheadPlan } from '../plan/overhead.js';
import { builtinKernelsDir } from '../paths.js';

export interface OverheadOptions {
  device?: number;
  ops: number;
  json?: boolean;
}

const BATCH = 500;

/** Host cost per op of the timed loop, by a host timer around the issue loop (not GPU time). */
export async function overheadCommand(options: OverheadOptions): Promise<0> {
  const source = readKernelSource(join(builtinKernelsDir(), 'scale.cu'));
  const signature = findKernel(source, 'copy32', source.path);
  const kernel: ResolvedKernel = {
    label: 'copy32', entry: 'copy32', sourcePath: source.path, sourceText: source.text, signature, options: [], block: 256, grid: 'cover',
    args: [{ kind: 'buffer', buffer: 'src' }, { kind: 'buffer', buffer: 'dst' }, { kind: 'chunk-elements', type: 'uint64' }],
  };
  const plan = overheadPlan({ label: kernel.label, entry: kernel.entry, sourcePath: kernel.sourcePath, block: 256, grid: 'cover', args: kernel.args },
    BATCH, options.device ?? 0);
  const reps = Math.max(3, Math.ceil(options.ops / BATCH));
  const outcome = runPipeline(plan, [kernel], (session) => measureSchedules(session, { ...DEFAULT_POLICY, warmup: 2, fixedReps: reps }));
  const rows = outcome.value.map(({ schedule, hostIssueMs, gpuMs }) => {
    // The schedule's own start/join/end ops are 2 of the issued ops; they cost the same order as a copy.
    const perOpUs = summarize(hostIssueMs.map((ms) => (ms * 1000) / (schedule.ops.length - 2)));
    const gpuPerOpUs = summarize(gpuMs.map((ms) => (ms * 1000) / (schedule.ops.length - 2)));
    return { op: schedule.id === 'launches' ? 'kernel launch (cudaLaunchKernelExC)' : 'copy (cudaMemcpyAsync, 4 bytes)',
      opsPerBatch: schedule.ops.length - 2, batches: hostIssueMs.length, hostUsPerOp: perOpUs, gpuUsPerOp: gpuPerOpUs };
  });
  if (options.json) {
    process.stdout.write(JSON.stringify({ device: outcome.device.name, rows }, null, 2) + '\n');
    return 0;
  }
  process.stdout.write(`Host cost per issued op on ${outcome.device.name} (host timer around the issue loop, ${BATCH} ops a batch):\n`);
  for (const r of rows) {
    process.stdout.write(`  ${r.op.padEnd(38)} median ${r.hostUsPerOp.median.toFixed(2)} µs, min ${r.hostUsPerOp.min.toFixed(2)} µs ` +
      `over ${r.batches} batches (the GPU's events span ${r.gpuUsPerOp.median.toFixed(2)} µs per op)\n`);
  }
  return 0;
}
