import { measureOverhead } from '../api/overhead.js';
import type { WaitStrategy } from '../exec/wait.js';
import { withInterrupts } from './interrupt.js';
import { writeDocuments } from './write-file.js';

export interface OverheadFlags {
  device?: number;
  ops: number;
  json?: string;
  wait: WaitStrategy;
  timeout?: number;
}

const OP_NAMES = {
  launch: 'kernel launch (cudaLaunchKernelExC)',
  copy: 'copy (cudaMemcpyAsync, 4 bytes)',
  'record-timing': 'event record, timing event',
  'record-untimed': 'event record, cudaEventDisableTiming',
  wait: "cudaStreamWaitEvent, another stream's event",
} as const;

/** Host cost per op of the timed loop, by a host timer around the issue loop (not GPU time). */
export async function overheadCommand(flags: OverheadFlags): Promise<0> {
  const report = await withInterrupts((signal) =>
    measureOverhead({
      device: flags.device ?? 0,
      ops: flags.ops,
      wait: flags.wait,
      signal,
      ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 }),
    }),
  );
  const out = await writeDocuments([
    { flag: 'json', target: flags.json, render: () => JSON.stringify(report, null, 2) + '\n' },
  ]);
  out.write(
    `Host cost per issued op on ${report.device} (host timer around the issue loop, ${report.batch} ops a batch):\n`,
  );
  for (const r of report.rows) {
    out.write(
      `  ${OP_NAMES[r.op].padEnd(40)} median ${r.hostUsPerOp.median.toFixed(2)} µs, min ${r.hostUsPerOp.min.toFixed(2)} µs ` +
        `over ${r.batches} batches (the GPU's events span ${r.gpuUsPerOp.median.toFixed(2)} µs per op)\n`,
    );
  }
  return 0;
}
